#include "service/predictions.h"

#include <cmath>

#include "tuner/model_ranking.h"
#include "tuner/space.h"

namespace tilesmith::service {

Expected<nlohmann::json> PredictionCache::Predict(const FusionInput& fusion,
                                                  const ServedTarget& target) {
  std::pair<std::string, std::string> key{fusion.fingerprint, target.name};
  {
    std::lock_guard lock(mutex_);
    auto cached = answers_.find(key);
    if (cached != answers_.end()) return cached->second;
  }
  TS_ASSIGN_OR_RETURN(tuner::Space space,
                      tuner::BuildSpace(*fusion.module, target.device.info, {}));
  tuner::ModelRankingOptions options;
  options.max_cubins = 0;  // a query must not wait on ptxas
  tuner::ModelRanking ranking(target.device, nullptr, options);
  std::vector<tuner::CandidatePrediction> predictions = ranking.PredictAll(space);
  const tuner::CandidatePrediction* best = nullptr;
  for (const tuner::CandidatePrediction& prediction : predictions) {
    if (!prediction.ok || !std::isfinite(prediction.microseconds)) continue;
    if (best == nullptr || prediction.microseconds < best->microseconds) best = &prediction;
  }
  if (best == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the " + ranking.model_name() + " model could not predict any of " +
                         std::to_string(space.candidates.size()) + " configs");
  }
  nlohmann::json answer = {
      {"source", "predicted"},
      {"model", ranking.model_name()},
      {"config", space.candidates[static_cast<size_t>(best->candidate)].config},
      {"predicted_us", best->microseconds},
      {"configs_ranked", predictions.size()},
      {"is_default", best->candidate == space.default_index},
      {"resources", "estimated"}};
  std::lock_guard lock(mutex_);
  answers_.emplace(key, answer);
  return answer;
}

}  // namespace tilesmith::service
