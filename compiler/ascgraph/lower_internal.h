// Private to compiler/ascgraph: the pieces of the lowering shared by lower.cc (structure:
// data movement, reductions, graph inputs and outputs) and lower_elementwise.cc (the
// elementwise recipes of ops.cc).
#pragma once

#include <string>
#include <vector>

#include "compiler/ascgraph/graph.h"
#include "compiler/ascgraph/hlo_text.h"
#include "compiler/ascgraph/ops.h"
#include "support/status.h"

namespace tilesmith::ascgraph::internal {

/// HLO literal text of `value` in `type`: `true`, `-3`, `0.5`, `-inf`.
std::string ScalarLiteral(hlo::PrimitiveType type, double value);

/// The smallest / largest value of `type` as a literal (`-inf`, `-2147483648`, …).
std::string LowestLiteral(hlo::PrimitiveType type);
std::string HighestLiteral(hlo::PrimitiveType type);

/// `value` as pred: itself if it is pred, else `value != 0`.
HloValue ToPred(HloTextBuilder& builder, const HloValue& value);

/// `value` converted to `type` (itself when it already has that type).
HloValue Convert(HloTextBuilder& builder, const HloValue& value, hlo::PrimitiveType type);

/// Emits elementwise `op` of `node` over `inputs`, which already have the output's dims;
/// the result has `output_type`.
Expected<HloValue> EmitElementwise(HloTextBuilder& builder, const OpInfo& op, const Node& node,
                                   const std::vector<HloValue>& inputs,
                                   hlo::PrimitiveType output_type);

}  // namespace tilesmith::ascgraph::internal
