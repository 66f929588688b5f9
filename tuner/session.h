// The tuning session: one fusion on one device, from the search space to the best config.
// The loop is ask → build → run → verify → commit → tell: a strategy proposes batches, the
// device's backend compiles them in parallel, a runner from the backend runs them (the
// worker runner times and verifies them one at a time in an isolated worker; the predicting
// runner predicts them where nothing can be timed), and every batch is committed to the Store
// before it is reported or told to the strategy — so a killed tune loses nothing committed
// and a rerun resumes, skipping every config already measured under the same key. What else
// happens with a batch (retraining the learned model, storing predictions) is an observer's.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "db/store.h"
#include "support/status.h"
#include "tuner/confirm.h"
#include "tuner/device.h"
#include "tuner/layouts.h"
#include "tuner/measurer.h"
#include "tuner/space.h"

namespace tilesmith::tuner {

class SessionObserver;

/// Counts the progress line shows, after every committed batch.
struct TuneProgress {
  int64_t planned = 0;  ///< Candidates the budget allows.
  int64_t compiled = 0;
  int64_t measured = 0;  ///< Trials committed (ok or failed), resumed ones included.
  int64_t failed = 0;
  std::optional<double> best_median_us;
  nlohmann::json best_config;
};

struct TuneOptions {
  std::string strategy = "model";
  int64_t budget = 0;       ///< Most candidates (0: the whole space).
  double time_limit_s = 0;  ///< No new batch after this long (0: no limit).
  uint64_t seed = 0;
  int64_t batch_size = 8;   ///< Candidates compiled together and committed together.
  int compile_threads = 0;  ///< 0: one per core.
  MeasureOptions measure;   ///< flush_bytes 0 here means "1.5x the device's cache".
  /// The `tilesmith worker` command line for this fusion (host targets).
  std::vector<std::string> worker_argv;
  /// Outputs with more elements than this are checked against the first verified
  /// candidate instead of the evaluator.
  int64_t evaluator_max_elements = int64_t{1} << 24;
  std::string source_format = "hlo";
  /// Time candidates of a target that is timed only on a device found at run time (a GPU:
  /// Backend::CanMeasure says whether one is here); false compiles and predicts them. The
  /// host is always timed.
  bool time_on_device = false;
  /// Parameters and outputs whose layout is tuned too (layouts.h); empty: the fusion's own.
  FreeLayouts free_layouts;
  std::function<void(const TuneProgress&)> on_progress;
  /// Told what the tune starts next when a stage may take long before the first batch
  /// (`ranking 72 configs with analytic-host`), so a caller can say so.
  std::function<void(const std::string&)> on_stage;
  /// Asked before every batch and candidate, between ranked candidates and every 100 ms of
  /// a measurement: true ends the tune, committing what was measured (a cancelled or
  /// interrupted service job, a Ctrl-C). Empty: never.
  std::function<bool()> should_stop;
  /// A batch of a tune split across agents: measure exactly these configs (by config hash,
  /// each in the space), not the default unless listed, and leave the winner's
  /// confirmation to the tune that concludes the split. Empty: the strategy decides.
  std::vector<std::string> configs;
  /// Stored as every trial's job id (the service's job); empty: a fresh id per tune.
  std::string job_id;
  /// Told of every committed batch and of the end, after the session's own observers
  /// (retraining a stored learned model, storing predictions). Borrowed.
  std::vector<SessionObserver*> observers;
  /// After the search, the top contenders and the default are re-timed in paired rounds
  /// (confirm_winner.h); top_k 0 turns it off, time_s 0 picks ConfirmTime.
  ConfirmOptions confirm;
};

/// One config's standing.
struct TrialSummary {
  nlohmann::json config;
  double median_us = 0;
  double p20_us = 0;
  double p80_us = 0;
  /// CUDA: "cupti-kernel" (the times are CUPTI's kernel durations) or "cuda-events"; empty
  /// for the host and for predictions.
  std::string timing_method;
  std::optional<double> event_us;  ///< CUDA: the median event time beside kernel times.
};

/// A verified trial's summary (timing required), with how it was timed.
TrialSummary SummaryOf(const db::MeasurementRecord& trial);

/// `{config, median_us, p20_us, p80_us[, timing_method, event_us]}`, or null: how the CLI's
/// and the service's answers show a summary.
nlohmann::json SummaryJson(const std::optional<TrialSummary>& summary);

/// What re-timing the top contenders beside the default concluded (confirm.h).
struct TuneVerdict {
  bool significant = false;  ///< The answer beats the default at `confidence`.
  bool reported_as_default = false;
  double speedup = 1;  ///< The answer's, over the default (1 when it is the default).
  /// The best contender's lead over the default: its interval covers 1 unless significant
  /// (`speedup_high` is infinite with fewer than two rounds).
  double speedup_low = 1;
  double speedup_high = 1;
  double confidence = 0.95;
  int64_t rounds = 0;
  int64_t contenders = 0;  ///< Re-timed beside the default.
  double seconds = 0;
  std::string method;
  std::string reason;
};

struct TuneResult {
  std::string fingerprint;
  std::string device_key;
  std::string compiler_version;
  std::string emitter;
  int64_t space_size = 0;
  int64_t candidates = 0;  ///< Valid configs.
  int64_t compiled = 0;    ///< Compiled by this run.
  int64_t compile_failed = 0;
  int64_t measured = 0;      ///< Configs with a committed trial under the key (ok or failed).
  int64_t failed = 0;        ///< Of those, failed ones.
  int64_t measured_now = 0;  ///< Trials this run committed.
  int64_t resumed = 0;       ///< Configs found in the database and not measured again.
  int64_t worker_starts = 0;
  double compile_seconds = 0;  ///< Wall time in the builder.
  double measure_seconds = 0;  ///< Wall time in the measurer.
  bool timed = true;           ///< False for CUDA targets without a GPU measurer: compiled only.
  /// Compile-only tunes: configs compiled and predicted (with their cubin's resources).
  int64_t predicted = 0;
  /// Timed: verified measurements. Compile-only: the model's predictions, each TrialSummary's
  /// three times the one predicted time; stored in the predictions table, never measured.
  std::optional<TrialSummary> best;
  std::optional<TrialSummary> default_config;
  /// default median / best median; with a verdict, the verdict's (1 when the best is the
  /// default).
  std::optional<double> speedup;
  /// The noise-aware verdict; none when it was not asked for (top_k 0), the tune was
  /// compile-only or stopped, or the default has no verified time.
  std::optional<TuneVerdict> verdict;
  /// The search's own winner when the verdict answered with another config (the default).
  std::optional<TrialSummary> search_best;
  /// Why the search ended: "space measured", "budget spent", "time limit", "stopped" (asked
  /// to), or the strategy's reason (the model strategy's convergence).
  std::string stopped;
  /// The cost model that ranked the space for `model` and best-first, and why that one.
  std::string model;
  /// When a stored learned model ranked: what retraining it on this tune's measurements did
  /// (`retrained on 24 measurements of this fusion, stored as model 7`); empty otherwise.
  std::string model_update;
};

/// One committed batch: what the store now holds of it, or the predictions made.
struct CommittedBatch {
  const Space& space;
  const db::ResultKey& key;
  /// Candidates of `space`, one per record below, in the same order.
  std::span<const int64_t> candidates;
  std::span<const db::MeasurementRecord> measurements;  ///< Committed (a measuring runner).
  std::span<const db::PredictionRecord> predictions;    ///< Made (a predicting runner).
};

/// Something that follows a tune: told of every batch once it is committed (before the
/// progress callback and the strategy hear of it) and of the end, once the winner is known.
class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  /// An error ends the tune with it (what was committed stays committed).
  virtual Status OnBatchCommitted(const CommittedBatch& batch) = 0;
  /// May add to `result` (its model_update).
  virtual void OnFinished(TuneResult& result) { (void)result; }
};

/// One verified config competing for best.
struct Contender {
  int64_t order = 0;  ///< Config order: config-hash order, as the database's view has it.
  double median_us = 0;
  double p20_us = 0;
  double p80_us = 0;
  /// Fewer is better: registers x threads, shared bytes, threads per block.
  std::array<int64_t, 3> resources = {0, 0, 0};
};

/// The winner's index: among contenders whose median is within the fastest's noise (half its
/// p20..p80 spread, between 1% and 5% of its median) of the fastest, the one with the
/// fewest resources, then the earliest in config order. The same timings always give the
/// same winner, and the one the database's best_results view names. -1 when `contenders` is
/// empty.
int64_t PickBest(std::span<const Contender> contenders);

/// Tunes the fusion of `module` on `device`, writing every trial to `store`. A CUDA device
/// without `time_cuda` compiles the candidates the strategy proposes, predicts each with the
/// model and its cubin's resources, and writes those predictions to `store`'s predictions
/// table (never as measurements); `store` may then be null (nothing is written).
Expected<TuneResult> Tune(const hlo::HloModule& module, const Device& device, db::Store* store,
                          const std::string& compiler_version, const TuneOptions& options);

}  // namespace tilesmith::tuner
