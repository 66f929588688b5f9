#include "costmodel/cost_model.h"

#include <algorithm>
#include <array>

#include "costmodel/gpu_model.h"
#include "costmodel/host_model.h"

namespace tilesmith::costmodel {

namespace {

constexpr const char* kExecutedFields[] = {"executed_instructions", "executed_divisions",
                                           "executed_memory", "executed_vector",
                                           "executed_branches"};

std::array<double*, 5> ExecutedFigures(ResourceUsage& usage) {
  return {&usage.executed_instructions, &usage.executed_divisions, &usage.executed_memory,
          &usage.executed_vector, &usage.executed_branches};
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
  auto figures = ExecutedFigures(usage);
  for (size_t i = 0; i < figures.size(); ++i) {
    const char* name = kExecutedFields[i];
    if (stats.is_object() && stats.contains(name) && stats[name].is_number()) {
      *figures[i] = std::max(0.0, stats[name].get<double>());
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
    ResourceUsage copy = usage;
    auto figures = ExecutedFigures(copy);
    for (size_t i = 0; i < figures.size(); ++i) stats[kExecutedFields[i]] = *figures[i];
  }
}

std::unique_ptr<CostModel> AnalyticModelFor(const emitters::Target& target, int64_t cache_bytes) {
  if (target.is_cuda()) return std::make_unique<GpuModel>();
  return std::make_unique<HostModel>(CachedHostCalibration(cache_bytes));
}

std::unique_ptr<CostModel> AnalyticModelFor(const emitters::Target& target,
                                            const HostCalibration& host) {
  if (target.is_cuda()) return std::make_unique<GpuModel>();
  return std::make_unique<HostModel>(host);
}

}  // namespace tilesmith::costmodel
