#include "bench/model_bench_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>

#include "costmodel/features.h"
#include "costmodel/host_model.h"
#include "costmodel/ranking_metrics.h"
#include "tuner/builder.h"
#include "tuner/ranking.h"
#include "tuner/strategy.h"

namespace tilesmith::bench {
namespace {

// The model's predictions of a (sampled) space, for a strategy to rank by.
class FixedRanking : public tuner::Ranking {
 public:
  explicit FixedRanking(std::vector<double> predicted) : predicted_(std::move(predicted)) {}
  std::vector<double> PredictUs(const tuner::Space&) const override { return predicted_; }

 private:
  std::vector<double> predicted_;
};

}  // namespace

Expected<PredictedConfig> PredictConfig(const std::string& fusion, const emitters::KernelIR& kernel,
                                        const costmodel::HostModel& model,
                                        const costmodel::DeviceFigures& figures,
                                        double measured_us) {
  TS_ASSIGN_OR_RETURN(costmodel::ResourceUsage usage, tuner::CountHostUsage(kernel));
  PredictedConfig config;
  TS_ASSIGN_OR_RETURN(config.prediction, model.Predict(kernel, figures, &usage));
  TS_ASSIGN_OR_RETURN(
      config.row, costmodel::MakeTrainingRow(fusion, kernel, figures, &usage, model, measured_us));
  return config;
}

MeasuredSample MakeMeasuredSample(const tuner::Space& space, const std::vector<int64_t>& picked,
                                  std::vector<double> measured) {
  MeasuredSample sample{space, false, std::move(measured), 0};
  sample.space.candidates.clear();
  sample.space.default_index = 0;
  for (size_t i = 0; i < picked.size(); ++i) {
    if (picked[i] == space.default_index) {
      sample.space.default_index = static_cast<int64_t>(i);
      sample.default_timed = true;
    }
    sample.space.candidates.push_back(space.candidates[picked[i]]);
  }
  sample.best_us = *std::min_element(sample.measured.begin(), sample.measured.end());
  return sample;
}

// Replays the `model` strategy over the measured sample, ranked by `predicted`: it asks for
// batches of 8, is told their measured times, and the share is how many it had asked for
// when the first config within 5% of the best was told. `found` is false when it stopped
// (converged) first.
std::pair<double, bool> ReplayModelStrategy(const MeasuredSample& sample,
                                            const std::vector<double>& predicted,
                                            const tuner::ModelGuidedOptions& options) {
  const std::vector<double>& measured = sample.measured;
  const double good_us = 1.05 * sample.best_us;
  const double size = static_cast<double>(measured.size());
  FixedRanking ranking(predicted);
  std::unique_ptr<tuner::Strategy> strategy =
      tuner::MakeModelGuidedStrategy(sample.space, 0, ranking, options);
  int64_t asked = 0;
  auto tell = [&](const std::vector<int64_t>& batch) {
    std::vector<tuner::TrialOutcome> outcomes;
    bool good = false;
    for (int64_t index : batch) {
      outcomes.push_back({index, true, measured[index]});
      good |= measured[index] <= good_us;
    }
    strategy->Tell(outcomes);
    return good;
  };
  // As a tune does: the default first (unless a replay has no time for it), then the
  // strategy's batches.
  if (sample.default_timed) {
    ++asked;
    if (tell({sample.space.default_index})) return {static_cast<double>(asked) / size, true};
  }
  while (true) {
    std::vector<int64_t> batch = strategy->Ask(8);
    if (batch.empty()) return {1.0, false};
    for (size_t k = 0; k < batch.size(); ++k) {
      ++asked;
      if (measured[batch[k]] <= good_us) {
        tell(batch);
        return {static_cast<double>(asked) / size, true};
      }
    }
    tell(batch);
  }
}

// The `model` strategy replayed over every fusion, ranked by `predicted_us` (rows in
// `results` order): its median share and how many fusions it stopped short on.
std::pair<double, double> ReplayAll(const std::vector<FusionResult>& results,
                                    const std::vector<double>& predicted_us) {
  std::vector<double> shares;
  double missed = 0;
  size_t next = 0;
  for (const FusionResult& r : results) {
    std::vector<double> predicted(predicted_us.begin() + next,
                                  predicted_us.begin() + next + r.rows.size());
    next += r.rows.size();
    auto [share, found] = ReplayModelStrategy(*r.sample, predicted, {});
    shares.push_back(share);
    missed += !found;
  }
  return {Median(shares), missed};
}

// Cross-validates a learned model of `objective` over fusions once per seed, and replays
// the `model` strategy ranked by each held-out prediction (what a tune ranks with once a
// stored model was trained on other fusions).
Expected<SeedScores> CrossValidateSeeds(const std::vector<FusionResult>& results,
                                        const std::vector<costmodel::TrainingRow>& rows, int folds,
                                        int seeds, costmodel::Objective objective,
                                        const costmodel::HostCalibration& calibration) {
  SeedScores scores;
  for (int seed = 0; seed < seeds; ++seed) {
    costmodel::LearnedModelOptions options;
    options.min_rows = 50;  // a bench run holds a few hundred rows, not a tuned fleet's
    options.min_fusions = 3;
    options.objective = objective;
    options.seed = static_cast<uint64_t>(seed);
    TS_ASSIGN_OR_RETURN(
        costmodel::Evaluation evaluation,
        costmodel::CrossValidate(
            rows, folds, [&] { return std::make_unique<costmodel::HostModel>(calibration); },
            options));
    auto [share, missed] = ReplayAll(results, evaluation.heldout_learned_us);
    scores.analytic.Add(evaluation.analytic, 0, 0);
    scores.learned.Add(evaluation.learned, share, missed);
    if (evaluation.analytic_estimated && evaluation.learned_estimated) {
      scores.analytic_estimated.Add(*evaluation.analytic_estimated, 0, 0);
      scores.learned_estimated.Add(*evaluation.learned_estimated, 0, 0);
    }
    scores.description = evaluation.learned_description;
  }
  return scores;
}

// Features as JSON numbers, a missing one as null.
nlohmann::json FeaturesToJson(const std::vector<float>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (float value : values) {
    out.push_back(std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value));
  }
  return out;
}

