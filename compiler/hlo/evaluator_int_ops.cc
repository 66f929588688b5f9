// Unary and binary ops on integers and pred. Arithmetic runs modulo 2^64 and wraps to the
// type's width (two's complement), with XLA's answers where C++ has none: x / 0 is all
// ones, x % 0 is x, INT_MIN / -1 is INT_MIN, shifts by the width or more saturate.
#include <algorithm>
#include <bit>

#include "compiler/hlo/evaluator_elementwise.h"

namespace tilesmith::hlo::eval {
namespace {

constexpr uint64_t kAllOnes = ~uint64_t{0};

template <typename T>
bool IsNegative(T x) {
  if constexpr (std::is_signed_v<T>) return x < 0;
  return false;
}

template <typename T>
bool IsMinusOne(T x) {
  if constexpr (std::is_signed_v<T>) return x == -1;
  return false;
}

// A negative exponent gives 1 for base 1 and 0 otherwise — XLA's rule, base -1 included.
// Otherwise square-and-multiply, wrapping as it goes.
template <typename T>
uint64_t Power(T base, T exponent) {
  if (IsNegative(exponent)) return base == 1 ? 1 : 0;
  uint64_t result = 1;
  uint64_t factor = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e != 0; e >>= 1) {
    if ((e & 1) != 0) result *= factor;
    factor *= factor;
  }
  return result;
}

template <typename T>
Status UnaryLoop(HloOpcode opcode, IntType<T> type, const Literal& in, Literal& out) {
  auto map = [&](auto fn) -> Status {
    MapElements<T, T>(in, out, [&](T x) { return type.Wrap(fn(x)); });
    return OkStatus();
  };
  switch (opcode) {
    case HloOpcode::kNegate:
      return map([](T x) { return uint64_t{0} - static_cast<uint64_t>(x); });
    case HloOpcode::kAbs:  // abs(INT_MIN) wraps back to INT_MIN
      return map([](T x) {
        uint64_t bits = static_cast<uint64_t>(x);
        return IsNegative(x) ? uint64_t{0} - bits : bits;
      });
    case HloOpcode::kSign:
      return map([](T x) -> uint64_t { return IsNegative(x) ? kAllOnes : x != 0 ? 1 : 0; });
    case HloOpcode::kNot:
      return map([](T x) { return ~static_cast<uint64_t>(x); });
    case HloOpcode::kPopulationCount:
      return map([&](T x) -> uint64_t { return std::popcount(type.UnsignedBits(x)); });
    case HloOpcode::kClz:
      return map([&](T x) -> uint64_t {
        return std::countl_zero(type.UnsignedBits(x)) - (64 - type.bits);
      });
    default:
      return UnsupportedOp(opcode, in.element_type());
  }
}

template <typename T>
Status BinaryLoop(HloOpcode opcode, IntType<T> type, const Literal& lhs, const Literal& rhs,
                  Literal& out) {
  auto map = [&](auto fn) -> Status {
    MapElements<T, T>(lhs, rhs, out, [&](T a, T b) { return type.Wrap(fn(a, b)); });
    return OkStatus();
  };
  auto bits = [](T x) { return static_cast<uint64_t>(x); };
  // Shift amounts are read as unsigned, so a negative amount is out of range.
  auto out_of_range = [&](T amount) { return type.UnsignedBits(amount) >= uint64_t(type.bits); };
  switch (opcode) {
    case HloOpcode::kAdd:
      return map([&](T a, T b) { return bits(a) + bits(b); });
    case HloOpcode::kSubtract:
      return map([&](T a, T b) { return bits(a) - bits(b); });
    case HloOpcode::kMultiply:
      return map([&](T a, T b) { return bits(a) * bits(b); });
    case HloOpcode::kDivide:
      return map([&](T a, T b) {
        if (b == 0) return kAllOnes;
        if (IsMinusOne(b)) return uint64_t{0} - bits(a);  // INT_MIN / -1 wraps
        return static_cast<uint64_t>(static_cast<T>(a / b));
      });
    case HloOpcode::kRemainder:
      return map([&](T a, T b) {
        if (b == 0) return bits(a);
        if (IsMinusOne(b)) return uint64_t{0};
        return static_cast<uint64_t>(static_cast<T>(a % b));
      });
    case HloOpcode::kMaximum:
      return map([&](T a, T b) { return bits(std::max(a, b)); });
    case HloOpcode::kMinimum:
      return map([&](T a, T b) { return bits(std::min(a, b)); });
    case HloOpcode::kAnd:
      return map([&](T a, T b) { return bits(a) & bits(b); });
    case HloOpcode::kOr:
      return map([&](T a, T b) { return bits(a) | bits(b); });
    case HloOpcode::kXor:
      return map([&](T a, T b) { return bits(a) ^ bits(b); });
    case HloOpcode::kShiftLeft:
      return map([&](T a, T b) { return out_of_range(b) ? 0 : bits(a) << type.UnsignedBits(b); });
    case HloOpcode::kShiftRightLogical:
      return map([&](T a, T b) {
        return out_of_range(b) ? 0 : type.UnsignedBits(a) >> type.UnsignedBits(b);
      });
    case HloOpcode::kShiftRightArithmetic:
      return map([&](T a, T b) {
        int64_t value = type.SignedValue(a);
        if (out_of_range(b)) return value < 0 ? kAllOnes : 0;
        return static_cast<uint64_t>(value >> type.UnsignedBits(b));
      });
    case HloOpcode::kPower:
      return map([](T a, T b) { return Power(a, b); });
    default:
      return UnsupportedOp(opcode, lhs.element_type());
  }
}

}  // namespace

Status EvaluateIntUnary(HloOpcode opcode, const Literal& operand, Literal& out) {
  return VisitIntType(operand.element_type(),
                      [&](auto type) { return UnaryLoop(opcode, type, operand, out); });
}

Status EvaluateIntBinary(HloOpcode opcode, const Literal& lhs, const Literal& rhs, Literal& out) {
  return VisitIntType(lhs.element_type(),
                      [&](auto type) { return BinaryLoop(opcode, type, lhs, rhs, out); });
}

}  // namespace tilesmith::hlo::eval
