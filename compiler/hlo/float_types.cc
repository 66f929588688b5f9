#include "compiler/hlo/float_types.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

namespace tilesmith::hlo {
namespace {

using Special = FloatFormat::Special;

constexpr FloatFormat kF16{5, 10, 15, Special::kIeee};
constexpr FloatFormat kBF16{8, 7, 127, Special::kIeee};
constexpr FloatFormat kF8E5M2{5, 2, 15, Special::kIeee};
constexpr FloatFormat kF8E4M3{4, 3, 7, Special::kIeee};
constexpr FloatFormat kF8E4M3FN{4, 3, 7, Special::kFiniteNanAllOnes};
constexpr FloatFormat kF8E4M3B11FNUZ{4, 3, 11, Special::kFiniteNanNegZero};
constexpr FloatFormat kF8E3M4{3, 4, 3, Special::kIeee};
constexpr FloatFormat kF8E5M2FNUZ{5, 2, 16, Special::kFiniteNanNegZero};
constexpr FloatFormat kF8E4M3FNUZ{4, 3, 8, Special::kFiniteNanNegZero};
constexpr FloatFormat kF4E2M1FN{2, 1, 1, Special::kFiniteNoNan};
constexpr FloatFormat kF8E8M0FNU{8, 0, 127, Special::kUnsignedExponentOnly};

bool HasSign(const FloatFormat& f) { return f.special != Special::kUnsignedExponentOnly; }
bool HasSubnormals(const FloatFormat& f) { return f.special != Special::kUnsignedExponentOnly; }

uint32_t SignBit(const FloatFormat& f) {
  return HasSign(f) ? 1u << (f.exponent_bits + f.mantissa_bits) : 0u;
}
uint32_t ExponentMask(const FloatFormat& f) {
  return ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
}
uint32_t MantissaMask(const FloatFormat& f) { return (1u << f.mantissa_bits) - 1; }

// The bit pattern a NaN input becomes, matching ml_dtypes (sign kept where it exists).
uint32_t NanBits(const FloatFormat& f, bool negative) {
  uint32_t sign = negative ? SignBit(f) : 0;
  switch (f.special) {
    case Special::kIeee:
      return sign | ExponentMask(f) | (1u << (f.mantissa_bits - 1));
    case Special::kFiniteNanAllOnes:
      return sign | ExponentMask(f) | MantissaMask(f);
    case Special::kFiniteNanNegZero:
      return SignBit(f);
    case Special::kFiniteNoNan:
      // No NaN to produce: ml_dtypes yields a zero of the opposite sign.
      return negative ? 0u : SignBit(f);
    case Special::kUnsignedExponentOnly:
      return ExponentMask(f);
  }
  return 0;
}

// What a value too large in magnitude becomes.
uint32_t OverflowBits(const FloatFormat& f, bool negative) {
  uint32_t sign = negative ? SignBit(f) : 0;
  switch (f.special) {
    case Special::kIeee:
      return sign | ExponentMask(f);
    case Special::kFiniteNoNan:
      return sign | ExponentMask(f) | MantissaMask(f);
    default:
      return NanBits(f, negative);
  }
}

int MinNormalExponent(const FloatFormat& f) { return HasSubnormals(f) ? 1 - f.bias : -f.bias; }

// Bits of a finite, non-negative value that is exactly representable in `f`.
uint32_t EncodeExact(const FloatFormat& f, double value) {
  if (value == 0) return 0;
  int exponent;
  std::frexp(value, &exponent);
  exponent -= 1;  // value = 1.m * 2^exponent
  if (exponent < MinNormalExponent(f)) {
    return static_cast<uint32_t>(std::ldexp(value, f.mantissa_bits - MinNormalExponent(f)));
  }
  uint32_t exponent_field = static_cast<uint32_t>(exponent + f.bias);
  uint32_t mantissa =
      static_cast<uint32_t>(std::ldexp(value, f.mantissa_bits - exponent)) & MantissaMask(f);
  return (exponent_field << f.mantissa_bits) | mantissa;
}

}  // namespace

int FloatFormat::total_bits() const {
  return (special == Special::kUnsignedExponentOnly ? 0 : 1) + exponent_bits + mantissa_bits;
}

double FloatFormat::max_finite() const {
  int all_ones = (1 << exponent_bits) - 1;
  switch (special) {
    case Special::kIeee:
      return std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), all_ones - 1 - bias);
    case Special::kFiniteNanAllOnes:
      return std::ldexp(2.0 - std::ldexp(1.0, 1 - mantissa_bits), all_ones - bias);
    case Special::kFiniteNanNegZero:
    case Special::kFiniteNoNan:
      return std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), all_ones - bias);
    case Special::kUnsignedExponentOnly:
      return std::ldexp(1.0, all_ones - 1 - bias);
  }
  return 0;
}

