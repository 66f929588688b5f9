// compare: every direction, with the comparison type choosing what is compared. FLOAT is
// IEEE (NaN is unordered: only NE holds); TOTALORDER orders floats by their sign-magnitude
// bits, -NaN < -inf < … < -0 < +0 < … < inf < +NaN, as XLA does; SIGNED and UNSIGNED read
// integer bits one way or the other; complex values compare for EQ and NE.
#include <array>
#include <functional>
#include <limits>

#include "compiler/hlo/evaluator_elementwise.h"

namespace tilesmith::hlo::eval {
namespace {

// Maps each element to a key with `key` and compares the keys in `direction`.
template <typename S, typename KeyFn>
void CompareKeys(ComparisonDirection direction, const Literal& lhs, const Literal& rhs,
                 Literal& out, KeyFn key) {
  auto run = [&](auto holds) {
    MapElements<S, uint8_t>(lhs, rhs, out,
                            [&](S a, S b) -> uint8_t { return holds(key(a), key(b)) ? 1 : 0; });
  };
  switch (direction) {
    case ComparisonDirection::kEq:
      return run(std::equal_to<>{});
    case ComparisonDirection::kNe:
      return run(std::not_equal_to<>{});
    case ComparisonDirection::kLt:
      return run(std::less<>{});
    case ComparisonDirection::kLe:
      return run(std::less_equal<>{});
    case ComparisonDirection::kGt:
      return run(std::greater<>{});
    case ComparisonDirection::kGe:
      return run(std::greater_equal<>{});
  }
}

// Sign-magnitude bits as a two's complement integer that orders like the total order.
template <typename V>
auto TotalOrderKey(V value) {
  using Int = std::conditional_t<sizeof(V) == 4, int32_t, int64_t>;
  Int bits = std::bit_cast<Int>(value);
  return bits < 0 ? bits ^ std::numeric_limits<Int>::max() : bits;
}

// The same key on the bits of a one-byte type, so that NaN payloads order as XLA orders
// them. fnuz types have no -0: negative magnitudes move up by one to close the gap, and
// their one NaN (the -0 pattern) orders above everything.
std::array<int32_t, 256> Narrow8TotalOrderKeys(PrimitiveType type) {
  const FloatFormat& format = FormatOf(type);
  bool has_sign = format.special != FloatFormat::Special::kUnsignedExponentOnly;
  bool no_negative_zero = format.special == FloatFormat::Special::kFiniteNanNegZero;
  uint32_t sign_bit = has_sign ? 1u << (format.total_bits() - 1) : 0;
  std::array<int32_t, 256> keys;
  for (uint32_t bits = 0; bits < keys.size(); ++bits) {
    uint32_t value_bits = bits & ((1u << format.total_bits()) - 1);
    bool negative = (value_bits & sign_bit) != 0;
    int32_t magnitude = static_cast<int32_t>(value_bits & ~sign_bit);
    if (no_negative_zero && negative) {
      if (magnitude == 0) {
        keys[bits] = static_cast<int32_t>(sign_bit);
        continue;
      }
      magnitude -= 1;
    }
    keys[bits] = negative ? ~magnitude : magnitude;
  }
  return keys;
}

Status CompareFloats(ComparisonDirection direction, bool total_order, const Literal& lhs,
                     const Literal& rhs, Literal& out) {
  PrimitiveType type = lhs.element_type();
  if (total_order && IsNarrowFloat(type) && BitWidth(type) <= 8) {
    std::array<int32_t, 256> keys = Narrow8TotalOrderKeys(type);
    CompareKeys<uint8_t>(direction, lhs, rhs, out, [&](uint8_t x) { return keys[x]; });
    return OkStatus();
  }
  return VisitFloatCodec(type, [&](const auto& codec) -> Status {
    using S = typename std::decay_t<decltype(codec)>::Storage;
    if (total_order) {
      // f32 and f64 as stored; bf16 and f16 decode exactly, payloads included.
      CompareKeys<S>(direction, lhs, rhs, out, [&](S x) { return TotalOrderKey(codec.Decode(x)); });
    } else {
      CompareKeys<S>(direction, lhs, rhs, out, [&](S x) { return codec.Decode(x); });
    }
    return OkStatus();
  });
}

Status CompareInts(ComparisonDirection direction, ComparisonType comparison, const Literal& lhs,
                   const Literal& rhs, Literal& out) {
  return VisitIntType(lhs.element_type(), [&](auto type) -> Status {
    using S = typename decltype(type)::Storage;
    if (comparison == ComparisonType::kSigned && !type.kSigned) {
      CompareKeys<S>(direction, lhs, rhs, out, [&](S x) { return type.SignedValue(x); });
    } else if (comparison == ComparisonType::kUnsigned && type.kSigned) {
      CompareKeys<S>(direction, lhs, rhs, out, [&](S x) { return type.UnsignedBits(x); });
    } else {
      // Stored values are sign- or zero-extended, so they order like the values.
      CompareKeys<S>(direction, lhs, rhs, out, [](S x) { return x; });
    }
    return OkStatus();
  });
}

// EQ and NE on both parts; under TOTALORDER the parts compare by their total-order keys,
// so NaN equals a NaN of the same sign and -0 differs from +0.
template <typename C>
Status CompareComplex(const HloInstruction& instruction, ComparisonDirection direction,
                      bool total_order, const Literal& lhs, const Literal& rhs, Literal& out) {
  if (direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
    return Unimplemented("compare of complex values with direction=" +
                         std::string(ComparisonDirectionName(direction)) + " in '" +
                         instruction.name() + "'");
  }
  bool want_equal = direction == ComparisonDirection::kEq;
  MapElements<C, uint8_t>(lhs, rhs, out, [&](C a, C b) -> uint8_t {
    bool equal = total_order ? TotalOrderKey(a.real()) == TotalOrderKey(b.real()) &&
                                   TotalOrderKey(a.imag()) == TotalOrderKey(b.imag())
                             : a == b;
    return equal == want_equal ? 1 : 0;
  });
  return OkStatus();
}

}  // namespace

Status EvaluateCompare(const HloInstruction& instruction, const Literal& lhs, const Literal& rhs,
                       Literal& out) {
  const HloAttributes& attributes = instruction.attributes();
  if (!attributes.direction) return InvalidArgument("compare needs a direction");
  ComparisonDirection direction = *attributes.direction;
  ComparisonType comparison = attributes.comparison_type;
  bool total_order = comparison == ComparisonType::kTotalOrder;
  PrimitiveType type = lhs.element_type();
  switch (type) {
    case PrimitiveType::kC64:
      return CompareComplex<std::complex<float>>(instruction, direction, total_order, lhs, rhs,
                                                 out);
    case PrimitiveType::kC128:
      return CompareComplex<std::complex<double>>(instruction, direction, total_order, lhs, rhs,
                                                  out);
    default:
      break;
  }
  if (IsFloatingPoint(type)) return CompareFloats(direction, total_order, lhs, rhs, out);
  if (IsIntegral(type) || type == PrimitiveType::kPred) {
    return CompareInts(direction, comparison, lhs, rhs, out);
  }
  return UnsupportedOp(HloOpcode::kCompare, type);
}

}  // namespace tilesmith::hlo::eval
