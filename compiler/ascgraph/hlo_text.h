// Private to compiler/ascgraph: writes the HLO text of a lowered AscGraph. The lowering
// generates text and hands it to hlo::ParseHloModule, which checks every shape against its
// operands, so a lowering bug surfaces as a located parse error instead of a bad module.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/primitive_type.h"

namespace tilesmith::ascgraph::internal {

/// An array value of the fused computation: the instruction that defines it, its element
/// type, its logical dims and its layout (empty: the default).
struct HloValue {
  std::string name;
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
  std::vector<int64_t> dims;
  std::vector<int64_t> minor_to_major;
};

/// `f32[4,5]`, with `{0,1}` appended when the value has a layout.
std::string ShapeText(const HloValue& value);

/// `{0,2}`-style list.
std::string ListText(const std::vector<int64_t>& values);

/// The shortest text that reads back as `value` in HLO literals (`0.5`, `-inf`, `nan`).
std::string NumberText(double value);

/// Builds the fused computation instruction by instruction, plus the reducer computations it
/// calls, and wraps it in a module whose entry calls it as a kLoop fusion.
class HloTextBuilder {
 public:
  /// Later instructions carry `metadata={op_name="…"}` naming this AscGraph node, and are
  /// named after it.
  void SetNode(std::string_view node_name);

  /// `name = shape opcode(operands), attributes`; returns the new value.
  HloValue Add(hlo::PrimitiveType type, const std::vector<int64_t>& dims, std::string_view opcode,
               const std::vector<HloValue>& operands, std::string_view attributes = "",
               const std::vector<int64_t>& minor_to_major = {});

  /// `parameter(number)` with the given buffer shape and layout.
  HloValue Parameter(int64_t number, hlo::PrimitiveType type, const std::vector<int64_t>& dims,
                     const std::vector<int64_t>& minor_to_major);

  /// A scalar constant broadcast to `dims` (just the scalar when `dims` is empty).
  HloValue Splat(hlo::PrimitiveType type, const std::vector<int64_t>& dims, std::string literal);

  /// The name of a computation `(a, b) -> opcode(a, b)` over scalars of `type`, written once.
  std::string Reducer(hlo::PrimitiveType type, std::string_view opcode);

  /// The module text: reducers, the fused computation named `fusion_name` whose ROOT is
  /// `roots[0]` (a tuple of `roots` when there are several), and an ENTRY that passes its
  /// parameters to a kLoop fusion.
  std::string Finish(std::string_view module_name, std::string_view fusion_name,
                     const std::vector<HloValue>& roots);

 private:
  std::string UniqueName(std::string_view hint);

  std::string node_name_;
  std::string name_hint_ = "v";
  std::set<std::string> names_;
  std::vector<std::pair<std::string, std::string>> lines_;  // (name, text after "name = ")
  std::vector<std::string> parameter_shapes_;               // by parameter number
  std::map<std::string, std::string> reducers_;             // "f32 add" -> computation text
  std::vector<std::string> reducer_texts_;
};

}  // namespace tilesmith::ascgraph::internal
