#include "tuner/builder.h"

#include <chrono>

#include "compiler/codegen/host_backend.h"
#include "compiler/codegen/nvptx_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "costmodel/cost_model.h"
#include "support/thread_pool.h"

namespace tilesmith::tuner {
namespace {

BuildResult BuildOne(const analysis::FusionAnalysis& analysis, const emitters::DeviceInfo& device,
                     const emitters::Target& target, const nlohmann::json& config) {
  BuildResult result;
  auto start = std::chrono::steady_clock::now();
  auto kernel = emitters::EmitKernel(analysis, config, device);
  if (!kernel) {
    result.message = kernel.error().message;
    return result;
  }
  result.stats["threads_per_block"] = kernel->launch.threads_per_block();
  result.stats["blocks"] = kernel->launch.block_count();
  if (target.is_cuda()) {
    auto compiled = codegen::CompileForNvptx(*kernel, target, codegen::NvptxStage::kCubin);
    if (!compiled) {
      result.message = compiled.error().message;
      return result;
    }
    result.stats["registers"] = compiled->cubin.usage.registers;
    result.stats["shared_bytes"] = compiled->cubin.usage.shared_bytes;
    result.stats["spill_bytes"] = compiled->cubin.usage.spill_bytes();
  } else {
    auto usage = CountHostUsage(*kernel);
    if (!usage) {
      result.message = usage.error().message;
      return result;
    }
    costmodel::AddResourceUsageToStats(*usage, result.stats);
  }
  result.stats["compile_ms"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  result.ok = true;
  return result;
}

}  // namespace

Expected<costmodel::ResourceUsage> CountHostUsage(const emitters::KernelIR& kernel) {
  TS_ASSIGN_OR_RETURN(codegen::CodeCounts counts, codegen::CountHostCode(kernel));
  return costmodel::ResourceUsage{.executed_instructions = counts.instructions,
                                  .executed_divisions = counts.divisions,
                                  .executed_memory = counts.memory,
                                  .executed_vector = counts.vector,
                                  .executed_branches = counts.branches};
}

std::vector<BuildResult> BuildBatch(std::span<const BuildRequest> requests,
                                    const emitters::DeviceInfo& device,
                                    const emitters::Target& target, int threads,
                                    const std::function<bool()>& cancelled) {
  std::vector<BuildResult> results(requests.size());
  // Its own pool: the process-wide one runs host kernels' blocks.
  static ThreadPool pool(0);  // one thread per core, the caller included
  pool.ParallelFor(
      static_cast<int64_t>(requests.size()),
      [&](int64_t i) {
        if (cancelled && cancelled()) {
          results[i].message = std::string(kBuildCancelled);
          return;
        }
        results[i] = BuildOne(*requests[i].analysis, device, target, requests[i].config);
      },
      threads);
  return results;
}

}  // namespace tilesmith::tuner
