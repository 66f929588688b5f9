#include "compiler/emitters/input_slices_emitter.h"

#include <algorithm>

#include "compiler/analysis/partitioner.h"
#include "compiler/emitters/element_loop.h"

namespace tilesmith::emitters {
namespace {

using analysis::AffineExpr;
using analysis::FusionAnalysis;
using analysis::Interval;
using hlo::HloInstruction;

// The shape every root slices (its operand's), after checking that the roots are
// unit-stride slices of arrays with those dims and layout.
Expected<const hlo::Shape*> SlicedShape(const FusionAnalysis& analysis) {
  const hlo::Shape* sliced = nullptr;
  for (const HloInstruction* root : analysis.roots) {
    if (root->opcode() != hlo::HloOpcode::kSlice || !root->attributes().slice) {
      return InvalidArgument("root '" + root->name() + "' is not a slice");
    }
    for (const hlo::SliceDim& dim : *root->attributes().slice) {
      if (dim.stride != 1) {
        return InvalidArgument("slice '" + root->name() + "' has a stride other than 1");
      }
    }
    const hlo::Shape& operand = root->operand(0)->shape();
    if (sliced == nullptr) {
      sliced = &operand;
    } else if (!std::equal(sliced->dims().begin(), sliced->dims().end(), operand.dims().begin(),
                           operand.dims().end()) ||
               !(sliced->layout() == operand.layout())) {
      return InvalidArgument("slice '" + root->name() + "' reads " + hlo::ShapeToString(operand) +
                             ", not " + hlo::ShapeToString(*sliced));
    }
  }
  if (sliced == nullptr) return InvalidArgument("the fusion has no roots");
  return sliced;
}

bool PackedOutputs(const FusionAnalysis& analysis) { return analysis.smallest_output_bits < 8; }

}  // namespace

LoopConfig DefaultInputSlicesConfig(const FusionAnalysis& analysis, const DeviceInfo& device) {
  auto sliced = SlicedShape(analysis);
  if (!sliced || PackedOutputs(analysis)) return DefaultLoopConfig(analysis, device);
  // XLA unrolls input slices only to fill bytes of packed outputs: vector_divides 1.
  return DefaultLoopConfigFor(analysis, device, (*sliced)->ElementCount(), 1);
}

Status ValidateInputSlicesConfig(const LoopConfig& config, const FusionAnalysis& analysis,
                                 const DeviceInfo& device) {
  TS_ASSIGN_OR_RETURN(const hlo::Shape* sliced, SlicedShape(analysis));
  if (PackedOutputs(analysis)) return ValidateLoopConfig(config, analysis, device);
  return ValidateLoopConfigFor(config, analysis, device, sliced->ElementCount());
}

Expected<KernelIR> EmitInputSlicesKernel(const FusionAnalysis& analysis, const LoopConfig& config,
                                         const DeviceInfo& device) {
  TS_RETURN_IF_ERROR(ValidateInputSlicesConfig(config, analysis, device));
  if (PackedOutputs(analysis)) {
    TS_ASSIGN_OR_RETURN(KernelIR kernel, EmitLoopKernel(analysis, config, device));
    kernel.emitter = "input_slices";
    return kernel;
  }
  const hlo::Shape& sliced = **SlicedShape(analysis);
  const hlo::HloComputation& fusion = *analysis.fusion;
  std::vector<FusionOutput> outputs = FusionOutputs(analysis);
  KernelIR kernel;
  kernel.name = fusion.name();
  kernel.fusion = &fusion;
  kernel.emitter = "input_slices";
  kernel.config_json = config.ToJson().dump();
  AddFusionBuffers(analysis, kernel);
  analysis::PartitionedComputation partition = analysis::PartitionComputation(fusion);
  AddPartitionFunctions(partition, kernel);

  int64_t per_block = config.threads_per_block * config.vector * config.chunks;
  int64_t blocks = std::max<int64_t>(1, CeilDiv(sliced.ElementCount(), per_block));
  int64_t blocks_x = CeilDiv(blocks, config.blocks_y);
  kernel.launch.threads = {config.threads_per_block, 1, 1};
  kernel.launch.blocks = {blocks_x, config.blocks_y, 1};
  ElementLoopShape shape{config.threads_per_block, config.vector, config.chunks, blocks_x,
                         config.blocks_y};
  auto identity = [](std::span<const AffineExpr> index) {
    return std::vector<AffineExpr>(index.begin(), index.end());
  };
  if (sliced.ElementCount() == 0) return kernel;  // every slice is empty: nothing to write
  LoopStmt loop{ElementLoopMap(shape, sliced, {}, identity), {}};
  int64_t next_value = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HloInstruction* root = outputs[i].root;
    const std::vector<hlo::SliceDim>& dims = *root->attributes().slice;
    // Slices with the same dims share a function; each is called at its own index.
    int64_t function = partition.SubgraphOf(*root);
    std::vector<std::pair<const HloInstruction*, int64_t>> leaves =
        kernel.functions[function].Leaves();
    int64_t position =
        std::find(leaves.begin(), leaves.end(), std::make_pair(root, int64_t{-1})) - leaves.begin();
    CallStmt call;
    call.function = function;
    call.first_value = next_value;
    StoreStmt store;
    store.buffer = kernel.OutputBuffer(static_cast<int64_t>(i));
    store.value = next_value + position;
    next_value += static_cast<int64_t>(leaves.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      AffineExpr input = AffineExpr::Dim(static_cast<int64_t>(d));
      call.indices.push_back(input - dims[d].start);
      store.indices.push_back(input - dims[d].start);
      if (dims[d].start > 0 || dims[d].limit < sliced.dim(static_cast<int64_t>(d))) {
        store.predicates.push_back({input, Interval{dims[d].start, dims[d].limit - 1}});
      }
    }
    loop.body.push_back(std::move(call));
    loop.body.push_back(std::move(store));
  }
  Phase phase;
  phase.loops.push_back(std::move(loop));
  kernel.phases.push_back(std::move(phase));
  return kernel;
}

std::unique_ptr<Emitter> MakeInputSlicesEmitter() {
  return MakeLoopConfigEmitter({"input_slices", &DefaultInputSlicesConfig,
                                &ValidateInputSlicesConfig, &EmitInputSlicesKernel});
}

}  // namespace tilesmith::emitters
