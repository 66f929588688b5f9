#include "tuner/ranking.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/tiling.h"
#include "tuner/layouts.h"

namespace tilesmith::tuner {

std::vector<double> AnalyticRanking::PredictUs(const Space& space) const {
  std::vector<double> predictions;
  bool host = device_.simd_bytes > 0;
  double bandwidth_bytes_per_us = std::max(1.0, device_.memory_bandwidth_gbs) * 1e3;
  // Per block: a thread-pool task on the host, block scheduling on a GPU.
  double block_overhead_us = host ? 0.05 : 0.002;
  for (const Candidate& candidate : space.candidates) {
    auto kernel =
        emitters::EmitKernel(space.AnalysisOf(candidate), EmitterConfig(candidate.config), device_);
    if (!kernel) {
      predictions.push_back(std::numeric_limits<double>::infinity());
      continue;
    }
    double bytes = 0;
    for (const emitters::KernelBuffer& buffer : kernel->buffers) {
      if (auto physical = hlo::PhysicalLayout::Create(buffer.shape)) bytes += physical->byte_size();
    }
    double blocks = static_cast<double>(kernel->launch.block_count());
    double threads = blocks * kernel->launch.threads_per_block();
    double units = static_cast<double>(std::max<int64_t>(1, device_.sm_count));
    double fill = std::min(1.0, threads / (units * device_.threads_per_sm));
    double waves = std::ceil(blocks / units);
    double wave_efficiency = blocks / (waves * units);
    double memory_us = bytes / bandwidth_bytes_per_us;
    predictions.push_back(1.0 + memory_us / std::max(1e-3, std::min(fill, wave_efficiency)) +
                          blocks * block_overhead_us / units);
  }
  return predictions;
}

}  // namespace tilesmith::tuner
