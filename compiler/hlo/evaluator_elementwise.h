// Shared machinery of the elementwise evaluator: codecs between stored elements and the
// type ops compute in, integer wrapping, typed loops, and the entry point of each op
// family. Private to compiler/hlo.
#pragma once

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "compiler/hlo/evaluator_internal.h"
#include "compiler/hlo/float_types.h"

namespace tilesmith::hlo::eval {

static_assert(std::endian::native == std::endian::little,
              "bitcast-convert and the codecs assume little-endian storage");

/// An Unimplemented error naming the op and the element type it was asked to handle.
std::unexpected<Error> UnsupportedOp(HloOpcode opcode, PrimitiveType type);

// ---------------------------------------------------------------------------------------
// Real floating-point types. A codec turns one stored element into the computing type
// (`Value`) and a computed value back into storage, rounding once.

/// f32 and f64: stored and computed as themselves.
template <typename T>
struct IdentityCodec {
  using Storage = T;
  using Value = T;
  Value Decode(Storage bits) const { return bits; }
  Storage Encode(Value value) const { return value; }
};

/// bf16 through its bit-exact fast paths.
struct Bf16Codec {
  using Storage = uint16_t;
  using Value = float;
  Value Decode(Storage bits) const { return Bf16BitsToFloat(bits); }
  Storage Encode(Value value) const { return FloatToBf16Bits(value); }
};

/// f16 through its bit-exact fast paths.
struct F16Codec {
  using Storage = uint16_t;
  using Value = float;
  Value Decode(Storage bits) const { return F16BitsToFloat(bits); }
  Storage Encode(Value value) const { return FloatToF16Bits(value); }
};

/// The f8 types and f4e2m1fn, through tables built once per type. Rounding an f32 to a
/// format with at most 6 mantissa bits (these have 0 to 4) depends only on the f32's top
/// 16 bits and whether any lower bit is set, so a 2^17-entry table gives exactly
/// `EncodeNarrowFloat`.
struct Narrow8Codec {
  using Storage = uint8_t;
  using Value = float;
  const float* decode;    // 256 entries, by stored byte
  const uint8_t* encode;  // 2^17 entries, by EncodeKey
  Value Decode(Storage bits) const { return decode[bits]; }
  Storage Encode(Value value) const { return encode[EncodeKey(value)]; }
  static uint32_t EncodeKey(float value) {
    uint32_t bits = std::bit_cast<uint32_t>(value);
    return (bits >> 16) << 1 | ((bits & 0xFFFFu) != 0 ? 1u : 0u);
  }
};

/// The codec of a narrow type stored in one byte (`IsNarrowFloat`, not bf16 or f16).
Narrow8Codec MakeNarrow8Codec(PrimitiveType type);

/// Calls `fn(codec)` with the codec of a real floating-point `type`; every call of `fn`
/// must return the same type.
template <typename Fn>
auto VisitFloatCodec(PrimitiveType type, Fn&& fn) {
  switch (type) {
    case PrimitiveType::kF32:
      return fn(IdentityCodec<float>{});
    case PrimitiveType::kF64:
      return fn(IdentityCodec<double>{});
    case PrimitiveType::kBF16:
      return fn(Bf16Codec{});
    case PrimitiveType::kF16:
      return fn(F16Codec{});
    default:
      return fn(MakeNarrow8Codec(type));
  }
}

/// XLA's maximum: NaN if either operand is NaN, and +0 above -0.
template <typename V>
V FloatMaximum(V a, V b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// XLA's minimum: NaN if either operand is NaN, and -0 below +0.
template <typename V>
V FloatMinimum(V a, V b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// ---------------------------------------------------------------------------------------
// Integers and pred. Elements are stored in `T` (int8 for s1..s8, uint8 for u1..u8 and
// pred, native otherwise); ops compute modulo 2^64 and wrap back to `bits`.

/// An integer element type; pred is the unsigned 1-bit integer (so `not` is logical).
template <typename T>
struct IntType {
  using Storage = T;
  static constexpr bool kSigned = std::is_signed_v<T>;
  int bits;

  uint64_t Mask() const { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
  /// The low `bits` of `value` as stored: sign-extended for signed types.
  T Wrap(uint64_t value) const {
    if (bits < 64) {
      value &= Mask();
      if (kSigned && (value >> (bits - 1)) != 0) value |= ~Mask();
    }
    return static_cast<T>(value);
  }
  /// The low `bits` of an element, zero-extended (its unsigned reading).
  uint64_t UnsignedBits(T value) const { return static_cast<uint64_t>(value) & Mask(); }
  /// The element read as a signed `bits`-wide integer.
  int64_t SignedValue(T value) const {
    return static_cast<int64_t>(IntType<std::make_signed_t<T>>{bits}.Wrap(UnsignedBits(value)));
  }
};

/// Calls `fn(IntType<T>{bits})` for an integer or pred `type`.
template <typename Fn>
auto VisitIntType(PrimitiveType type, Fn&& fn) {
  int bits = BitWidth(type);
  switch (type) {
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kS8:
      return fn(IntType<int8_t>{bits});
    case PrimitiveType::kS16:
      return fn(IntType<int16_t>{bits});
    case PrimitiveType::kS32:
      return fn(IntType<int32_t>{bits});
    case PrimitiveType::kS64:
      return fn(IntType<int64_t>{bits});
    case PrimitiveType::kU16:
      return fn(IntType<uint16_t>{bits});
    case PrimitiveType::kU32:
      return fn(IntType<uint32_t>{bits});
    case PrimitiveType::kU64:
      return fn(IntType<uint64_t>{bits});
    default:  // pred, u1..u8
      return fn(IntType<uint8_t>{bits});
  }
}

// ---------------------------------------------------------------------------------------
// Loops over logical element order. Operands may have other layouts than the result; the
// literal holds elements in logical order either way.

/// out[i] = fn(in[i]) over the stored elements.
template <typename In, typename Out, typename Fn>
void MapElements(const Literal& in, Literal& out, Fn fn) {
  const In* a = in.data<In>();
  Out* result = out.data<Out>();
  int64_t count = out.element_count();
  for (int64_t i = 0; i < count; ++i) result[i] = fn(a[i]);
}

/// out[i] = fn(lhs[i], rhs[i]) over the stored elements.
template <typename In, typename Out, typename Fn>
void MapElements(const Literal& lhs, const Literal& rhs, Literal& out, Fn fn) {
  const In* a = lhs.data<In>();
  const In* b = rhs.data<In>();
  Out* result = out.data<Out>();
  int64_t count = out.element_count();
  for (int64_t i = 0; i < count; ++i) result[i] = fn(a[i], b[i]);
}

/// Decodes each element, applies `fn` in the computing type and encodes the result.
template <typename Codec, typename Fn>
void MapFloats(const Codec& codec, const Literal& in, Literal& out, Fn fn) {
  using S = typename Codec::Storage;
  MapElements<S, S>(in, out, [&](S x) { return codec.Encode(fn(codec.Decode(x))); });
}

template <typename Codec, typename Fn>
void MapFloats(const Codec& codec, const Literal& lhs, const Literal& rhs, Literal& out, Fn fn) {
  using S = typename Codec::Storage;
  MapElements<S, S>(lhs, rhs, out,
                    [&](S a, S b) { return codec.Encode(fn(codec.Decode(a), codec.Decode(b))); });
}

/// 0 for an operand given as a scalar where the result is not one (select's predicate,
/// clamp's bounds), else 1: the operand's element i is at `i * step`.
inline int64_t BroadcastStep(const Literal& operand) { return operand.shape().rank() == 0 ? 0 : 1; }

// ---------------------------------------------------------------------------------------
// Op families. Each fills `out`, already allocated with the instruction's shape, or
// returns Unimplemented naming what it cannot do.

/// Unary ops on real floats, including is-finite and reduce-precision.
/// (evaluator_float_ops.cc)
Status EvaluateFloatUnary(const HloInstruction& instruction, const Literal& operand, Literal& out);
/// Binary arithmetic on real floats (add … atan2). (evaluator_float_ops.cc)
Status EvaluateFloatBinary(HloOpcode opcode, const Literal& lhs, const Literal& rhs, Literal& out);

/// Unary ops on integers and pred. (evaluator_int_ops.cc)
Status EvaluateIntUnary(HloOpcode opcode, const Literal& operand, Literal& out);
/// Binary ops on integers and pred: arithmetic, bitwise, shifts. (evaluator_int_ops.cc)
Status EvaluateIntBinary(HloOpcode opcode, const Literal& lhs, const Literal& rhs, Literal& out);

/// Unary ops on c64/c128, including abs, real and imag. (evaluator_complex_ops.cc)
Status EvaluateComplexUnary(HloOpcode opcode, const Literal& operand, Literal& out);
/// Binary ops on c64/c128, and `complex` (f32/f64 pairs to complex).
/// (evaluator_complex_ops.cc)
Status EvaluateComplexBinary(HloOpcode opcode, const Literal& lhs, const Literal& rhs,
                             Literal& out);

/// compare, all directions and comparison types. (evaluator_compare.cc)
Status EvaluateCompare(const HloInstruction& instruction, const Literal& lhs, const Literal& rhs,
                       Literal& out);

/// convert between any two element types. (evaluator_convert.cc)
Status EvaluateConvert(const Literal& operand, Literal& out);
/// bitcast-convert: the same bits, little-endian, re-split into the result type.
/// (evaluator_convert.cc)
Status EvaluateBitcastConvert(const Literal& operand, Literal& out);

}  // namespace tilesmith::hlo::eval
