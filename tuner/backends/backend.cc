#include "tuner/backends/backend.h"

#include <chrono>

#include "compiler/codegen/host_backend.h"
#include "compiler/codegen/nvptx_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "tuner/host_memory.h"

namespace tilesmith::tuner {

BuildResult Backend::BuildCandidate(const analysis::FusionAnalysis& analysis,
                                    const nlohmann::json& config) const {
  BuildResult result;
  auto start = std::chrono::steady_clock::now();
  auto kernel = emitters::EmitKernel(analysis, config, device_.info);
  if (!kernel) {
    result.message = kernel.error().message;
    return result;
  }
  auto built = Build(*kernel);
  if (!built) {
    result.message = built.error().message;
    result.stats.threads_per_block = kernel->launch.threads_per_block();
    result.stats.blocks = kernel->launch.block_count();
    return result;
  }
  result.stats = std::move(*built);
  result.stats.threads_per_block = kernel->launch.threads_per_block();
  result.stats.blocks = kernel->launch.block_count();
  result.stats.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  result.ok = true;
  return result;
}

Status Backend::CheckRunnable(const hlo::HloComputation&) const { return OkStatus(); }

std::unique_ptr<Runner> Backend::MakeWorkerRunner(std::vector<std::string> argv,
                                                  MeasureOptions options,
                                                  std::function<bool()> should_stop) const {
  return std::make_unique<WorkerRunner>(std::move(argv), std::move(options),
                                        std::move(should_stop));
}

std::unique_ptr<Runner> Backend::MakePredictingRunner(const costmodel::CostModel& model) const {
  return std::make_unique<PredictingRunner>(model, device_);
}

Expected<BuildStats> HostBackend::Build(const emitters::KernelIR& kernel) const {
  BuildStats stats;
  TS_ASSIGN_OR_RETURN(stats.usage, CountHostUsage(kernel));
  return stats;
}

Status HostBackend::CheckRunnable(const hlo::HloComputation& fusion) const {
  return CheckFitsHostMemory(fusion);
}

Expected<BuildStats> CudaBackend::Build(const emitters::KernelIR& kernel) const {
  TS_ASSIGN_OR_RETURN(
      codegen::NvptxKernel compiled,
      codegen::CompileForNvptx(kernel, device().target, codegen::NvptxStage::kCubin));
  BuildStats stats;
  stats.usage.registers = compiled.cubin.usage.registers;
  stats.usage.shared_bytes = compiled.cubin.usage.shared_bytes;
  stats.usage.spill_bytes = compiled.cubin.usage.spill_bytes();
  return stats;
}

std::unique_ptr<Backend> MakeBackend(const Device& device) {
  switch (device.target.kind) {
    case emitters::Target::Kind::kCuda:
      return std::make_unique<CudaBackend>(device);
    case emitters::Target::Kind::kHost:
      break;
  }
  return std::make_unique<HostBackend>(device);
}

Expected<costmodel::ResourceUsage> CountHostUsage(const emitters::KernelIR& kernel) {
  TS_ASSIGN_OR_RETURN(codegen::CodeCounts counts, codegen::CountHostCode(kernel));
  return costmodel::ResourceUsage{.executed_instructions = counts.instructions,
                                  .executed_divisions = counts.divisions,
                                  .executed_memory = counts.memory,
                                  .executed_vector = counts.vector,
                                  .executed_branches = counts.branches,
                                  .executed_constant_divisions = counts.constant_divisions,
                                  .executed_float_divisions = counts.float_divisions,
                                  .executed_gather_lanes = counts.gather_lanes,
                                  .executed_half_lanes = counts.half_lanes,
                                  .executed_machine_instructions = counts.machine_instructions,
                                  .executed_lane_moves = counts.lane_moves};
}

}  // namespace tilesmith::tuner
