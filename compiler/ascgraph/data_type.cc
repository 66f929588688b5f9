#include "compiler/ascgraph/data_type.h"

#include <algorithm>
#include <cctype>

namespace tilesmith::ascgraph {
namespace {

using hlo::PrimitiveType;

struct GeType {
  int64_t number;
  std::string_view name;
  PrimitiveType type;
};

// The subset of ge::DataType that tilesmith computes with (spec, "Wire schema").
constexpr GeType kGeTypes[] = {
    {0, "FLOAT", PrimitiveType::kF32},   {1, "FLOAT16", PrimitiveType::kF16},
    {2, "INT8", PrimitiveType::kS8},     {3, "INT32", PrimitiveType::kS32},
    {4, "UINT8", PrimitiveType::kU8},    {6, "INT16", PrimitiveType::kS16},
    {7, "UINT16", PrimitiveType::kU16},  {8, "UINT32", PrimitiveType::kU32},
    {9, "INT64", PrimitiveType::kS64},   {10, "UINT64", PrimitiveType::kU64},
    {11, "DOUBLE", PrimitiveType::kF64}, {12, "BOOL", PrimitiveType::kPred},
    {27, "BF16", PrimitiveType::kBF16},
};

const GeType* FindByNumber(int64_t number) {
  for (const GeType& entry : kGeTypes) {
    if (entry.number == number) return &entry;
  }
  return nullptr;
}

}  // namespace

Expected<PrimitiveType> PrimitiveTypeFromGe(int64_t ge_type) {
  if (const GeType* entry = FindByNumber(ge_type)) return entry->type;
  std::string known;
  for (const GeType& entry : kGeTypes) {
    if (!known.empty()) known += ", ";
    known += std::string(entry.name) + " " + std::to_string(entry.number);
  }
  return Unimplemented("data type " + std::to_string(ge_type) +
                       " is not supported (supported: " + known + ")");
}

std::optional<int64_t> GeDataTypeFromName(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::string_view key = upper;
  if (key.starts_with("DT_")) key.remove_prefix(3);
  for (const GeType& entry : kGeTypes) {
    if (entry.name == key) return entry.number;
  }
  return std::nullopt;
}

std::optional<int64_t> GeDataTypeOf(PrimitiveType type) {
  for (const GeType& entry : kGeTypes) {
    if (entry.type == type) return entry.number;
  }
  return std::nullopt;
}

std::string GeDataTypeName(int64_t ge_type) {
  if (const GeType* entry = FindByNumber(ge_type)) return std::string(entry->name);
  return "DataType(" + std::to_string(ge_type) + ")";
}

}  // namespace tilesmith::ascgraph
