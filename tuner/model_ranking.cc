#include "tuner/model_ranking.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "compiler/emitters/emitter_registry.h"
#include "tuner/builder.h"
#include "tuner/layouts.h"

namespace tilesmith::tuner {

ModelRanking::ModelRanking(const Device& device, std::unique_ptr<costmodel::CostModel> model,
                           ModelRankingOptions options)
    : device_(device), backend_(MakeBackend(device)), options_(options), model_(std::move(model)) {}

const costmodel::CostModel& ModelRanking::Model() const {
  std::call_once(made_, [&] {
    if (!model_) model_ = costmodel::AnalyticModelFor(device_.target, device_.cache_bytes);
  });
  return *model_;
}

std::string ModelRanking::model_name() const { return std::string(Model().name()); }

const BuildResult* ModelRanking::BuiltCandidate(const Space& space, int64_t index) const {
  std::lock_guard lock(built_mutex_);
  if (built_space_ != &space) return nullptr;
  auto found = built_.find(index);
  return found == built_.end() ? nullptr : &found->second;
}

std::vector<double> ModelRanking::PredictUs(const Space& space) const {
  std::vector<double> times;
  for (const CandidatePrediction& prediction : PredictAll(space)) {
    times.push_back(prediction.microseconds);
  }
  return times;
}

std::vector<CandidatePrediction> ModelRanking::PredictAll(const Space& space) const {
  const costmodel::CostModel& model = Model();
  costmodel::DeviceFigures figures{device_.info, device_.cache_bytes};
  std::vector<CandidatePrediction> predictions(space.candidates.size());
  std::vector<std::optional<emitters::KernelIR>> kernels(space.candidates.size());
  auto predict = [&](size_t i, const costmodel::ResourceUsage* usage) {
    CandidatePrediction& prediction = predictions[i];
    auto predicted = model.Predict(*kernels[i], figures, usage);
    prediction.ok = predicted.has_value();
    if (!predicted) {
      prediction.error = predicted.error().message;
      prediction.microseconds = std::numeric_limits<double>::infinity();
      return;
    }
    prediction.microseconds = predicted->microseconds;
    prediction.breakdown = std::move(predicted->breakdown);
  };
  auto stopped = [&] { return options_.should_stop && options_.should_stop(); };
  for (size_t i = 0; i < space.candidates.size(); ++i) {
    const Candidate& candidate = space.candidates[i];
    predictions[i].candidate = static_cast<int64_t>(i);
    if (stopped()) {
      predictions[i].error = "the tune was stopped before this candidate was ranked";
      predictions[i].microseconds = std::numeric_limits<double>::infinity();
      continue;
    }
    auto kernel = emitters::EmitKernel(space.AnalysisOf(candidate), EmitterConfig(candidate.config),
                                       device_.info);
    if (!kernel) {
      predictions[i].error = kernel.error().message;
      predictions[i].microseconds = std::numeric_limits<double>::infinity();
      continue;
    }
    kernels[i] = std::move(*kernel);
    predict(i, nullptr);
  }
  if (options_.max_compiled <= 0 || stopped()) return predictions;

  // The most promising candidates, compiled and predicted again with what the compiler made
  // of them (ptxas's resources, or the host code's executed instructions).
  std::vector<int64_t> order(predictions.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return predictions[a].microseconds < predictions[b].microseconds;
  });
  std::vector<int64_t> compiled;
  std::vector<BuildRequest> requests;
  for (int64_t i : order) {
    if (static_cast<int64_t>(compiled.size()) == options_.max_compiled) break;
    if (!predictions[i].ok) continue;
    compiled.push_back(i);
    const Candidate& candidate = space.candidates[i];
    requests.push_back({&space.AnalysisOf(candidate), EmitterConfig(candidate.config)});
  }
  std::vector<BuildResult> built =
      BuildBatch(requests, *backend_, options_.threads, options_.should_stop);
  {
    std::lock_guard lock(built_mutex_);
    built_space_ = &space;
    built_.clear();
    for (size_t k = 0; k < compiled.size(); ++k) {
      if (built[k].ok || built[k].message != kBuildCancelled) built_[compiled[k]] = built[k];
    }
  }
  for (size_t k = 0; k < compiled.size(); ++k) {
    CandidatePrediction& prediction = predictions[compiled[k]];
    if (!built[k].ok) {
      // Keep the estimate: a missing toolkit must not turn the ranking into noise.
      prediction.breakdown["compile_error"] = built[k].message;
      continue;
    }
    costmodel::ResourceUsage usage = built[k].stats.usage;
    predict(compiled[k], &usage);
    prediction.cubin = prediction.ok && usage.has_cubin();
    prediction.host_code = prediction.ok && usage.has_host_code();
    prediction.resources = nlohmann::json::object();
    costmodel::AddResourceUsageToStats(usage, prediction.resources);
  }
  return predictions;
}

}  // namespace tilesmith::tuner
