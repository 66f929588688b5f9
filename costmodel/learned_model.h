// The learned cost model: gradient-boosted trees (XGBoost's C API) over the features of
// features.h, trained per device from measured times, correcting the analytic model of
// the target rather than replacing it. Below a data threshold it answers with the analytic
// model and says so. It retrains incrementally (a bounded number of extra boosting rounds
// on the new rows plus a bounded replay of old ones), so a tuning session can retrain after
// every measured batch without retraining time growing with the data.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "costmodel/learned_selection.h"
#include "db/models.h"

namespace tilesmith::costmodel {

/// One measured candidate as the model learns from it.
struct TrainingRow {
  std::string fusion;           ///< Fingerprint: a fusion's rows form one ranking group.
  std::vector<float> features;  ///< KernelFeatures(), FeatureNames() order.
  double measured_us = 0;       ///< The measured median.
  double analytic_us = 0;       ///< The analytic model's prediction of the same kernel.
  /// The same kernel as a ranking sees it before anything is compiled: features and
  /// analytic time without the compiler's resource usage (no cubin, no counted code).
  /// Empty when the row itself was made without usage. Training learns from both, so a
  /// model fitted to compiled candidates still ranks the ones nobody compiled: `/v1/query`
  /// compiles nothing, and a large space compiles only its most promising candidates.
  std::vector<float> estimate_features;
  double estimate_analytic_us = 0;
  /// The features carry the compiler's resource usage (a cubin's, or the host code's
  /// counts). Such rows are ranked by trees trained on compiled rows only, and rows
  /// without it (estimates) by trees trained on estimates only: on 30 host fusions
  /// (bench/model_bench, two timing runs replayed, 5-fold over fusions) one set of trees
  /// for both ranked held-out compiled configs at a mean Spearman of 0.772 / 0.789, trees
  /// of their own at 0.782 / 0.796, and estimates no worse (0.619 / 0.636 against 0.620 /
  /// 0.622).
  bool compiled = false;
};

/// `row`'s estimate as a row of its own (same fusion, time and config; estimate features
/// and analytic time; not compiled). `row` must carry one.
TrainingRow EstimateRow(const TrainingRow& row);

/// The row of a measured kernel: features and the analytic prediction computed here, with
/// and (when `usage` is known) without `usage`.
Expected<TrainingRow> MakeTrainingRow(std::string fusion, const emitters::KernelIR& kernel,
                                      const DeviceFigures& device, const ResourceUsage* usage,
                                      const CostModel& analytic, double measured_us);

/// What the trees learn. Both start from the analytic model's time (XGBoost's base margin
/// is log(analytic µs)), so they learn a correction and keep the analytic model's scale on
/// fusions unlike any they were trained on — trees cannot extrapolate, a correction can.
enum class Objective {
  /// reg:squarederror on log(measured µs): predicts times, so `predict` can show them and a
  /// tuner can compare a predicted gain with the measurement noise. The default, though it
  /// ranks a little worse: on 30 host fusions (48 configs each, two timing runs, 5-fold
  /// cross-validation over fusions, 3 seeds; bench/model_bench) it had mean Spearman 0.763
  /// and 0.725 against pairwise's 0.784 and 0.734, and top-5 regret 4.9% / 7.5% against
  /// 5.8% / 7.0%.
  /// But pairwise's "µs" are only an order: on earlier runs, for 80% of held-out configs they
  /// were off by factors of 0.09 to 3.8 (log-time's 0.4 to 2.2), and `predict`, `/v1/query`
  /// and a CUDA tune without a GPU answer with them as times.
  kLogTime,
  /// rank:pairwise within each fusion on -log(measured µs): only the order within a fusion
  /// is learned; the "µs" it reports are exp(-score), comparable within one fusion only.
  kPairwise,
};
std::string_view ObjectiveName(Objective objective);  ///< `log-time`, `pairwise`
Expected<Objective> ParseObjective(std::string_view name);

struct LearnedModelOptions {
  Objective objective = Objective::kLogTime;
  /// Below either threshold the analytic model answers (too little data to trust trees).
  int64_t min_rows = 200;
  int64_t min_fusions = 5;
  /// Boosting rounds of a full training. 200 overfit the bench's fusions: replayed on two
  /// timing runs (bench/model_bench, 30 host fusions, 5-fold over fusions), pairwise ranked
  /// held-out fusions at a Spearman of 0.773 and 0.740 with 200 rounds, 0.781 and 0.750 with
  /// 100 (log-time 0.723 / 0.672 and 0.720 / 0.670).
  int rounds = 100;
  /// The share of the trees' correction a prediction applies: log(time) is log(analytic
  /// µs) plus this times the trees' correction. The trees are trained on the whole of it;
  /// halving it at prediction keeps held-out fusions whose analytic ranking was already
  /// right from being pulled off it by corrections learned on other fusions. Replayed on
  /// two timing runs (bench/model_bench, 30 host fusions, 5-fold over fusions, 3 seeds, in
  /// Python), a half raised log-time's mean Spearman from 0.747 / 0.766 to 0.777 / 0.789
  /// and pairwise's from 0.768 / 0.802 to 0.780 / 0.808 (a quarter, three quarters and the
  /// whole all scored lower).
  double correction_share = 0.5;
  /// Boosters per kind of row, seeded `seed`, `seed + 1`, …, whose corrections are
  /// averaged: one booster's trees depend on its seed's row and column samples by about
  /// 0.02 in Spearman on the bench's fusions, and an average of 3 ranked held-out compiled
  /// configs at 0.785 / 0.801 where one scored 0.782 / 0.796 (5: 0.787 / 0.801).
  int bag = 3;
  int retrain_rounds = 20;     ///< Extra rounds per incremental retrain.
  int max_rounds = 600;        ///< Past this many trees a retrain starts afresh (on a sample).
  int64_t max_rows = 20000;    ///< Rows kept for training (a seeded reservoir sample beyond).
  int64_t replay_rows = 2000;  ///< Old rows replayed beside the new ones in a retrain.
  int max_depth = 5;
  double eta = 0.1;
  double min_child_weight = 2;
  double subsample = 0.8;
  double colsample = 0.8;
  int threads = 1;  ///< XGBoost's nthread; 1 keeps training bit-for-bit reproducible.
  uint64_t seed = 0;
};

/// A learned model over an analytic one. Thread-safe: Predict and Retrain may be called
/// from different threads (they serialise on the booster).
class LearnedModel : public CostModel {
 public:
  /// `analytic` is the target's analytic model (features and fallback). Untrained until
  /// Retrain() has seen enough rows.
  explicit LearnedModel(std::unique_ptr<CostModel> analytic, LearnedModelOptions options = {});
  ~LearnedModel() override;
  LearnedModel(const LearnedModel&) = delete;
  LearnedModel& operator=(const LearnedModel&) = delete;

