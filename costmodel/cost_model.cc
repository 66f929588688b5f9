#include "costmodel/cost_model.h"

#include "costmodel/gpu_model.h"
#include "costmodel/host_model.h"

namespace tilesmith::costmodel {

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
