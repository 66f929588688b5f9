// A Ranking backed by a cost model (costmodel/): every candidate is emitted and predicted;
// for CUDA targets the most promising ones are compiled to cubins first so the model sees
// their real registers, shared memory and spills. Best-first search measures in its order.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "tuner/device.h"
#include "tuner/ranking.h"

namespace tilesmith::tuner {

struct ModelRankingOptions {
  /// CUDA targets: candidates compiled to cubins (the best by a first prediction without
  /// them); the rest keep estimated resources. 0: none. Bounds the time a ranking takes.
  int64_t max_cubins = 64;
  int threads = 0;  ///< Compile threads (0: one per core).
};

/// One candidate's prediction.
struct CandidatePrediction {
  int64_t candidate = 0;
  bool ok = false;
  double microseconds = 0;   ///< +infinity when not ok.
  std::string error;         ///< Why it could not be predicted.
  bool cubin = false;        ///< Predicted with the cubin's resource usage.
  nlohmann::json resources;  ///< registers, shared_bytes, spill_bytes from the cubin.
  nlohmann::json breakdown;
};

class ModelRanking : public Ranking {
 public:
  /// Ranks with `model`; null: the target's analytic model, made on first use.
  explicit ModelRanking(const Device& device, std::unique_ptr<costmodel::CostModel> model = nullptr,
                        ModelRankingOptions options = {});

  std::vector<double> PredictUs(const Space& space) const override;
  /// Every candidate of `space`, in order.
  std::vector<CandidatePrediction> PredictAll(const Space& space) const;
  /// The model that answers (`analytic-gpu`, `analytic-host`, …).
  std::string model_name() const;

 private:
  const costmodel::CostModel& Model() const;

  Device device_;
  ModelRankingOptions options_;
  mutable std::once_flag made_;
  mutable std::unique_ptr<costmodel::CostModel> model_;
};

}  // namespace tilesmith::tuner
