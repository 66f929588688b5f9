#include "compiler/hlo/primitive_type.h"

#include <array>

#include "compiler/hlo/name_hash.h"

namespace tilesmith::hlo {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
};

constexpr std::array<TypeInfo, 33> kTypes = {{
    {PrimitiveType::kInvalid, "invalid", 0},
    {PrimitiveType::kPred, "pred", 1},
    {PrimitiveType::kS1, "s1", 1},
    {PrimitiveType::kS2, "s2", 2},
    {PrimitiveType::kS4, "s4", 4},
    {PrimitiveType::kS8, "s8", 8},
    {PrimitiveType::kS16, "s16", 16},
    {PrimitiveType::kS32, "s32", 32},
    {PrimitiveType::kS64, "s64", 64},
    {PrimitiveType::kU1, "u1", 1},
    {PrimitiveType::kU2, "u2", 2},
    {PrimitiveType::kU4, "u4", 4},
    {PrimitiveType::kU8, "u8", 8},
    {PrimitiveType::kU16, "u16", 16},
    {PrimitiveType::kU32, "u32", 32},
    {PrimitiveType::kU64, "u64", 64},
    {PrimitiveType::kF16, "f16", 16},
    {PrimitiveType::kBF16, "bf16", 16},
    {PrimitiveType::kF32, "f32", 32},
    {PrimitiveType::kF64, "f64", 64},
    {PrimitiveType::kF8E5M2, "f8e5m2", 8},
    {PrimitiveType::kF8E4M3, "f8e4m3", 8},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {PrimitiveType::kF8E3M4, "f8e3m4", 8},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 4},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8},
    {PrimitiveType::kC64, "c64", 64},
    {PrimitiveType::kC128, "c128", 128},
    {PrimitiveType::kToken, "token", 0},
    {PrimitiveType::kTuple, "tuple", 0},
}};

const TypeInfo& Info(PrimitiveType type) { return kTypes[static_cast<size_t>(type)]; }

constexpr std::array<PrimitiveType, 30> kArrayTypes = [] {
  std::array<PrimitiveType, 30> types{};
  for (size_t i = 0; i < types.size(); ++i) types[i] = kTypes[i + 1].type;
  return types;
}();

}  // namespace

std::span<const PrimitiveType> AllArrayTypes() { return kArrayTypes; }

std::string_view PrimitiveTypeName(PrimitiveType type) { return Info(type).name; }

std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name) {
  // Called for every shape the parser reads: a hash and a probe or two, not a scan.
  static const auto by_name = [] {
    StaticNameMap<PrimitiveType, 128> map;
    static_assert(kTypes.size() * 2 <= 128);
    for (const TypeInfo& info : kTypes) {
      if (info.type != PrimitiveType::kInvalid && info.type != PrimitiveType::kTuple) {
        map.Add(info.name, info.type);
      }
    }
    return map;
  }();
  return by_name.Find(name);
}

int BitWidth(PrimitiveType type) { return Info(type).bits; }

int DefaultStorageBits(PrimitiveType type) {
  return type == PrimitiveType::kPred ? 8 : BitWidth(type);
}

int UnpackedByteWidth(PrimitiveType type) {
  int bits = BitWidth(type);
  return bits < 8 ? 1 : bits / 8;
}

bool IsArrayType(PrimitiveType type) {
  return type != PrimitiveType::kInvalid && type != PrimitiveType::kToken &&
         type != PrimitiveType::kTuple;
}

bool IsSignedIntegral(PrimitiveType type) {
  return type >= PrimitiveType::kS1 && type <= PrimitiveType::kS64;
}

bool IsUnsignedIntegral(PrimitiveType type) {
  return type >= PrimitiveType::kU1 && type <= PrimitiveType::kU64;
}

bool IsIntegral(PrimitiveType type) { return IsSignedIntegral(type) || IsUnsignedIntegral(type); }

bool IsFloatingPoint(PrimitiveType type) {
  return type >= PrimitiveType::kF16 && type <= PrimitiveType::kF8E8M0FNU;
}

bool IsNarrowFloat(PrimitiveType type) { return IsFloatingPoint(type) && BitWidth(type) < 32; }

bool IsComplex(PrimitiveType type) {
  return type == PrimitiveType::kC64 || type == PrimitiveType::kC128;
}

PrimitiveType ComplexComponentType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kC64:
      return PrimitiveType::kF32;
    case PrimitiveType::kC128:
      return PrimitiveType::kF64;
    default:
      return PrimitiveType::kInvalid;
  }
}

}  // namespace tilesmith::hlo
