#include "compiler/emitters/scatter_emitter.h"

#include "compiler/emitters/element_loop.h"

namespace tilesmith::emitters {
namespace {

using analysis::AffineExpr;
using analysis::FusionAnalysis;
using hlo::HloInstruction;
using hlo::HloOpcode;

const HloInstruction* ScatterRoot(const FusionAnalysis& analysis) {
  if (analysis.roots.size() != 1) return nullptr;
  const HloInstruction* root = analysis.roots.front();
  return root->opcode() == HloOpcode::kScatter ? root : nullptr;
}

// The atomic read-modify-write of the combiner, when there is one for the element type.
std::optional<AtomicOp> AtomicCombiner(const HloInstruction& scatter) {
  const HloInstruction* root = scatter.called_computation()->root();
  if (root->operand_count() != 2 || root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter) {
    return std::nullopt;
  }
  hlo::PrimitiveType type = scatter.shape().element_type();
  int bits = hlo::BitWidth(type);
  bool floating = type == hlo::PrimitiveType::kF32 || type == hlo::PrimitiveType::kF64;
  bool integral = hlo::IsIntegral(type) && (bits == 32 || bits == 64);
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      if (floating || integral) return AtomicOp::kAdd;
      return std::nullopt;
    case HloOpcode::kMaximum:
      if (integral) return AtomicOp::kMax;
      return std::nullopt;
    case HloOpcode::kMinimum:
      if (integral) return AtomicOp::kMin;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

int64_t UpdateElements(const FusionAnalysis& analysis) {
  const HloInstruction* scatter = ScatterRoot(analysis);
  return scatter ? std::max<int64_t>(1, scatter->operand(2)->shape().ElementCount()) : 1;
}

LoopConfig DefaultScatterConfig(const FusionAnalysis& analysis, const DeviceInfo& device) {
  if (!ScatterFallbackReason(analysis).empty()) return DefaultLoopConfig(analysis, device);
  LoopConfig config = DefaultLoopConfigFor(analysis, device, UpdateElements(analysis), 0);
  config.vector = 1;  // updates land at scattered addresses: nothing to vectorise
  return config;
}

Status ValidateScatterConfig(const LoopConfig& config, const FusionAnalysis& analysis,
                             const DeviceInfo& device) {
  if (!ScatterFallbackReason(analysis).empty()) return ValidateLoopConfig(config, analysis, device);
  return ValidateLoopConfigFor(config, analysis, device, UpdateElements(analysis));
}

}  // namespace

std::string ScatterFallbackReason(const FusionAnalysis& analysis) {
  const HloInstruction* scatter = ScatterRoot(analysis);
  if (scatter == nullptr) return "the root is not a single scatter";
  if (scatter->operand_count() != 3) return "a variadic scatter";
  const hlo::ScatterDimensions& dims = *scatter->attributes().scatter;
  if (!dims.input_batching_dims.empty()) return "batching dims";
  const HloInstruction* operand = scatter->operand(0);
  if (operand->opcode() != HloOpcode::kParameter || !(operand->shape() == scatter->shape())) {
    return "the operand is not a parameter of the output's shape and layout (nothing to update "
           "in place)";
  }
  if (analysis.smallest_output_bits < 8) return "a packed output type";
  if (!AtomicCombiner(*scatter) && !dims.unique_indices) {
    return "non-unique indices with a combiner that has no atomic on " +
           std::string(hlo::PrimitiveTypeName(scatter->shape().element_type())) +
           " (updates must apply in order)";
  }
  return "";
}

Expected<KernelIR> EmitScatterKernel(const FusionAnalysis& analysis, const LoopConfig& config,
                                     const DeviceInfo& device) {
  if (std::string reason = ScatterFallbackReason(analysis); !reason.empty()) {
    // The loop emitter's kernel: each output element applies its updates in order.
    return EmitLoopKernel(analysis, config, device);
  }
  TS_RETURN_IF_ERROR(ValidateScatterConfig(config, analysis, device));
  const HloInstruction* scatter = ScatterRoot(analysis);
  KernelIR kernel;
  kernel.name = analysis.fusion->name();
  kernel.fusion = analysis.fusion;
  kernel.emitter = "scatter";
  kernel.config_json = config.ToJson().dump();
  AddFusionBuffers(analysis, kernel);
  int64_t per_block = config.threads_per_block * config.vector * config.chunks;
  int64_t blocks = std::max<int64_t>(1, CeilDiv(UpdateElements(analysis), per_block));
  int64_t blocks_x = CeilDiv(blocks, config.blocks_y);
  kernel.launch.threads = {config.threads_per_block, 1, 1};
  kernel.launch.blocks = {blocks_x, config.blocks_y, 1};
  ElementLoopShape shape{config.threads_per_block, config.vector, config.chunks, blocks_x,
                         config.blocks_y};
  const hlo::Shape& updates = scatter->operand(2)->shape();
  LoopStmt loop{ElementLoopMap(shape, updates, {},
                               [](std::span<const AffineExpr> index) {
                                 return std::vector<AffineExpr>(index.begin(), index.end());
                               }),
                {}};
  ScatterStmt update{scatter, kernel.OutputBuffer(0), {}, false, AtomicOp::kAdd};
  for (int64_t d = 0; d < updates.rank(); ++d) update.update_index.push_back(AffineExpr::Dim(d));
  if (std::optional<AtomicOp> op = AtomicCombiner(*scatter)) {
    update.atomic = true;
    update.op = *op;
  }
  loop.body.push_back(std::move(update));
  kernel.phases.push_back({{std::move(loop)}});
  for (size_t i = 0; i < kernel.buffers.size(); ++i) {
    const KernelBuffer& buffer = kernel.buffers[i];
    if (!buffer.is_output && buffer.index == scatter->operand(0)->parameter_number()) {
      kernel.buffers[kernel.OutputBuffer(0)].aliases = static_cast<int64_t>(i);
    }
  }
  return kernel;
}

std::unique_ptr<Emitter> MakeScatterEmitter() {
  return MakeLoopConfigEmitter(
      {"scatter", &DefaultScatterConfig, &ValidateScatterConfig, &EmitScatterKernel});
}

}  // namespace tilesmith::emitters
