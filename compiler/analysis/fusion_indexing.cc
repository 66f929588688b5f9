#include "compiler/analysis/fusion_indexing.h"

#include <algorithm>
#include <string>

#include "compiler/analysis/op_indexing.h"

namespace tilesmith::analysis {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// `get-tuple-element` of a `tuple` skips the tuple: the edge goes straight to the element.
const HloInstruction* TupleElementSource(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kGetTupleElement) return nullptr;
  const HloInstruction* tuple = instruction.operand(0);
  if (tuple->opcode() != HloOpcode::kTuple) return nullptr;
  return tuple->operand(instruction.tuple_index());
}

// The operands the walk follows, each with its output -> input map.
std::vector<std::pair<const HloInstruction*, IndexingMap>> Inputs(
    const HloInstruction& instruction) {
  std::vector<std::pair<const HloInstruction*, IndexingMap>> inputs;
  if (const HloInstruction* element = TupleElementSource(instruction)) {
    const hlo::Shape& shape = instruction.shape();
    std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
    inputs.emplace_back(element, IndexingMap::Identity(dims));
    return inputs;
  }
  std::vector<IndexingMap> maps = OutputToInputIndexing(instruction);
  for (int64_t q = 0; q < instruction.operand_count(); ++q) {
    inputs.emplace_back(instruction.operand(q), std::move(maps[q]));
  }
  return inputs;
}

// Users before their operands: reverse post-order of a depth-first walk from the root.
std::vector<const HloInstruction*> UsersFirst(const HloInstruction& root, size_t count) {
  std::vector<const HloInstruction*> post_order;
  std::vector<bool> visited(count, false);
  // Explicit stack: fused computations can be thousands of instructions deep.
  std::vector<std::pair<const HloInstruction*, size_t>> stack = {{&root, 0}};
  visited[root.id()] = true;
  while (!stack.empty()) {
    auto& [instruction, next] = stack.back();
    std::vector<const HloInstruction*> operands;
    if (const HloInstruction* element = TupleElementSource(*instruction)) {
      operands.push_back(element);
    } else {
      operands.assign(instruction->operands().begin(), instruction->operands().end());
    }
    if (next < operands.size()) {
      const HloInstruction* operand = operands[next++];
      if (!visited[operand->id()]) {
        visited[operand->id()] = true;
        stack.emplace_back(operand, 0);
      }
      continue;
    }
    post_order.push_back(instruction);
    stack.pop_back();
  }
  return std::vector<const HloInstruction*>(post_order.rbegin(), post_order.rend());
}

void AddDistinct(std::vector<IndexingMap>& maps, IndexingMap map) {
  if (map.IsKnownEmpty()) return;
  if (std::find(maps.begin(), maps.end(), map) == maps.end()) maps.push_back(std::move(map));
}

}  // namespace

std::span<const IndexingMap> GroupedIndexing::MapsTo(const HloInstruction& instruction) const {
  if (instruction.id() < 0 || instruction.id() >= static_cast<int64_t>(by_id_.size())) return {};
  return by_id_[instruction.id()];
}

std::span<const IndexingMap> GroupedIndexing::MapsToParameter(int64_t number) const {
  if (computation_ == nullptr || number < 0 || number >= computation_->parameter_count()) {
    return {};
  }
  return MapsTo(*computation_->parameter(number));
}

Expected<GroupedIndexing> ComputeGroupedOutputToInputIndexing(
    const hlo::HloComputation& computation, const HloInstruction& root, int64_t output_index) {
  std::span<const std::unique_ptr<HloInstruction>> instructions = computation.instructions();
  if (root.id() < 0 || root.id() >= computation.instruction_count() ||
      instructions[root.id()].get() != &root) {
    return InvalidArgument("'" + root.name() + "' is not an instruction of '" + computation.name() +
                           "'");
  }
  const HloInstruction* start = &root;
  if (root.opcode() == HloOpcode::kTuple) {
    if (output_index < 0 || output_index >= root.operand_count()) {
      return InvalidArgument("tuple '" + root.name() + "' has no output " +
                             std::to_string(output_index));
    }
    start = root.operand(output_index);
    output_index = 0;
  }
  const hlo::Shape& shape =
      start->shape().IsTuple() ? start->shape().tuple_element(output_index) : start->shape();
  if (!shape.IsArray()) {
    return InvalidArgument("output " + std::to_string(output_index) + " of '" + start->name() +
                           "' is not an array");
  }
  GroupedIndexing result;
  result.computation_ = &computation;
  result.by_id_.resize(computation.instruction_count());
  std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
  result.by_id_[start->id()].push_back(IndexingMap::Identity(dims));
  for (const HloInstruction* instruction : UsersFirst(*start, instructions.size())) {
    const std::vector<IndexingMap>& outputs = result.by_id_[instruction->id()];
    if (outputs.empty()) continue;
    for (auto& [operand, map] : Inputs(*instruction)) {
      for (const IndexingMap& output : outputs) {
        IndexingMap composed = Compose(output, map);
        composed.RemoveUnusedSymbols();
        AddDistinct(result.by_id_[operand->id()], std::move(composed));
      }
    }
  }
  return result;
}

Expected<std::vector<std::vector<IndexingMap>>> ComputeOutputToParameterIndexing(
    const hlo::HloComputation& computation, const HloInstruction& root, int64_t output_index) {
  TS_ASSIGN_OR_RETURN(GroupedIndexing grouped,
                      ComputeGroupedOutputToInputIndexing(computation, root, output_index));
  std::vector<std::vector<IndexingMap>> maps;
  for (int64_t i = 0; i < computation.parameter_count(); ++i) {
    std::span<const IndexingMap> to_parameter = grouped.MapsToParameter(i);
    maps.emplace_back(to_parameter.begin(), to_parameter.end());
  }
  return maps;
}

}  // namespace tilesmith::analysis
