#include "split/shard_module.h"

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"

namespace tilesmith::split {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// Shrinks one instruction's split dims. A slice keeps split dims whole (dim_labels pins
// the others), so its limits follow the new sizes.
void ShrinkInstruction(HloInstruction& instruction, const std::vector<int>& dim_labels,
                       const std::vector<int64_t>& factor) {
  for (size_t d = 0; d < dim_labels.size(); ++d) {
    const int64_t f = factor[dim_labels[d]];
    if (f == 1) continue;
    const int64_t size = instruction.shape().dim(d) / f;
    instruction.mutable_shape().set_dim(d, size);
    if (instruction.opcode() == HloOpcode::kSlice && instruction.attributes().slice) {
      (*instruction.mutable_attributes().slice)[d].limit = size;
    }
  }
}

// The entry that wraps the fusion takes the fused parameters' new shapes and returns the
// fused root's.
Status ShrinkWrapper(hlo::HloComputation& entry, const hlo::HloComputation& fused) {
  HloInstruction* call = entry.root();
  if (call == nullptr || call->opcode() != HloOpcode::kFusion) {
    return Unimplemented("split: the entry computation's root is not the fusion");
  }
  for (const auto& instruction : entry.instructions()) {
    if (instruction.get() != call && instruction->opcode() != HloOpcode::kParameter) {
      return Unimplemented("split: the entry computation holds '" +
                           std::string(hlo::HloOpcodeName(instruction->opcode())) +
                           "' besides the fusion and its parameters");
    }
  }
  for (int64_t i = 0; i < call->operand_count(); ++i) {
    HloInstruction* operand = call->mutable_operand(i);
    if (operand->opcode() != HloOpcode::kParameter || i >= fused.parameter_count()) {
      return Unimplemented("split: fusion operand " + std::to_string(i) +
                           " is not an entry parameter");
    }
    operand->mutable_shape() = fused.parameter(i)->shape();
  }
  call->mutable_shape() = fused.root()->shape();
  return OkStatus();
}

}  // namespace

Expected<std::unique_ptr<hlo::HloModule>> ShardModule(const hlo::HloModule& module,
                                                      const DimLabels& labels, const Mesh& mesh,
                                                      const Strategy& strategy) {
  std::vector<int64_t> factor(labels.count(), 1);
  for (int l = 0; l < labels.count(); ++l) {
    for (const std::string& axis : strategy.label_axes[l]) {
      factor[l] *= mesh.axes[mesh.AxisIndex(axis)].size;
    }
  }
  TS_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> copy,
                      hlo::ParseHloModule(hlo::PrintModule(module), module.name()));
  const hlo::HloComputation* fused_view = copy->fusion();
  hlo::HloComputation* fused = copy->FindComputation(fused_view->name());
  if (fused == nullptr || fused->instruction_count() != static_cast<int64_t>(labels.of.size())) {
    return MakeError(ErrorCode::kInternal, "split: the reparsed fusion differs from the original");
  }
  for (int64_t i = 0; i < fused->instruction_count(); ++i) {
    HloInstruction& instruction = *fused->instructions()[i];
    if (instruction.opcode() != HloOpcode::kTuple) {
      ShrinkInstruction(instruction, labels.of[i], factor);
    }
  }
  // A multi-output fusion's root tuple takes its shrunk operands' shapes, operands first.
  for (const HloInstruction* const_tuple : fused->PostOrder()) {
    if (const_tuple->opcode() != HloOpcode::kTuple) continue;
    auto& tuple = const_cast<HloInstruction&>(*const_tuple);  // owned by `copy`
    std::vector<hlo::Shape> elements;
    for (const HloInstruction* operand : tuple.operands()) elements.push_back(operand->shape());
    tuple.mutable_shape() = hlo::Shape::Tuple(std::move(elements));
  }
  if (copy->entry() != fused) TS_RETURN_IF_ERROR(ShrinkWrapper(*copy->entry(), *fused));
  // Parsing the printed result re-checks every shape against its operands.
  auto checked = hlo::ParseHloModule(hlo::PrintModule(*copy), module.name() + ".shard");
  if (!checked) {
    return MakeError(ErrorCode::kInternal,
                     "split: the per-device fusion does not check: " + checked.error().message);
  }
  return std::move(*checked);
}

}  // namespace tilesmith::split
