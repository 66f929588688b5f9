#include "service/predictions.h"

#include "costmodel/model_selection.h"
#include "tuner/backends/build_stats.h"
#include "tuner/model_ranking.h"
#include "tuner/space.h"

namespace tilesmith::service {

Expected<std::optional<db::BestResult>> NearestTunedDevice(db::ResultStore& store,
                                                           const std::string& fingerprint,
                                                           const std::string& compiler_version,
                                                           const db::DeviceRecord& device) {
  TS_ASSIGN_OR_RETURN(
      std::vector<db::BestResult> results,
      store.ListBest({.fingerprint = fingerprint, .compiler_version = compiler_version}));
  std::optional<db::BestResult> nearest;
  double nearest_distance = 0;
  std::string own_key = device.Key();
  for (db::BestResult& result : results) {
    const std::string& key = result.measurement.key.device_key;
    if (key == own_key) continue;
    TS_ASSIGN_OR_RETURN(std::optional<db::DeviceRecord> other, store.GetDevice(key));
    if (!other || !costmodel::SameArchitecture(*other, device)) continue;
    double distance = costmodel::DeviceDistance(*other, device);
    if (!nearest || distance < nearest_distance ||
        (distance == nearest_distance && key < nearest->measurement.key.device_key)) {
      nearest = std::move(result);
      nearest_distance = distance;
    }
  }
  return nearest;
}

Expected<nlohmann::json> PredictionCache::Predict(const FusionInput& fusion,
                                                  const ServedTarget& target, db::Store& store,
                                                  const std::string& compiler_version) {
  // A compile-only tune of this device stored predictions made with each candidate's real
  // cubin: those beat a ranking that estimates resources. Read every time (not cached), as
  // a tune may store them while the server runs.
  TS_ASSIGN_OR_RETURN(
      std::vector<db::PredictionRecord> stored,
      store.Predictions({fusion.fingerprint, target.device.record.Key(), compiler_version}));
  if (!stored.empty() && stored.front().predicted_us) {
    const db::PredictionRecord& best = stored.front();  // fastest verified first
    const costmodel::ResourceUsage usage = tuner::BuildStats::FromJson(best.compile_stats).usage;
    nlohmann::json resources = nlohmann::json::object();
    if (usage.has_cubin()) {
      resources = {{"registers", usage.registers},
                   {"shared_bytes", usage.shared_bytes},
                   {"spill_bytes", usage.spill_bytes}};
    }
    return nlohmann::json{{"source", "predicted"},
                          {"model", best.model},
                          {"config", best.config},
                          {"predicted_us", *best.predicted_us},
                          {"configs_ranked", stored.size()},
                          {"is_default", best.is_default},
                          {"resources", "cubin"},
                          {"cubin", resources},
                          {"stored", true},
                          {"predicted_at", best.predicted_at}};
  }
  std::pair<std::string, std::string> key{fusion.fingerprint, target.name};
  {
    std::lock_guard lock(mutex_);
    auto cached = answers_.find(key);
    if (cached != answers_.end()) return cached->second;
  }
  TS_ASSIGN_OR_RETURN(tuner::Space space,
                      tuner::BuildSpace(*fusion.module, target.device.info, {}));
  tuner::ModelRankingOptions options;
  options.max_compiled = 0;  // a query must not wait on ptxas or LLVM
  costmodel::ModelChoice model =
      costmodel::BestModelFor(target.device.target, target.device.cache_bytes, &store,
                              target.device.record, compiler_version);
  tuner::ModelRanking ranking(target.device, std::move(model.model), options);
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
