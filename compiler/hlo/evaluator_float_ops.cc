// Unary and binary ops on real floating-point values. f32 and f64 compute in their own
// type; the narrow types decode to f32, compute, and round back once per op (evaluator.h).
#include <limits>

#include "compiler/hlo/evaluator_elementwise.h"

namespace tilesmith::hlo::eval {
namespace {

template <typename V>
V Sign(V x) {
  return std::isnan(x) || x == 0 ? x : std::copysign(V{1}, x);
}

// XLA's ReducePrecision, on the bits of the computing type: round the mantissa to
// `mantissa_bits` (nearest even; a carry correctly bumps the exponent), then send
// exponents outside the reduced range to signed infinity or signed zero (denormals of
// the reduced format flush to zero). A NaN stays NaN unless no mantissa bit is left to
// hold it, in which case XLA returns +inf.
template <typename V>
V ReducePrecision(V value, int64_t exponent_bits, int64_t mantissa_bits) {
  using Uint = std::conditional_t<sizeof(V) == 4, uint32_t, uint64_t>;
  constexpr int kMantissa = std::numeric_limits<V>::digits - 1;
  constexpr int kExponent = 8 * sizeof(V) - kMantissa - 1;
  if (std::isnan(value)) return mantissa_bits > 0 ? value : std::numeric_limits<V>::infinity();
  Uint bits = std::bit_cast<Uint>(value);
  if (mantissa_bits < kMantissa) {
    int dropped = kMantissa - static_cast<int>(mantissa_bits);
    Uint last_kept = Uint{1} << dropped;
    Uint rounding_bias = (last_kept >> 1) - 1 + ((bits >> dropped) & 1);
    bits = (bits + rounding_bias) & ~(last_kept - 1);
  }
  if (exponent_bits < kExponent) {
    constexpr Uint kSignMask = Uint{1} << (8 * sizeof(V) - 1);
    constexpr Uint kExponentMask = ((Uint{1} << kExponent) - 1) << kMantissa;
    constexpr Uint kBias = (Uint{1} << (kExponent - 1)) - 1;
    Uint reduced_bias = (Uint{1} << (exponent_bits - 1)) - 1;
    Uint exponent = bits & kExponentMask;
    Uint signed_zero = bits & kSignMask;
    if (exponent > ((kBias + reduced_bias) << kMantissa)) {
      bits = signed_zero | kExponentMask;
    } else if (exponent <= ((kBias - reduced_bias) << kMantissa)) {
      bits = signed_zero;
    }
  }
  return std::bit_cast<V>(bits);
}

template <typename Codec>
Status UnaryLoop(const HloInstruction& instruction, const Codec& codec, const Literal& in,
                 Literal& out) {
  using V = typename Codec::Value;
  auto map = [&](auto fn) -> Status {
    MapFloats(codec, in, out, fn);
    return OkStatus();
  };
  switch (instruction.opcode()) {
    case HloOpcode::kAbs:
      return map([](V x) { return std::fabs(x); });
    case HloOpcode::kNegate:
      return map([](V x) { return -x; });
    case HloOpcode::kSign:
      return map([](V x) { return Sign(x); });
    case HloOpcode::kExp:
      return map([](V x) { return std::exp(x); });
    case HloOpcode::kExpm1:
      return map([](V x) { return std::expm1(x); });
    case HloOpcode::kLog:
      return map([](V x) { return std::log(x); });
    case HloOpcode::kLog1p:
      return map([](V x) { return std::log1p(x); });
    case HloOpcode::kTanh:
      return map([](V x) { return std::tanh(x); });
    case HloOpcode::kLogistic:
      return map([](V x) { return V{1} / (V{1} + std::exp(-x)); });
    case HloOpcode::kErf:
      return map([](V x) { return std::erf(x); });
    case HloOpcode::kSqrt:
      return map([](V x) { return std::sqrt(x); });
    case HloOpcode::kRsqrt:
      return map([](V x) { return V{1} / std::sqrt(x); });
    case HloOpcode::kCbrt:
      return map([](V x) { return std::cbrt(x); });
    case HloOpcode::kSin:
      return map([](V x) { return std::sin(x); });
    case HloOpcode::kCos:
      return map([](V x) { return std::cos(x); });
    case HloOpcode::kTan:
      return map([](V x) { return std::tan(x); });
    case HloOpcode::kAcos:
      return map([](V x) { return std::acos(x); });
    case HloOpcode::kAcosh:
      return map([](V x) { return std::acosh(x); });
    case HloOpcode::kAsin:
      return map([](V x) { return std::asin(x); });
    case HloOpcode::kAsinh:
      return map([](V x) { return std::asinh(x); });
    case HloOpcode::kAtanh:
      return map([](V x) { return std::atanh(x); });
    case HloOpcode::kCosh:
      return map([](V x) { return std::cosh(x); });
    case HloOpcode::kSinh:
      return map([](V x) { return std::sinh(x); });
    case HloOpcode::kFloor:
      return map([](V x) { return std::floor(x); });
    case HloOpcode::kCeil:
      return map([](V x) { return std::ceil(x); });
    case HloOpcode::kRoundNearestAfz:
      return map([](V x) { return std::round(x); });
    case HloOpcode::kRoundNearestEven:
      // The default floating-point environment rounds to nearest, ties to even.
      return map([](V x) { return std::nearbyint(x); });
    case HloOpcode::kReducePrecision: {
      int64_t exponent_bits = instruction.attributes().exponent_bits;
      int64_t mantissa_bits = instruction.attributes().mantissa_bits;
      if (exponent_bits < 1 || mantissa_bits < 0) {
        return InvalidArgument("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
      }
      return map([=](V x) { return ReducePrecision(x, exponent_bits, mantissa_bits); });
    }
    case HloOpcode::kIsFinite: {
      using S = typename Codec::Storage;
      MapElements<S, uint8_t>(in, out, [&](S x) { return std::isfinite(codec.Decode(x)) ? 1 : 0; });
      return OkStatus();
    }
    default:
      return UnsupportedOp(instruction.opcode(), in.element_type());
  }
}

template <typename Codec>
Status BinaryLoop(HloOpcode opcode, const Codec& codec, const Literal& lhs, const Literal& rhs,
                  Literal& out) {
  using V = typename Codec::Value;
  auto map = [&](auto fn) -> Status {
    MapFloats(codec, lhs, rhs, out, fn);
    return OkStatus();
  };
  switch (opcode) {
    case HloOpcode::kAdd:
      return map([](V a, V b) { return a + b; });
    case HloOpcode::kSubtract:
      return map([](V a, V b) { return a - b; });
    case HloOpcode::kMultiply:
      return map([](V a, V b) { return a * b; });
    case HloOpcode::kDivide:
      return map([](V a, V b) { return a / b; });
    case HloOpcode::kRemainder:
      return map([](V a, V b) { return std::fmod(a, b); });
    case HloOpcode::kMaximum:
      return map([](V a, V b) { return FloatMaximum(a, b); });
    case HloOpcode::kMinimum:
      return map([](V a, V b) { return FloatMinimum(a, b); });
    case HloOpcode::kPower:
      return map([](V a, V b) { return std::pow(a, b); });
    case HloOpcode::kAtan2:
      return map([](V a, V b) { return std::atan2(a, b); });
    default:
      return UnsupportedOp(opcode, lhs.element_type());
  }
}

}  // namespace

Status EvaluateFloatUnary(const HloInstruction& instruction, const Literal& operand, Literal& out) {
  return VisitFloatCodec(operand.element_type(), [&](const auto& codec) {
    return UnaryLoop(instruction, codec, operand, out);
  });
}

Status EvaluateFloatBinary(HloOpcode opcode, const Literal& lhs, const Literal& rhs, Literal& out) {
  return VisitFloatCodec(lhs.element_type(), [&](const auto& codec) {
    return BinaryLoop(opcode, codec, lhs, rhs, out);
  });
}

}  // namespace tilesmith::hlo::eval
