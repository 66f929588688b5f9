// GE's data type numbering (the `dtype` of AscGraph tensors) and tilesmith's element types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/hlo/primitive_type.h"
#include "support/status.h"

namespace tilesmith::ascgraph {

/// The element type of GE data type `ge_type` (FLOAT 0 -> f32, FLOAT16 1 -> f16, …,
/// BF16 27 -> bf16); an error names the number when tilesmith has no such type.
Expected<hlo::PrimitiveType> PrimitiveTypeFromGe(int64_t ge_type);

/// GE's number for a type name: "FLOAT16", "DT_FLOAT16" or "float16" -> 1.
std::optional<int64_t> GeDataTypeFromName(std::string_view name);

/// The GE number of an element type, or nullopt when GE has none (f8 types, s4, …).
std::optional<int64_t> GeDataTypeOf(hlo::PrimitiveType type);

/// "FLOAT16" for 1; "DataType(N)" for numbers GE does not define here.
std::string GeDataTypeName(int64_t ge_type);

}  // namespace tilesmith::ascgraph
