// Element types of HLO arrays: their names in HLO text, widths and classes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tilesmith::hlo {

/// Every element type of XLA's shape grammar, plus TUPLE and TOKEN as in `xla::PrimitiveType`.
enum class PrimitiveType : uint8_t {
  kInvalid,
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E5M2,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E3M4,
  kF8E5M2FNUZ,
  kF8E4M3FNUZ,
  kF4E2M1FN,
  kF8E8M0FNU,
  kC64,
  kC128,
  kToken,
  kTuple,
};

/// All array element types (not token, tuple or invalid), in enum order.
std::span<const PrimitiveType> AllArrayTypes();

/// The lowercase name used in HLO text ("f32", "bf16", "f8e4m3fn", "pred", "token").
std::string_view PrimitiveTypeName(PrimitiveType type);

/// Parses a name as written in HLO text; nullopt if it names no type.
std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name);

/// Width of one value in bits: 1 for pred, 4 for s4 and f4e2m1fn, 64 for c64, 0 for
/// token and tuple.
int BitWidth(PrimitiveType type);

/// Bits one element occupies in memory when the layout does not say otherwise
/// (`E(n)`): the bit width, except pred which is stored as one byte.
int DefaultStorageBits(PrimitiveType type);

/// Bytes of the unpacked in-memory value used by `Literal`: sub-byte types take a whole
/// byte, pred one byte, c64 eight.
int UnpackedByteWidth(PrimitiveType type);

bool IsArrayType(PrimitiveType type);
bool IsSignedIntegral(PrimitiveType type);
bool IsUnsignedIntegral(PrimitiveType type);
/// Signed or unsigned integer (not pred).
bool IsIntegral(PrimitiveType type);
/// Any real floating-point type, including the f8/f4 types.
bool IsFloatingPoint(PrimitiveType type);
/// A floating-point type narrower than 32 bits (bf16, f16, f8*, f4*): evaluated in f32
/// and rounded back after every operation.
bool IsNarrowFloat(PrimitiveType type);
bool IsComplex(PrimitiveType type);
/// The real component type of a complex type (c64 -> f32, c128 -> f64).
PrimitiveType ComplexComponentType(PrimitiveType type);

}  // namespace tilesmith::hlo
