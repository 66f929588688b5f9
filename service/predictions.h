// Answers for fusions nothing was measured for: the target's analytic cost model ranks the
// fusion's space and the best predicted config comes back marked `source: "predicted"` with
// the model's name, never mixed with measurements. Predictions are cached per fingerprint
// and target (the model and the space do not change while the server runs).
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "service/fusion_input.h"
#include "service/targets.h"
#include "support/status.h"

namespace tilesmith::service {

class PredictionCache {
 public:
  /// `{source: "predicted", model, config, predicted_us, configs_ranked, resources}` for the
  /// fusion on `target`: the config the model ranks first (without compiling cubins: the
  /// resources are the model's estimate, as the answer says).
  Expected<nlohmann::json> Predict(const FusionInput& fusion, const ServedTarget& target);

 private:
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, nlohmann::json> answers_;
};

}  // namespace tilesmith::service
