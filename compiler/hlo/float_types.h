// Bit-exact encoding of the floating-point types narrower than f32 (f16, bf16, the f8
// family, f4e2m1fn, f8e8m0fnu). Conversion from f32 rounds to nearest, ties to even, and
// handles overflow, NaN and signed zero the way ml_dtypes (and so XLA) does.
#pragma once

#include <cstdint>

#include "compiler/hlo/primitive_type.h"

namespace tilesmith::hlo {

/// Describes a binary floating-point format; used for the narrow types.
struct FloatFormat {
  /// How a format spells NaN and infinity.
  enum class Special {
    kIeee,                  ///< All-ones exponent: zero mantissa is inf, any other is NaN.
    kFiniteNanAllOnes,      ///< No inf; only all-ones exponent and mantissa is NaN ("fn").
    kFiniteNanNegZero,      ///< No inf, no -0; the -0 pattern is the only NaN ("fnuz").
    kFiniteNoNan,           ///< Neither inf nor NaN; overflow saturates (f4e2m1fn).
    kUnsignedExponentOnly,  ///< No sign, no mantissa, no zero; all-ones is NaN (e8m0fnu).
  };
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Special special;

  int total_bits() const;
  /// Largest finite value.
  double max_finite() const;
};

/// The format of a narrow float type; the type must satisfy `IsNarrowFloat`.
const FloatFormat& FormatOf(PrimitiveType type);

/// Bits of the nearest value of `type` to `value` (round to nearest, ties to even).
uint32_t EncodeNarrowFloat(PrimitiveType type, float value);

/// The exact value of the bit pattern `bits` of `type`, as f32 (every narrow value fits).
float DecodeNarrowFloat(PrimitiveType type, uint32_t bits);

/// `value` rounded to the precision and range of `type`, returned as f32.
float RoundToNarrowFloat(PrimitiveType type, float value);

/// Fast paths for the two 16-bit types, bit-identical to the general functions. f16 keeps
/// a NaN's top payload bits as NumPy does (bf16 and the f8 types make a canonical NaN).
uint16_t FloatToBf16Bits(float value);
float Bf16BitsToFloat(uint16_t bits);
uint16_t FloatToF16Bits(float value);
float F16BitsToFloat(uint16_t bits);

/// Rounds an f64 to the nearest f32 value would lose the single rounding guarantee for
/// narrow types; this rounds an f64 directly to `type` (used by f64 -> bf16 converts).
uint32_t EncodeNarrowFloatFromDouble(PrimitiveType type, double value);

}  // namespace tilesmith::hlo
