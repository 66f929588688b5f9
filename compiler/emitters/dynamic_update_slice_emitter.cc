#include "compiler/emitters/dynamic_update_slice_emitter.h"

#include <functional>
#include <unordered_set>

#include "compiler/emitters/element_loop.h"

namespace tilesmith::emitters {
namespace {

using analysis::AffineExpr;
using analysis::FusionAnalysis;
using analysis::Interval;
using hlo::HloInstruction;
using hlo::HloOpcode;

const HloInstruction* ThroughBitcasts(const HloInstruction* instruction) {
  while (instruction->opcode() == HloOpcode::kBitcast) instruction = instruction->operand(0);
  return instruction;
}

// One root: the dynamic-update-slice behind it and the parameter it updates.
struct InPlaceUpdate {
  const HloInstruction* dus;
  const HloInstruction* parameter;
};

Expected<std::vector<InPlaceUpdate>> InPlaceUpdates(const FusionAnalysis& analysis) {
  std::vector<InPlaceUpdate> updates;
  for (const HloInstruction* root : analysis.roots) {
    const HloInstruction* dus = ThroughBitcasts(root);
    if (dus->opcode() != HloOpcode::kDynamicUpdateSlice) {
      return InvalidArgument("root '" + root->name() + "' is not a dynamic-update-slice");
    }
    const HloInstruction* parameter = ThroughBitcasts(dus->operand(0));
    if (parameter->opcode() != HloOpcode::kParameter || !parameter->shape().IsArray()) {
      return InvalidArgument("'" + dus->name() + "' does not update an array parameter in place");
    }
    updates.push_back({dus, parameter});
  }
  if (updates.empty()) return InvalidArgument("the fusion has no roots");
  return updates;
}

bool PackedOutputs(const FusionAnalysis& analysis) { return analysis.smallest_output_bits < 8; }

// The elements one thread loop covers: the largest update, or the whole output when packed.
int64_t LoopElements(const FusionAnalysis& analysis, const std::vector<InPlaceUpdate>& updates) {
  int64_t largest = 1;
  for (size_t i = 0; i < updates.size(); ++i) {
    largest = std::max(largest, PackedOutputs(analysis)
                                    ? analysis.roots[i]->shape().ElementCount()
                                    : updates[i].dus->operand(1)->shape().ElementCount());
  }
  return largest;
}

int64_t ParameterBuffer(const KernelIR& kernel, const HloInstruction& parameter) {
  for (size_t i = 0; i < kernel.buffers.size(); ++i) {
    const KernelBuffer& buffer = kernel.buffers[i];
    if (!buffer.is_output && buffer.index == parameter.parameter_number()) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

}  // namespace

LoopConfig DefaultDynamicUpdateSliceConfig(const FusionAnalysis& analysis,
                                           const DeviceInfo& device) {
  auto updates = InPlaceUpdates(analysis);
  if (!updates || PackedOutputs(analysis)) return DefaultLoopConfig(analysis, device);
  return DefaultLoopConfigFor(analysis, device, LoopElements(analysis, *updates), 0);
}

Status ValidateDynamicUpdateSliceConfig(const LoopConfig& config, const FusionAnalysis& analysis,
                                        const DeviceInfo& device) {
  TS_ASSIGN_OR_RETURN(std::vector<InPlaceUpdate> updates, InPlaceUpdates(analysis));
  return ValidateLoopConfigFor(config, analysis, device, LoopElements(analysis, updates));
}

Expected<KernelIR> EmitDynamicUpdateSliceKernel(const FusionAnalysis& analysis,
                                                const LoopConfig& config,
                                                const DeviceInfo& device) {
  TS_RETURN_IF_ERROR(ValidateDynamicUpdateSliceConfig(config, analysis, device));
  std::vector<InPlaceUpdate> updates = *InPlaceUpdates(analysis);
  KernelIR kernel;
  if (PackedOutputs(analysis)) {
    TS_ASSIGN_OR_RETURN(kernel, EmitLoopKernel(analysis, config, device));
  } else {
    const hlo::HloComputation& fusion = *analysis.fusion;
    std::vector<FusionOutput> outputs = FusionOutputs(analysis);
    kernel.name = fusion.name();
    kernel.fusion = &fusion;
    kernel.config_json = config.ToJson().dump();
    AddFusionBuffers(analysis, kernel);
    int64_t per_block = config.threads_per_block * config.vector * config.chunks;
    int64_t blocks = std::max<int64_t>(1, CeilDiv(LoopElements(analysis, updates), per_block));
    int64_t blocks_x = CeilDiv(blocks, config.blocks_y);
    kernel.launch.threads = {config.threads_per_block, 1, 1};
    kernel.launch.blocks = {blocks_x, config.blocks_y, 1};
    ElementLoopShape shape{config.threads_per_block, config.vector, config.chunks, blocks_x,
                           config.blocks_y};
    Phase phase;
    int64_t next_value = 0;
    for (size_t i = 0; i < updates.size(); ++i) {
      const HloInstruction* dus = updates[i].dus;
      const HloInstruction* update = dus->operand(1);
      if (update->shape().ElementCount() == 0) continue;  // nothing to write
      int64_t rank = update->shape().rank();
      // The starts, read once per thread and clamped so the update fits.
      std::vector<analysis::SymbolVar> starts;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t last = dus->shape().dim(d) - update->shape().dim(d);
        starts.push_back({Interval{0, last}, analysis::SymbolKind::kRuntime, dus->operand(2 + d)});
      }
      // Results: the update index, then the output index.
      Status mapped = OkStatus();
      auto results = [&](std::span<const AffineExpr> index) {
        std::vector<AffineExpr> all(index.begin(), index.end());
        std::vector<AffineExpr> in_operand;
        for (int64_t d = 0; d < rank; ++d) in_operand.push_back(index[d] + AffineExpr::Symbol(d));
        auto in_output = ReinterpretIndex(dus->shape(), *outputs[i].shape, in_operand);
        if (!in_output) {
          mapped = std::unexpected(in_output.error());
          return all;
        }
        all.insert(all.end(), in_output->begin(), in_output->end());
        return all;
      };
      LoopStmt loop{ElementLoopMap(shape, update->shape(), starts, results), {}};
      TS_RETURN_IF_ERROR(mapped);
      kernel.functions.push_back({"update_" + dus->name(), {update}, OperandClosure(update)});
      CallStmt call;
      call.function = static_cast<int64_t>(kernel.functions.size()) - 1;
      call.first_value = next_value;
      for (int64_t d = 0; d < rank; ++d) call.indices.push_back(AffineExpr::Dim(d));
      StoreStmt store;
      store.buffer = kernel.OutputBuffer(static_cast<int64_t>(i));
      store.value = next_value++;
      for (int64_t d = 0; d < outputs[i].shape->rank(); ++d) {
        store.indices.push_back(AffineExpr::Dim(rank + d));
      }
      loop.body.push_back(std::move(call));
      loop.body.push_back(std::move(store));
      phase.loops.push_back(std::move(loop));
    }
    kernel.phases.push_back(std::move(phase));
  }
  kernel.emitter = "dynamic_update_slice";
  for (size_t i = 0; i < updates.size(); ++i) {
    kernel.buffers[kernel.OutputBuffer(static_cast<int64_t>(i))].aliases =
        ParameterBuffer(kernel, *updates[i].parameter);
  }
  return kernel;
}

std::unique_ptr<Emitter> MakeDynamicUpdateSliceEmitter() {
  return MakeLoopConfigEmitter({"dynamic_update_slice", &DefaultDynamicUpdateSliceConfig,
                                &ValidateDynamicUpdateSliceConfig, &EmitDynamicUpdateSliceKernel});
}

}  // namespace tilesmith::emitters
