// Answers for fusions nothing was measured for: the target's best cost model ranks the
// fusion's space and the best predicted config comes back marked `source: "predicted"` with
// the model's name, never mixed with measurements. Predictions are cached per fingerprint
// and target (the model and the space do not change while the server runs).
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "db/store.h"
#include "service/fusion_input.h"
#include "service/targets.h"
#include "support/status.h"

namespace tilesmith::service {

/// For a device nothing was measured on: the best result of the same fingerprint and
/// compiler version on the nearest tuned device of the same architecture (same target and
/// compute capability; nearest by memory bandwidth, then core count, on a log scale), or
/// nothing. A config tuned on an H100 SXM is a better first answer on an H100 PCIe than any
/// model's, but it is still not a measurement of this device, and the answer says so.
Expected<std::optional<db::BestResult>> NearestTunedDevice(db::ResultStore& store,
                                                           const std::string& fingerprint,
                                                           const std::string& compiler_version,
                                                           const db::DeviceRecord& device);

class PredictionCache {
 public:
  /// `{source: "predicted", model, config, predicted_us, configs_ranked, resources}` for the
  /// fusion on `target`: the fastest prediction a compile-only tune stored for this device
  /// (`stored: true`, `resources: "cubin"` with the cubin's figures), else the config the
  /// model ranks first (without compiling cubins: `resources: "estimated"`).
  /// The model is the best `store` holds for the target's device and `compiler_version`
  /// (costmodel/model_selection.h): a stored learned model, else the analytic one.
  Expected<nlohmann::json> Predict(const FusionInput& fusion, const ServedTarget& target,
                                   db::Store& store, const std::string& compiler_version);

 private:
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, nlohmann::json> answers_;
};

}  // namespace tilesmith::service
