// Held-out evaluation of the learned model against the analytic one (`tilesmith model
// eval`, the model bench): train on some fusions, rank the configs of the others with both
// models, and compare the orders with the measured one.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/training_data.h"

namespace tilesmith::costmodel {

/// One model on one held-out fusion.
struct FusionScore {
  std::string fusion;
  int64_t configs = 0;
  double spearman = 0;
  double kendall = 0;
  double top1_regret = 0;  ///< Measured time of the predicted best over the best, minus 1.
  double top5_regret = 0;  ///< The same for the best of the predicted five.
};

/// One model over every held-out fusion (means; regrets also as medians).
struct ModelScores {
  std::string model;
  double spearman = 0;
  double kendall = 0;
  double top1_regret = 0;
  double top5_regret = 0;
  double median_top1_regret = 0;
  std::vector<FusionScore> fusions;
};

struct Evaluation {
  int64_t train_rows = 0;
  int64_t train_fusions = 0;
  int64_t heldout_rows = 0;
  int64_t heldout_fusions = 0;
  std::string learned_description;  ///< LearnedModel::Describe() of the model trained.
  bool learned_trained = false;     ///< False: below the threshold, the analytic answered.
  ModelScores analytic;
  ModelScores learned;
  /// CrossValidate only: every input row's learned prediction (µs) by the fold's model that
  /// never saw the row's fusion, in input order (a held-out ranking to replay a search with).
  std::vector<double> heldout_learned_us;
  /// When every held-out row carries its estimate (TrainingRow::estimate_features): both
  /// models ranking the held-out configs as seen before anything is compiled, as
  /// `/v1/query` ranks them.
  std::optional<ModelScores> analytic_estimated, learned_estimated;
  /// With ScoreWithinFusion: the features' ceiling on the held-out fusions.
  std::optional<ModelScores> within_fusion;
  nlohmann::json ToJson() const;
};

/// Scores predictions of held-out rows, fusion by fusion (fusions with one config are
/// left out: nothing to rank).
ModelScores Score(const std::string& model, const std::vector<TrainingRow>& rows,
                  const std::vector<double>& predicted_us);

/// Trains a fresh learned model on the fusions HeldOutFusions(rows, holdout) leaves in and
/// scores both models on the held-out ones. `analytic` is only the fallback's name source
/// and is moved into the learned model.
Expected<Evaluation> EvaluateHeldOut(const std::vector<TrainingRow>& rows, double holdout,
                                     std::unique_ptr<CostModel> analytic,
                                     const LearnedModelOptions& options);

/// K-fold cross-validation over fusions: fusion i (in sorted order) is held out in fold
/// i mod `folds`, a fresh learned model is trained on the other folds, and every fusion is
/// scored once, by a model that never saw it. `make_analytic` gives each fold's analytic
/// model. `train_*` are per fold (the mean), `heldout_*` everything; `learned_description`
/// is the last fold's; `learned_trained` holds when every fold trained.
Expected<Evaluation> CrossValidate(const std::vector<TrainingRow>& rows, int folds,
                                   const std::function<std::unique_ptr<CostModel>()>& make_analytic,
                                   const LearnedModelOptions& options);

/// Where the learned model should answer: K-fold cross-validation over `rows`' fusions
/// (CrossValidate), each held-out fusion counted for the emitter most of its rows use, and
/// per emitter with at least kMinSelectionFusions held-out fusions whose mean paired
/// difference of Spearman exceeds its standard error, the model with the higher mean
/// answers; other emitters follow the comparison over every held-out fusion. A tie goes to
/// the analytic model.
Expected<LearnedSelection> DecideSelection(
    const std::vector<TrainingRow>& rows, int folds,
    const std::function<std::unique_ptr<CostModel>()>& make_analytic,
    const LearnedModelOptions& options);

/// How FitWithinFusion splits and fits one fusion's configs.
struct WithinFusionOptions {
  int folds = 4;      ///< Each config predicted by trees fitted on the other folds.
  int max_depth = 2;  ///< Shallow: a fold holds 20-30 configs.
  int rounds = 100;   ///< At the learned model's learning rate.
  uint64_t seed = 0;  ///< The configs' shuffle into folds, and the trees' sampling.
};

/// What the features can tell about one fusion's configs at best: every row's prediction
/// (µs) by the learned model's trees fitted, K-fold over the configs, to the same fusion's
/// other rows (log time, the analytic time from `make_analytic` as the margin, the whole
/// correction applied). No deployable model has seen the times of the fusion it ranks, so
/// this is the models' ceiling in practice (not a proof: on one fusion, what 24 of its
/// configs teach can be less than what many other fusions do): where it trails the
/// run-to-run agreement, the features miss what decides the times; where the models trail
/// it, the features hold it and the transfer from other fusions fails. `rows` must be one
/// fusion's, at least two; fewer rows than folds: a row a fold.
Expected<std::vector<double>> FitWithinFusion(
    const std::vector<TrainingRow>& rows,
    const std::function<std::unique_ptr<CostModel>()>& make_analytic,
    const WithinFusionOptions& options = {});

/// FitWithinFusion for every fusion of `rows` listed in `fusions` (those with two configs or
/// more), scored as model "within each fusion".
Expected<ModelScores> ScoreWithinFusion(
    const std::vector<TrainingRow>& rows, const std::vector<std::string>& fusions,
    const std::function<std::unique_ptr<CostModel>()>& make_analytic,
    const WithinFusionOptions& options = {});

}  // namespace tilesmith::costmodel