  /// A stored model (db::ModelRecord of format `xgboost-json-bags`) over `analytic`;
  /// refuses one of another feature schema or format.
  static Expected<std::unique_ptr<LearnedModel>> FromRecord(const db::ModelRecord& record,
                                                            std::unique_ptr<CostModel> analytic,
                                                            LearnedModelOptions options = {});

  /// `learned-xgboost` when trained; otherwise the analytic model's name (it answers).
  std::string_view name() const override;
  Expected<Prediction> Predict(const emitters::KernelIR& kernel, const DeviceFigures& device,
                               const ResourceUsage* usage) const override;

  /// Learns from newly measured rows: trains from scratch once the thresholds are met,
  /// afterwards adds `retrain_rounds` trees fitted to `rows` and a replay of older rows, and
  /// starts afresh on a bounded sample once `max_rounds` trees exist. Bounded in time by
  /// (rows + replay_rows) x retrain_rounds, or max_rows x rounds for a fresh start.
  Status Retrain(std::span<const TrainingRow> rows);

  /// Predicted µs of rows whose features are already computed (evaluation); the analytic
  /// times when untrained.
  Expected<std::vector<double>> PredictRows(std::span<const TrainingRow> rows) const;

  bool trained() const;
  /// One line on which model answers and why: `learned-xgboost (1203 measurements, 9
  /// fusions, 3 x 100 trees for compiled and estimated rows, log-time)` or
  /// `analytic-host (fallback: 120 measurements < 200)`.
  std::string Describe() const;
  int64_t training_rows() const;  ///< Rows learned from, over every retrain.
  int64_t fusions() const;        ///< Distinct fusions among them.
  int boosted_rounds() const;     ///< Of each booster (0 untrained).
  /// Whether compiled rows have trees of their own (else the estimates' trees rank them,
  /// from their estimates): only once `min_rows` compiled rows of `min_fusions` fusions
  /// were seen.
  bool compiled_trained() const;
  const LearnedModelOptions& options() const { return options_; }

  /// Where the trees answer (per emitter); elsewhere the analytic model does, in Predict
  /// and PredictRows alike. Stored with the model (ToRecord, FromRecord). Undecided by
  /// default: the trees answer everywhere.
  void set_selection(LearnedSelection selection);
  LearnedSelection selection() const;
  const CostModel& analytic() const { return *analytic_; }

  /// The model as a record for db::ModelStore::PutModel (XGBoost's JSON).
  Expected<db::ModelRecord> ToRecord(const std::string& device_key,
                                     const std::string& compiler_version) const;

 private:
  // The two kinds of rows, each with its own bag of boosters.
  enum Kind { kCompiledRows = 0, kEstimatedRows = 1 };
  Status TrainFresh(std::span<const TrainingRow> rows);
  Status Boost(Kind kind, std::span<const TrainingRow> rows, int rounds);
  void Free(Kind kind);
  bool TrainedLocked() const { return !boosters_[kEstimatedRows].empty(); }
  int RoundsLocked() const;
  Expected<std::vector<double>> PredictLocked(std::span<const TrainingRow> rows) const;
  Expected<std::vector<double>> PredictKind(Kind kind, std::span<const TrainingRow> rows) const;
  void Keep(std::span<const TrainingRow> rows);
  std::string FallbackReason() const;

  std::unique_ptr<CostModel> analytic_;
  LearnedModelOptions options_;
  mutable std::mutex mutex_;
  // BoosterHandles by Kind (`bag` each, or none); estimates' empty until trained.
  std::array<std::vector<void*>, 2> boosters_;
  std::vector<TrainingRow> pool_;          // reservoir of rows seen (bounded by max_rows)
  int64_t seen_rows_ = 0;                  // including a loaded model's training rows
  std::vector<std::string> seen_fusions_;  // sorted; since this object was made
  int64_t loaded_fusions_ = 0;             // a loaded model's count
  std::mt19937_64 random_;
  LearnedSelection selection_;
};

/// The name a trained learned model answers with.
inline constexpr char kLearnedModelName[] = "learned-xgboost";

}  // namespace tilesmith::costmodel
