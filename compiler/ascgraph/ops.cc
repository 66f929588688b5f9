#include "compiler/ascgraph/ops.h"

#include <algorithm>
#include <set>

namespace tilesmith::ascgraph {
namespace {

using K = OpKind;
using R = Recipe;
using T = TypeRule;

// Names and arities follow the AscIR registry of the graph engine; "Ln" also answers to
// "Log", and the reductions "Max"/"Min" double as the elementwise "Maximum"/"Minimum"
// when given two inputs.
constexpr OpInfo kOps[] = {
    {"Data", K::kData, 0, 0},
    {"Output", K::kOutput, 1, 1},
    {"Scalar", K::kScalar, 0, 0},
    {"Load", K::kMove, 1, 1},
    {"Store", K::kMove, 1, 1},
    {"Nop", K::kMove, 1, 1},
    {"Ub2ub", K::kMove, 1, 1},
    {"Broadcast", K::kBroadcast, 1, 1},
    {"Transpose", K::kTranspose, 1, 1},
    {"Concat", K::kConcat, 1, -1},
    {"Cast", K::kElementwise, 1, 1, R::kCast, "", T::kAny},
    // Unary.
    {"Abs", K::kElementwise, 1, 1, R::kHlo, "abs"},
    {"Exp", K::kElementwise, 1, 1, R::kHlo, "exponential"},
    {"Ln", K::kElementwise, 1, 1, R::kHlo, "log"},
    {"Log", K::kElementwise, 1, 1, R::kHlo, "log"},
    {"Sqrt", K::kElementwise, 1, 1, R::kHlo, "sqrt"},
    {"Rsqrt", K::kElementwise, 1, 1, R::kHlo, "rsqrt"},
    {"Neg", K::kElementwise, 1, 1, R::kHlo, "negate"},
    {"Tanh", K::kElementwise, 1, 1, R::kHlo, "tanh"},
    {"Erf", K::kElementwise, 1, 1, R::kHlo, "erf"},
    {"Sign", K::kElementwise, 1, 1, R::kHlo, "sign"},
    {"Sigmoid", K::kElementwise, 1, 1, R::kHlo, "logistic"},
    {"Reciprocal", K::kElementwise, 1, 1, R::kReciprocal},
    {"Relu", K::kElementwise, 1, 1, R::kRelu},
    {"LeakyRelu", K::kElementwise, 1, 1, R::kLeakyRelu},
    {"Gelu", K::kElementwise, 1, 1, R::kGelu},
    {"Isnan", K::kElementwise, 1, 1, R::kPredicate, "isnan", T::kAny},
    {"IsInf", K::kElementwise, 1, 1, R::kPredicate, "isinf", T::kAny},
    {"IsFinite", K::kElementwise, 1, 1, R::kPredicate, "is-finite", T::kAny},
    {"LogicalNot", K::kElementwise, 1, 1, R::kLogical, "not", T::kAny},
    // Binary.
    {"Add", K::kElementwise, 2, 2, R::kHlo, "add"},
    {"Sub", K::kElementwise, 2, 2, R::kHlo, "subtract"},
    {"Mul", K::kElementwise, 2, 2, R::kHlo, "multiply"},
    {"Div", K::kElementwise, 2, 2, R::kHlo, "divide"},
    {"Maximum", K::kElementwise, 2, 2, R::kHlo, "maximum"},
    {"Minimum", K::kElementwise, 2, 2, R::kHlo, "minimum"},
    {"Max", K::kElementwise, 2, 2, R::kHlo, "maximum"},
    {"Min", K::kElementwise, 2, 2, R::kHlo, "minimum"},
    {"Pow", K::kElementwise, 2, 2, R::kHlo, "power"},
    {"BitwiseAnd", K::kElementwise, 2, 2, R::kHlo, "and"},
    {"TrueDiv", K::kElementwise, 2, 2, R::kTrueDiv, "", T::kInputsAgree},
    {"FloorDiv", K::kElementwise, 2, 2, R::kFloorDiv},
    {"Remainder", K::kElementwise, 2, 2, R::kRemainder},
    {"Axpy", K::kElementwise, 2, 2, R::kAxpy},
    {"LogicalAnd", K::kElementwise, 2, 2, R::kLogical, "and", T::kAny},
    {"LogicalOr", K::kElementwise, 2, 2, R::kLogical, "or", T::kAny},
    {"Eq", K::kElementwise, 2, 2, R::kCompare, "EQ", T::kInputsAgree},
    {"Ne", K::kElementwise, 2, 2, R::kCompare, "NE", T::kInputsAgree},
    {"Gt", K::kElementwise, 2, 2, R::kCompare, "GT", T::kInputsAgree},
    {"Ge", K::kElementwise, 2, 2, R::kCompare, "GE", T::kInputsAgree},
    {"Lt", K::kElementwise, 2, 2, R::kCompare, "LT", T::kInputsAgree},
    {"Le", K::kElementwise, 2, 2, R::kCompare, "LE", T::kInputsAgree},
    // Ternary.
    {"ClipByValue", K::kElementwise, 3, 3, R::kClip},
    {"Select", K::kElementwise, 3, 3, R::kSelect, "", T::kFirstIsControl},
    {"Where", K::kElementwise, 3, 3, R::kSelect, "", T::kFirstIsControl},
    {"MaskedFill", K::kElementwise, 3, 3, R::kMaskedFill, "", T::kSecondIsControl},
    // Reductions (kept dims: repeats 1 on the reduced axes of the output).
    {"Sum", K::kReduce, 1, 1, R::kHlo, "add"},
    {"Max", K::kReduce, 1, 1, R::kHlo, "maximum"},
    {"Min", K::kReduce, 1, 1, R::kHlo, "minimum"},
    {"Prod", K::kReduce, 1, 1, R::kHlo, "multiply"},
    {"Mean", K::kReduce, 1, 1, R::kMean, "add"},
    {"Any", K::kReduce, 1, 1, R::kLogical, "or"},
    {"All", K::kReduce, 1, 1, R::kLogical, "and"},
};

bool Accepts(const OpInfo& op, size_t inputs) {
  return static_cast<int>(inputs) >= op.min_inputs &&
         (op.max_inputs < 0 || static_cast<int>(inputs) <= op.max_inputs);
}

std::string ArityText(const OpInfo& op) {
  if (op.max_inputs < 0) return "at least " + std::to_string(op.min_inputs);
  return std::to_string(op.min_inputs);
}

}  // namespace

Expected<const OpInfo*> LookupOp(std::string_view type, size_t input_count) {
  std::string arities;
  for (const OpInfo& op : kOps) {
    if (op.name != type) continue;
    if (Accepts(op, input_count)) return &op;
    arities += (arities.empty() ? "" : " or ") + ArityText(op);
  }
  if (arities.empty()) {
    return Unimplemented("op '" + std::string(type) +
                         "' is not supported by the lowering (supported: " + SupportedOpNames() +
                         ")");
  }
  return InvalidArgument("op '" + std::string(type) + "' takes " + arities + " input" +
                         (arities == "1" ? "" : "s") + ", got " + std::to_string(input_count));
}

std::string SupportedOpNames() {
  std::set<std::string_view> names;
  for (const OpInfo& op : kOps) names.insert(op.name);
  std::string text;
  for (std::string_view name : names) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

}  // namespace tilesmith::ascgraph