const FloatFormat& FormatOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16:
      return kF16;
    case PrimitiveType::kBF16:
      return kBF16;
    case PrimitiveType::kF8E5M2:
      return kF8E5M2;
    case PrimitiveType::kF8E4M3:
      return kF8E4M3;
    case PrimitiveType::kF8E4M3FN:
      return kF8E4M3FN;
    case PrimitiveType::kF8E4M3B11FNUZ:
      return kF8E4M3B11FNUZ;
    case PrimitiveType::kF8E3M4:
      return kF8E3M4;
    case PrimitiveType::kF8E5M2FNUZ:
      return kF8E5M2FNUZ;
    case PrimitiveType::kF8E4M3FNUZ:
      return kF8E4M3FNUZ;
    case PrimitiveType::kF4E2M1FN:
      return kF4E2M1FN;
    case PrimitiveType::kF8E8M0FNU:
      return kF8E8M0FNU;
    default:
      assert(false && "FormatOf: not a narrow float type");
      return kF16;
  }
}

uint32_t EncodeNarrowFloatFromDouble(PrimitiveType type, double value) {
  const FloatFormat& f = FormatOf(type);
  bool negative = std::signbit(value);
  if (std::isnan(value)) {
    if (type == PrimitiveType::kF16) {
      // NumPy keeps the top 10 payload bits of an f64 NaN (and marks an empty one).
      uint64_t payload = (std::bit_cast<uint64_t>(value) >> 42) & MantissaMask(f);
      return (negative ? SignBit(f) : 0u) | ExponentMask(f) | (payload == 0 ? 1u : payload);
    }
    return NanBits(f, negative);
  }
  if (!HasSign(f) && (negative || value == 0)) return NanBits(f, negative);
  double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return OverflowBits(f, negative);
  // fnuz types have no -0 (that pattern is their NaN), so zeros lose their sign there.
  bool unsigned_zero = f.special == Special::kFiniteNanNegZero;
  uint32_t sign = negative ? SignBit(f) : 0;
  if (magnitude == 0) return unsigned_zero ? 0 : sign;
  if (!HasSubnormals(f) && magnitude < std::ldexp(1.0, 1 - f.bias)) {
    // Below e8m0's second-smallest value ml_dtypes takes its denormal path, which sends
    // everything above 2^-127 up to 2^-126 and the rest to 2^-127 (e8m0 has no zero).
    return magnitude > std::ldexp(1.0, -f.bias) ? 1u : 0u;
  }

  int exponent;
  std::frexp(magnitude, &exponent);
  exponent = std::max(exponent - 1, MinNormalExponent(f));
  double quantum = std::ldexp(1.0, exponent - f.mantissa_bits);
  // Division by a power of two is exact; nearbyint rounds half to even.
  double rounded = std::nearbyint(magnitude / quantum) * quantum;
  if (rounded > f.max_finite()) return OverflowBits(f, negative);
  if (rounded == 0) return unsigned_zero ? 0 : sign;
  return sign | EncodeExact(f, rounded);
}

