#include "compiler/emitters/concatenate_emitter.h"

#include <algorithm>
#include <numeric>

#include "compiler/analysis/partitioner.h"
#include "compiler/emitters/element_loop.h"

namespace tilesmith::emitters {
namespace {

using analysis::AffineExpr;
using analysis::FusionAnalysis;
using hlo::HloInstruction;

// The concatenate every root is computed from (the analysis' shared hero).
Expected<const HloInstruction*> Hero(const FusionAnalysis& analysis) {
  const HloInstruction* hero = analysis.heroes.empty() ? nullptr : analysis.heroes[0];
  if (hero == nullptr || hero->opcode() != hlo::HloOpcode::kConcatenate) {
    return InvalidArgument("the concatenate emitter needs a concatenate hero");
  }
  for (const HloInstruction* other : analysis.heroes) {
    if (other != hero) return InvalidArgument("the roots do not share one concatenate hero");
  }
  return hero;
}

int64_t LargestOperandElements(const HloInstruction& concatenate) {
  int64_t largest = 1;
  for (const HloInstruction* operand : concatenate.operands()) {
    largest = std::max(largest, operand->shape().ElementCount());
  }
  return largest;
}

}  // namespace

LoopConfig DefaultConcatenateConfig(const FusionAnalysis& analysis, const DeviceInfo& device) {
  auto hero = Hero(analysis);
  if (!hero) return DefaultLoopConfig(analysis, device);
  int64_t dim = (*hero)->dimensions()[0];
  int64_t sizes_gcd = 0;
  for (const HloInstruction* operand : (*hero)->operands()) {
    sizes_gcd = std::gcd(sizes_gcd, operand->shape().dim(dim));
  }
  return DefaultLoopConfigFor(analysis, device, LargestOperandElements(**hero),
                              std::max<int64_t>(sizes_gcd, 1));
}

Status ValidateConcatenateConfig(const LoopConfig& config, const FusionAnalysis& analysis,
                                 const DeviceInfo& device) {
  TS_ASSIGN_OR_RETURN(const HloInstruction* hero, Hero(analysis));
  if (analysis.smallest_output_bits < 8) {
    return InvalidArgument(
        "outputs narrower than 8 bits: operand offsets would split bytes between threads "
        "(the loop emitter handles packed concatenates)");
  }
  return ValidateLoopConfigFor(config, analysis, device, LargestOperandElements(*hero));
}

Expected<KernelIR> EmitConcatenateKernel(const FusionAnalysis& analysis, const LoopConfig& config,
                                         const DeviceInfo& device) {
  TS_RETURN_IF_ERROR(ValidateConcatenateConfig(config, analysis, device));
  const HloInstruction* hero = *Hero(analysis);
  const hlo::HloComputation& fusion = *analysis.fusion;
  std::vector<FusionOutput> outputs = FusionOutputs(analysis);
  KernelIR kernel;
  kernel.name = fusion.name();
  kernel.fusion = &fusion;
  kernel.emitter = "concatenate";
  kernel.config_json = config.ToJson().dump();
  AddFusionBuffers(analysis, kernel);
  analysis::PartitionedComputation partition = analysis::PartitionComputation(fusion);
  AddPartitionFunctions(partition, kernel);

  int64_t per_block = config.threads_per_block * config.vector * config.chunks;
  int64_t blocks_x = CeilDiv(CeilDiv(LargestOperandElements(*hero), per_block), config.blocks_y);
  kernel.launch.threads = {config.threads_per_block, 1, 1};
  kernel.launch.blocks = {blocks_x, config.blocks_y, 1};
  ElementLoopShape shape{config.threads_per_block, config.vector, config.chunks, blocks_x,
                         config.blocks_y};

  int64_t dim = hero->dimensions()[0];
  int64_t offset = 0;
  int64_t next_value = 0;
  Phase phase;
  for (const HloInstruction* operand : hero->operands()) {
    int64_t operand_offset = offset;
    offset += operand->shape().dim(dim);
    if (operand->shape().ElementCount() == 0) continue;  // an empty operand adds nothing
    // Results: the element's index in each output (outputs that are bitcasts of the hero
    // have other dims).
    Status mapped = OkStatus();
    auto results = [&](std::span<const AffineExpr> index) {
      std::vector<AffineExpr> hero_index(index.begin(), index.end());
      hero_index[dim] = hero_index[dim] + operand_offset;
      std::vector<AffineExpr> all;
      for (const FusionOutput& output : outputs) {
        auto output_index = ReinterpretIndex(hero->shape(), *output.shape, hero_index);
        if (!output_index) {
          mapped = std::unexpected(output_index.error());
          break;
        }
        all.insert(all.end(), output_index->begin(), output_index->end());
      }
      return all;
    };
    LoopStmt loop{ElementLoopMap(shape, operand->shape(), {}, results), {}};
    TS_RETURN_IF_ERROR(mapped);
    // Outputs stored at the same index share their functions' calls.
    std::vector<std::pair<std::vector<AffineExpr>, std::vector<int64_t>>> by_index;
    int64_t position = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::vector<AffineExpr> index;
      for (int64_t d = 0; d < outputs[i].shape->rank(); ++d) {
        index.push_back(loop.map.result(position++));
      }
      auto same = std::find_if(by_index.begin(), by_index.end(),
                               [&](const auto& group) { return group.first == index; });
      if (same == by_index.end()) {
        by_index.push_back({index, {}});
        same = by_index.end() - 1;
      }
      same->second.push_back(static_cast<int64_t>(i));
    }
    for (const auto& [index, which] : by_index) {
      // The first output of the group names the results holding its index.
      int64_t first = 0;
      for (int64_t i = 0; i < which.front(); ++i) first += outputs[i].shape->rank();
      std::vector<AffineExpr> results;
      for (size_t d = 0; d < index.size(); ++d) {
        results.push_back(AffineExpr::Dim(first + static_cast<int64_t>(d)));
      }
      StoreOutputs(kernel, partition, outputs, which, results, loop.body, next_value);
    }
    phase.loops.push_back(std::move(loop));
  }
  kernel.phases.push_back(std::move(phase));
  return kernel;
}

std::unique_ptr<Emitter> MakeConcatenateEmitter() {
  return MakeLoopConfigEmitter({"concatenate", &DefaultConcatenateConfig,
                                &ValidateConcatenateConfig, &EmitConcatenateKernel});
}

}  // namespace tilesmith::emitters
