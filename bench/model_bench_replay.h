// model_bench's replays and scores: a fusion's measured sample, the `model` strategy
// replayed on it, and the cross-validated scores of the analytic and learned models
// (model_bench.cc times the fusions; model_bench_replay.cc scores them).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "bench/model_bench_timings.h"
#include "costmodel/host_model.h"
#include "costmodel/model_eval.h"
#include "costmodel/training_data.h"
#include "tuner/model_strategy.h"
#include "tuner/space.h"

namespace tilesmith::bench {

inline double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n == 0 ? 0 : n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The measured sample of a fusion's space, as a strategy replay sees it.
struct MeasuredSample {
  tuner::Space space;            // the picked candidates only
  bool default_timed = false;    // a replay may have no time for a grown space's default
  std::vector<double> measured;  // µs, by candidate of `space`
  double best_us = 0;
};

struct FusionResult {
  std::string name;
  int64_t configs = 0;
  int64_t skipped = 0;  // a replay: sampled configs the timings file has no time for
  double spearman = 0;
  double share = 0;         // best-first by the model
  double random_share = 0;  // expected, random order
  double model_share = 1;   // the `model` strategy replayed on the timings (1: never found)
  bool model_found = false;
  double plain_share = 1;  // without its trust check (stops on the model's word)
  bool plain_found = false;
  double best_us = 0;
  double predicted_best_us = 0;              // measured time of the model's top pick
  std::vector<costmodel::TrainingRow> rows;  // what the learned model learns from
  std::vector<std::string> row_configs;      // the config of each row (JSON)
  std::optional<MeasuredSample> sample;      // for replays ranked by another model
};

// One model's cross-validated scores, averaged over the learned model's seeds: on a few
// hundred rows, one seed's trees differ from another's by about 0.02 in Spearman.
struct AveragedScores {
  std::string model;
  int runs = 0;
  double spearman = 0, spearman_min = 1, spearman_max = -1, kendall = 0, top1 = 0, median_top1 = 0,
         top5 = 0;
  double strategy_share = 0;   // median share of the `model` strategy ranked by this model
  double strategy_missed = 0;  // fusions it stopped short on

  void Add(const costmodel::ModelScores& scores, double share, double missed) {
    model = scores.model;
    double n = ++runs;
    auto mean = [&](double& into, double value) { into += (value - into) / n; };
    mean(spearman, scores.spearman);
    mean(kendall, scores.kendall);
    mean(top1, scores.top1_regret);
    mean(median_top1, scores.median_top1_regret);
    mean(top5, scores.top5_regret);
    mean(strategy_share, share);
    mean(strategy_missed, missed);
    spearman_min = std::min(spearman_min, scores.spearman);
    spearman_max = std::max(spearman_max, scores.spearman);
  }
  nlohmann::json ToJson() const {
    return {{"model", model},
            {"spearman", spearman},
            {"spearman_seeds", {spearman_min, spearman_max}},
            {"kendall", kendall},
            {"top1_regret", top1},
            {"median_top1_regret", median_top1},
            {"top5_regret", top5},
            {"median_model_share", strategy_share},
            {"model_strategy_missed", strategy_missed}};
  }
};

struct SeedScores {
  AveragedScores analytic, learned;
  // The held-out configs as seen uncompiled (no counted code), as `/v1/query` ranks them.
  AveragedScores analytic_estimated, learned_estimated;
  std::string description;  // the last fold's learned model
};

// A timed config as the models see it: the analytic prediction and the learned model's row.
struct PredictedConfig {
  costmodel::Prediction prediction;
  costmodel::TrainingRow row;
};

// Predicts `kernel` (counting what its optimised code executes, as a tune's builder counts it
// for the model) and makes its training row under `fusion`'s name.
Expected<PredictedConfig> PredictConfig(const std::string& fusion, const emitters::KernelIR& kernel,
                                        const costmodel::HostModel& model,
                                        const costmodel::DeviceFigures& figures,
                                        double measured_us);

MeasuredSample MakeMeasuredSample(const tuner::Space& space, const std::vector<int64_t>& picked,
                                  std::vector<double> measured);

// The `model` strategy replayed on a measured sample ranked by `predicted`: the share of the
// sample measured before a config within 5% of the best, and whether it got there.
std::pair<double, bool> ReplayModelStrategy(const MeasuredSample& sample,
                                            const std::vector<double>& predicted,
                                            const tuner::ModelGuidedOptions& options);

std::pair<double, double> ReplayAll(const std::vector<FusionResult>& results,
                                    const std::vector<double>& predicted_us);

Expected<SeedScores> CrossValidateSeeds(const std::vector<FusionResult>& results,
                                        const std::vector<costmodel::TrainingRow>& rows, int folds,
                                        int seeds, costmodel::Objective objective,
                                        const costmodel::HostCalibration& calibration);

nlohmann::json FeaturesToJson(const std::vector<float>& values);

/// costmodel::FeatureNames() as a JSON array: the columns of FeaturesToJson.
nlohmann::json FeatureNamesToJson();

nlohmann::json RowsToJson(const std::vector<FusionResult>& results);

void PrintScores(const AveragedScores& scores, const std::string& label, bool strategy = true);

}  // namespace tilesmith::bench