uint32_t EncodeNarrowFloat(PrimitiveType type, float value) {
  if (type == PrimitiveType::kBF16) return FloatToBf16Bits(value);
  if (type == PrimitiveType::kF16) return FloatToF16Bits(value);
  return EncodeNarrowFloatFromDouble(type, value);
}

float DecodeNarrowFloat(PrimitiveType type, uint32_t bits) {
  if (type == PrimitiveType::kBF16) return Bf16BitsToFloat(static_cast<uint16_t>(bits));
  if (type == PrimitiveType::kF16) return F16BitsToFloat(static_cast<uint16_t>(bits));
  const FloatFormat& f = FormatOf(type);
  bool negative = (bits & SignBit(f)) != 0;
  uint32_t exponent_field = (bits & ExponentMask(f)) >> f.mantissa_bits;
  uint32_t mantissa = bits & MantissaMask(f);
  uint32_t all_ones = (1u << f.exponent_bits) - 1;
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  switch (f.special) {
    case Special::kIeee:
      if (exponent_field == all_ones) {
        if (mantissa != 0) return negative ? -kNan : kNan;
        return negative ? -std::numeric_limits<float>::infinity()
                        : std::numeric_limits<float>::infinity();
      }
      break;
    case Special::kFiniteNanAllOnes:
      if (exponent_field == all_ones && mantissa == MantissaMask(f)) {
        return negative ? -kNan : kNan;
      }
      break;
    case Special::kFiniteNanNegZero:
      if (bits == SignBit(f)) return kNan;
      break;
    case Special::kFiniteNoNan:
      break;
    case Special::kUnsignedExponentOnly:
      if (exponent_field == all_ones) return kNan;
      return std::ldexp(1.0f, static_cast<int>(exponent_field) - f.bias);
  }
  double magnitude;
  if (exponent_field == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (1u << f.mantissa_bits)),
                           static_cast<int>(exponent_field) - f.bias - f.mantissa_bits);
  }
  return static_cast<float>(negative ? -magnitude : magnitude);
}

float RoundToNarrowFloat(PrimitiveType type, float value) {
  if (type == PrimitiveType::kBF16) return Bf16BitsToFloat(FloatToBf16Bits(value));
  if (type == PrimitiveType::kF16) return F16BitsToFloat(FloatToF16Bits(value));
  return DecodeNarrowFloat(type, EncodeNarrowFloat(type, value));
}

uint16_t FloatToBf16Bits(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7FC0u);
  // Round to nearest even on the 16 dropped bits; overflow carries into inf correctly.
  uint32_t rounding_bias = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding_bias) >> 16);
}

float Bf16BitsToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t FloatToF16Bits(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t magnitude_bits = bits & 0x7FFFFFFFu;
  if (magnitude_bits > 0x7F800000u) {
    // NaN: like NumPy (the f16 reference), keep the payload's top 10 bits, quiet or not,
    // and set the lowest mantissa bit if none survive so that the result stays a NaN.
    uint16_t payload = static_cast<uint16_t>((magnitude_bits >> 13) & 0x3FFu);
    return sign | 0x7C00u | (payload == 0 ? 1u : payload);
  }
  if (magnitude_bits >= 0x477FF000u) return sign | 0x7C00u;  // rounds to >= 65520: inf
  if (magnitude_bits >= 0x38800000u) {                       // normal f16 (>= 2^-14)
    uint32_t rounding_bias = 0xFFFu + ((magnitude_bits >> 13) & 1u);
    return sign | static_cast<uint16_t>((magnitude_bits - 0x38000000u + rounding_bias) >> 13);
  }
  // Subnormal or zero: scale so the f16 quantum 2^-24 becomes 1 and round to even. The
  // product is exact and below 2^11, so nearbyint sees the true tie cases.
  float scaled = std::fabs(value) * 16777216.0f;  // 2^24
  return sign | static_cast<uint16_t>(std::nearbyint(scaled));
}

float F16BitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace tilesmith::hlo
