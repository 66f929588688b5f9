// A Ranking backed by a cost model (costmodel/): every candidate is emitted and predicted;
// the most promising ones are then compiled so the model sees what the compiler made of
// them: a cubin's registers, shared memory and spills, or the instructions the host code
// executes. Best-first search measures in its order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "tuner/builder.h"
#include "tuner/device.h"
#include "tuner/ranking.h"

namespace tilesmith::tuner {

struct ModelRankingOptions {
  /// Candidates compiled (the best by a first prediction without compiling) and predicted
  /// again with what the compiler made of them: CUDA cubins' registers, shared memory and
  /// spills; the host's executed code (costmodel::ResourceUsage). The rest keep estimates.
  /// 0: none. Bounds the time a ranking takes.
  int64_t max_compiled = 64;
  int threads = 0;  ///< Compile threads (0: one per core).
  /// Asked between candidates: true ends the ranking early (a stopped tune); the
  /// candidates not reached are left unpredicted.
  std::function<bool()> should_stop = nullptr;
};

/// One candidate's prediction.
struct CandidatePrediction {
  int64_t candidate = 0;
  bool ok = false;
  double microseconds = 0;  ///< +infinity when not ok.
  std::string error;        ///< Why it could not be predicted.
  bool cubin = false;       ///< Predicted with the cubin's resource usage.
  bool host_code = false;   ///< Predicted with the host code's executed instructions.
  /// From the compile: registers, shared_bytes, spill_bytes (cubin) or
  /// executed_instructions, executed_divisions, … (host).
  nlohmann::json resources;
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

  /// The build of candidate `index` of `space` when the last PredictAll of that very space
  /// compiled it, else null: a tune takes it instead of compiling the candidate again.
  const BuildResult* BuiltCandidate(const Space& space, int64_t index) const;

 private:
  const costmodel::CostModel& Model() const;

  Device device_;
  std::unique_ptr<Backend> backend_;  // compiles the most promising candidates
  ModelRankingOptions options_;
  mutable std::once_flag made_;
  mutable std::unique_ptr<costmodel::CostModel> model_;
  mutable std::mutex built_mutex_;
  mutable const Space* built_space_ = nullptr;
  mutable std::map<int64_t, BuildResult> built_;  // by candidate of *built_space_
};

}  // namespace tilesmith::tuner
