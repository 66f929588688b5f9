#include "tuner/verify.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "compiler/hlo/literal_compare.h"

namespace tilesmith::tuner {
namespace {

void Flatten(const hlo::Literal& value, std::vector<const hlo::Literal*>& outputs) {
  if (value.shape().IsTuple()) {
    for (const hlo::Literal& element : value.tuple_elements()) Flatten(element, outputs);
  } else {
    outputs.push_back(&value);
  }
}

// The narrowest float type computed in the operand cone of `instruction` (itself included).
hlo::PrimitiveType NarrowestComputed(const hlo::HloInstruction& root, hlo::PrimitiveType start) {
  hlo::PrimitiveType narrowest = start;
  std::unordered_set<const hlo::HloInstruction*> seen;
  std::vector<const hlo::HloInstruction*> stack = {&root};
  while (!stack.empty()) {
    const hlo::HloInstruction* instruction = stack.back();
    stack.pop_back();
    if (!seen.insert(instruction).second) continue;
    hlo::HloOpcode opcode = instruction->opcode();
    if (opcode == hlo::HloOpcode::kParameter || opcode == hlo::HloOpcode::kConstant) continue;
    if (instruction->shape().IsArray()) {
      narrowest = hlo::LessPrecise(narrowest, instruction->shape().element_type());
    }
    for (const hlo::HloInstruction* operand : instruction->operands()) stack.push_back(operand);
  }
  return narrowest;
}

}  // namespace

std::vector<hlo::PrimitiveType> OutputPrecisions(const hlo::HloComputation& fusion) {
  std::vector<hlo::PrimitiveType> precisions;
  const hlo::HloInstruction* root = fusion.root();
  std::vector<const hlo::HloInstruction*> outputs;
  if (root->shape().IsTuple() && root->opcode() == hlo::HloOpcode::kTuple) {
    for (const hlo::HloInstruction* operand : root->operands()) outputs.push_back(operand);
  } else {
    outputs.push_back(root);
  }
  for (const hlo::HloInstruction* output : outputs) {
    if (!output->shape().IsArray()) return {};  // nested tuples: each array's own type
    precisions.push_back(NarrowestComputed(*output, output->shape().element_type()));
  }
  return precisions;
}

std::vector<const hlo::Literal*> FlattenOutputs(const hlo::Literal& value) {
  std::vector<const hlo::Literal*> outputs;
  Flatten(value, outputs);
  return outputs;
}

OutputComparison CompareOutputs(std::span<const hlo::Literal> actual,
                                std::span<const hlo::Literal* const> expected,
                                int64_t reassociated_terms,
                                std::span<const hlo::PrimitiveType> precisions) {
  OutputComparison result;
  if (actual.size() != expected.size()) {
    result.matches = false;
    result.first_mismatch = std::to_string(actual.size()) + " outputs where the reference has " +
                            std::to_string(expected.size());
    return result;
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    std::optional<hlo::PrimitiveType> precision;
    if (precisions.size() == actual.size()) precision = precisions[i];
    hlo::Comparison comparison =
        hlo::CompareLiterals(actual[i], *expected[i], reassociated_terms, precision);
    result.largest_error = std::max(result.largest_error, comparison.largest_error);
    result.relative_tolerance = std::max(result.relative_tolerance, comparison.tolerance.relative);
    result.absolute_tolerance = std::max(result.absolute_tolerance, comparison.tolerance.absolute);
    result.mismatches += comparison.mismatches;
    if (!comparison.matches && result.matches) {
      result.first_mismatch = "output " + std::to_string(i) + " " + comparison.first_mismatch;
    }
    result.matches = result.matches && comparison.matches;
  }
  return result;
}

}  // namespace tilesmith::tuner
