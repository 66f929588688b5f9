#include "costmodel/cost_model.h"

#include "costmodel/gpu_model.h"
#include "costmodel/host_model.h"

namespace tilesmith::costmodel {

ResourceUsage ResourceUsageFromStats(const nlohmann::json& stats) {
  auto field = [&](const char* name) -> int64_t {
    return stats.is_object() && stats.contains(name) && stats[name].is_number_integer()
               ? stats[name].get<int64_t>()
               : 0;
  };
  return {.registers = field("registers"),
          .shared_bytes = field("shared_bytes"),
          .spill_bytes = field("spill_bytes")};
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