nlohmann::json FeatureNamesToJson() {
  auto names = costmodel::FeatureNames();
  return std::vector<std::string>(names.begin(), names.end());
}

// Every fusion's training rows with their configs and feature names, for analysing the
// learned model's inputs outside the bench (`--dump-rows`), compiled and as estimated before
// compiling (what `/v1/query` ranks).
nlohmann::json RowsToJson(const std::vector<FusionResult>& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (const FusionResult& r : results) {
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const costmodel::TrainingRow& row = r.rows[i];
      rows.push_back({{"fusion", r.name},
                      {"config", r.row_configs[i]},
                      {"measured_us", row.measured_us},
                      {"analytic_us", row.analytic_us},
                      {"features", FeaturesToJson(row.features)},
                      {"estimate_analytic_us", row.estimate_analytic_us},
                      {"estimate_features", FeaturesToJson(row.estimate_features)}});
    }
  }
  return {{"feature_names", FeatureNamesToJson()}, {"rows", std::move(rows)}};
}

void PrintScores(const AveragedScores& scores, const std::string& label, bool strategy) {
  std::string name = label.empty() ? scores.model : scores.model + " " + label;
  char range[32] = "", share[32] = "-";
  if (scores.spearman_max > scores.spearman_min) {
    std::snprintf(range, sizeof(range), "%.3f-%.3f", scores.spearman_min, scores.spearman_max);
  }
  if (strategy) {
    std::snprintf(share, sizeof(share), "%.1f%%+%.0f", 100 * scores.strategy_share,
                  scores.strategy_missed);
  }
  std::printf("%-28s %9.3f %13s %9.3f %12.1f%% %12.1f%% %12.1f%% %9s\n", name.c_str(),
              scores.spearman, range, scores.kendall, 100 * scores.top1, 100 * scores.median_top1,
              100 * scores.top5, share);
}

}  // namespace tilesmith::bench
