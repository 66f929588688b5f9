#include "costmodel/cost_model.h"

#include <algorithm>
#include <array>
#include <utility>

#include "costmodel/gpu_model.h"
#include "costmodel/host_model.h"

namespace tilesmith::costmodel {

namespace {

// The host code's figures by their names in compile stats; `Usage` const or not.
template <typename Usage>
auto ExecutedFigures(Usage& usage) {
  return std::array{
      std::pair{"executed_instructions", &usage.executed_instructions},
      std::pair{"executed_divisions", &usage.executed_divisions},
      std::pair{"executed_memory", &usage.executed_memory},
      std::pair{"executed_vector", &usage.executed_vector},
      std::pair{"executed_branches", &usage.executed_branches},
      std::pair{"executed_constant_divisions", &usage.executed_constant_divisions},
      std::pair{"executed_float_divisions", &usage.executed_float_divisions},
      std::pair{"executed_gather_lanes", &usage.executed_gather_lanes},
      std::pair{"executed_half_lanes", &usage.executed_half_lanes},
      std::pair{"executed_machine_instructions", &usage.executed_machine_instructions},
      std::pair{"executed_lane_moves", &usage.executed_lane_moves}};
}

}  // namespace

ResourceUsage ResourceUsageFromStats(const nlohmann::json& stats) {
  auto field = [&](const char* name) -> int64_t {
    return stats.is_object() && stats.contains(name) && stats[name].is_number_integer()
               ? stats[name].get<int64_t>()
               : 0;
  };
  ResourceUsage usage{.registers = field("registers"),
                      .shared_bytes = field("shared_bytes"),
                      .spill_bytes = field("spill_bytes")};
  for (auto [name, figure] : ExecutedFigures(usage)) {
    if (stats.is_object() && stats.contains(name) && stats[name].is_number()) {
      *figure = std::max(0.0, stats[name].get<double>());
    }
  }
  return usage;
}

void AddResourceUsageToStats(const ResourceUsage& usage, nlohmann::json& stats) {
  if (usage.has_cubin()) {
    stats["registers"] = usage.registers;
    stats["shared_bytes"] = usage.shared_bytes;
    stats["spill_bytes"] = usage.spill_bytes;
  }
  if (usage.has_host_code()) {
    for (auto [name, figure] : ExecutedFigures(usage)) stats[name] = *figure;
  }
}

std::unique_ptr<CostModel> AnalyticModelFor(const emitters::Target& target, int64_t cache_bytes) {
  return AnalyticModelFor(target, [&] { return CachedHostCalibration(cache_bytes); });
}

std::unique_ptr<CostModel> AnalyticModelFor(const emitters::Target& target,
                                            const HostCalibration& host) {
  return AnalyticModelFor(target, [&] { return host; });
}

std::unique_ptr<CostModel> AnalyticModelFor(const emitters::Target& target,
                                            const std::function<HostCalibration()>& host) {
  if (target.is_cuda()) return std::make_unique<GpuModel>();
  return std::make_unique<HostModel>(host());
}

}  // namespace tilesmith::costmodel
