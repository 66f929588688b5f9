#include "tuner/session.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/hlo/canonical.h"
#include "costmodel/model_selection.h"
#include "tuner/backends/backend.h"
#include "tuner/builder.h"
#include "tuner/confirm_winner.h"
#include "tuner/layouts.h"
#include "tuner/model_ranking.h"
#include "tuner/session_observers.h"
#include "tuner/space.h"
#include "tuner/strategy.h"

namespace tilesmith::tuner {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A temporary directory for the first verified candidate's outputs, removed with it.
class ReferenceDir {
 public:
  ReferenceDir() {
    std::string pattern = (fs::temp_directory_path() / "tilesmith-reference-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ReferenceDir() {
    std::error_code error;
    if (!path_.empty()) fs::remove_all(path_, error);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Everything the session needs while it runs.
struct Session {
  Session(const hlo::HloComputation& fusion, const Backend& backend, db::Store* store,
          const TuneOptions& options)
      : fusion(fusion), backend(backend), store(store), options(options) {}

  const hlo::HloComputation& fusion;
  const Backend& backend;
  // Null for a predicting session that stores nothing.
  db::Store* store;
  const TuneOptions& options;
  // What ranks the space; its compiled candidates' builds are reused.
  const ModelRanking* ranking = nullptr;
  // Predicting sessions: the model's name and why it was chosen, and every prediction made.
  std::string model_name;
  std::string model_description;
  std::vector<db::PredictionRecord> predictions;
  Space space;
  db::ResultKey key;
  std::string job_id = db::NewUid();
  std::unique_ptr<Runner> runner;
  std::vector<SessionObserver*> observers;
  TuneResult result;
  TuneProgress progress;

  bool Stopping() const { return options.should_stop && options.should_stop(); }

  // Builds the batch; candidates the ranking compiled already are not compiled again.
  std::vector<BuildResult> Build(const std::vector<int64_t>& batch) {
    std::vector<BuildResult> builds(batch.size());
    std::vector<BuildRequest> requests;
    std::vector<size_t> requested;  // positions in `batch` of `requests`
    for (size_t i = 0; i < batch.size(); ++i) {
      const BuildResult* built = ranking ? ranking->BuiltCandidate(space, batch[i]) : nullptr;
      if (built != nullptr) {
        builds[i] = *built;
        continue;
      }
      const Candidate& candidate = space.candidates[batch[i]];
      requests.push_back({&space.AnalysisOf(candidate), EmitterConfig(candidate.config)});
      requested.push_back(i);
    }
    auto compile_start = Clock::now();
    std::vector<BuildResult> compiled =
        BuildBatch(requests, backend, options.compile_threads, options.should_stop);
    for (size_t k = 0; k < requested.size(); ++k) builds[requested[k]] = std::move(compiled[k]);
    result.compile_seconds += SecondsSince(compile_start);
    return builds;
  }

  // Runs one built candidate; nullopt when a stop cancelled it (nothing to store or tell).
  std::optional<RunResult> Run(const Candidate& candidate, const BuildResult& build) {
    if (!build.ok) {
      RunResult failed;
      failed.status = db::TrialStatus::kCompile;
      failed.message = build.message;
      return failed;
    }
    nlohmann::json emitter_config = EmitterConfig(candidate.config);
    auto run_start = Clock::now();
    RunResult run =
        runner->Run({candidate.config, space.AnalysisOf(candidate), emitter_config, build.stats});
    if (runner->measures()) result.measure_seconds += SecondsSince(run_start);
    if (run.cancelled) return std::nullopt;
    return run;
  }

  db::MeasurementRecord Measurement(const Candidate& candidate, const BuildResult& build,
                                    RunResult run) const {
    db::MeasurementRecord record;
    record.key = key;
    record.emitter = space.variants[candidate.variant].emitter;
    record.config = candidate.config;
    record.is_default = candidate.is_default;
    BuildStats stats = build.stats;
    stats.worker_compile_ms = run.worker_compile_ms;
    record.compile_stats = stats.ToJson();
    run.figures.AddTo(record.compile_stats);
    record.job_id = job_id;
    record.status = run.status;
    record.message = std::move(run.message);
    record.verification_error = run.verification_error;
    record.timing = run.timing;
    return record;
  }

  db::PredictionRecord Prediction(const Candidate& candidate, const BuildResult& build,
                                  RunResult run) const {
    db::PredictionRecord prediction;
    prediction.key = key;
    prediction.emitter = space.variants[candidate.variant].emitter;
    prediction.config = candidate.config;
    prediction.is_default = candidate.is_default;
    prediction.model = model_name;
    prediction.model_description = model_description;
    prediction.compile_stats = build.stats.ToJson();
    prediction.job_id = job_id;
    prediction.status = run.status;
    prediction.message = std::move(run.message);
    prediction.predicted_us = run.predicted_us;
    prediction.breakdown = std::move(run.breakdown);
    return prediction;
  }

  // Builds, runs and commits one batch; returns what the strategy is told.
  Expected<std::vector<TrialOutcome>> RunBatch(const std::vector<int64_t>& batch) {
    std::vector<BuildResult> builds = Build(batch);
    std::vector<db::MeasurementRecord> records;
    std::vector<int64_t> run_candidates;  // one per record or prediction below
    std::vector<TrialOutcome> outcomes;
    const size_t predicted_before = predictions.size();
    for (size_t i = 0; i < batch.size(); ++i) {
      // A stop skips the rest of the batch: what was measured is committed, the rest is
      // neither stored nor told (a skipped compile is no compile failure).
      if (Stopping()) break;
      const Candidate& candidate = space.candidates[batch[i]];
      const BuildResult& build = builds[i];
      ++(build.ok ? result.compiled : result.compile_failed);
      std::optional<RunResult> run = Run(candidate, build);
      if (!run) break;
      TrialOutcome outcome{batch[i], false, 0};
      if (run->timing) outcome = {batch[i], true, run->timing->median_us};
      if (run->predicted_us) outcome = {batch[i], true, *run->predicted_us};
      if (runner->measures()) {
        records.push_back(Measurement(candidate, build, std::move(*run)));
      } else {
        predictions.push_back(Prediction(candidate, build, std::move(*run)));
      }
      run_candidates.push_back(batch[i]);
      outcomes.push_back(outcome);
    }
    // Committed before anything about this batch is reported (DESIGN.md, "Durability").
    if (!records.empty()) TS_RETURN_IF_ERROR(store->RecordBatch(records));
    std::span<const db::PredictionRecord> fresh(predictions.begin() + predicted_before,
                                                predictions.end());
    if (!records.empty() || !runner->measures()) {
      CommittedBatch committed{space, key, run_candidates, records, fresh};
      for (SessionObserver* observer : observers) {
        TS_RETURN_IF_ERROR(observer->OnBatchCommitted(committed));
      }
    }
    for (const db::MeasurementRecord& record : records) {
      ++progress.measured;
      ++result.measured_now;
      if (record.status != db::TrialStatus::kOk) {
        ++progress.failed;
      } else if (!progress.best_median_us || record.timing->median_us < *progress.best_median_us) {
        progress.best_median_us = record.timing->median_us;
        progress.best_config = record.config;
      }
    }
    progress.compiled = result.compiled;
    if (options.on_progress) options.on_progress(progress);
    return outcomes;
  }

  // The best and default of a predicting session, by predicted time (ties: config order).
  void ConcludePredicted() {
    const db::PredictionRecord* best = nullptr;
    for (const db::PredictionRecord& prediction : predictions) {
      if (!prediction.predicted_us) continue;
      ++result.predicted;
      if (prediction.is_default) {
        result.default_config = {prediction.config,
                                 *prediction.predicted_us,
                                 *prediction.predicted_us,
                                 *prediction.predicted_us,
                                 "",
                                 {}};
      }
      if (best == nullptr || *prediction.predicted_us < *best->predicted_us) best = &prediction;
    }
    if (best != nullptr) {
      result.best = {
          best->config, *best->predicted_us, *best->predicted_us, *best->predicted_us, "", {}};
    }
    if (result.best && result.default_config && result.best->median_us > 0) {
      result.speedup = result.default_config->median_us / result.best->median_us;
    }
  }

  // The latest trial of every config under the key.
  Expected<std::map<std::string, db::MeasurementRecord>> LatestTrials() {
    db::ResultFilter filter{key.fingerprint, key.device_key, key.compiler_version};
    TS_ASSIGN_OR_RETURN(std::vector<db::MeasurementRecord> trials, store->Measurements(filter));
    std::map<std::string, db::MeasurementRecord> latest;
    for (db::MeasurementRecord& trial : trials) {
      TS_ASSIGN_OR_RETURN(std::string hash, db::ConfigHash(trial.config));
      latest[hash] = std::move(trial);
    }
    return latest;
  }

  Status Conclude() {
    TS_ASSIGN_OR_RETURN(auto latest, LatestTrials());
    std::vector<Contender> contenders;
    std::vector<const db::MeasurementRecord*> trials;
    for (const auto& [hash, trial] : latest) {
      ++result.measured;
      if (trial.status != db::TrialStatus::kOk || !trial.timing) {
        ++result.failed;
        continue;
      }
      // Config order is config-hash order (`latest` is sorted by hash), the order the
      // database's best_results view breaks ties in, so both name the same winner.
      int64_t order = static_cast<int64_t>(contenders.size());
      BuildStats stats = BuildStats::FromJson(trial.compile_stats);
      int64_t threads = stats.threads_per_block;
      contenders.push_back({order,
                            trial.timing->median_us,
                            trial.timing->p20_us,
                            trial.timing->p80_us,
                            {stats.usage.registers * std::max<int64_t>(threads, 1),
                             stats.usage.shared_bytes, threads}});
      trials.push_back(&trial);
    }
    if (int64_t winner = PickBest(contenders); winner >= 0)
      result.best = SummaryOf(*trials[winner]);
    auto found = latest.find(space.candidates[space.default_index].config_hash);
    if (found != latest.end() && found->second.status == db::TrialStatus::kOk) {
      result.default_config = SummaryOf(found->second);
    }
    if (result.best && result.default_config && result.best->median_us > 0) {
      result.speedup = result.default_config->median_us / result.best->median_us;
    }
    return OkStatus();
  }
};

int64_t OutputElements(const hlo::HloComputation& fusion) {
  int64_t elements = 0;
  for (const hlo::Shape* leaf : emitters::ArrayLeaves(fusion.root()->shape())) {
    elements += leaf->ElementCount();
  }
  return elements;
}

}  // namespace

TrialSummary SummaryOf(const db::MeasurementRecord& trial) {
  TimingFigures figures = TimingFigures::FromStats(trial.compile_stats);
  return {trial.config,         trial.timing->median_us, trial.timing->p20_us,
          trial.timing->p80_us, figures.method,          figures.event_us};
}

nlohmann::json SummaryJson(const std::optional<TrialSummary>& summary) {
  if (!summary) return nullptr;
  nlohmann::json out = {{"config", summary->config},
                        {"median_us", summary->median_us},
                        {"p20_us", summary->p20_us},
                        {"p80_us", summary->p80_us}};
  if (!summary->timing_method.empty()) out["timing_method"] = summary->timing_method;
  if (summary->event_us) out["event_us"] = *summary->event_us;
  return out;
}

int64_t PickBest(std::span<const Contender> contenders) {
  if (contenders.empty()) return -1;
  size_t fastest = 0;
  for (size_t i = 1; i < contenders.size(); ++i) {
    const Contender& a = contenders[i];
    const Contender& b = contenders[fastest];
    if (a.median_us < b.median_us || (a.median_us == b.median_us && a.order < b.order)) fastest = i;
  }
  const Contender& best = contenders[fastest];
  // Half the fastest's p20..p80 spread, kept within 1%..5% of its median: a noisy fastest
  // must not turn a clearly slower config into a tie.
  double noise =
      std::clamp((best.p80_us - best.p20_us) / 2, 0.01 * best.median_us, 0.05 * best.median_us);
  size_t winner = fastest;
  for (size_t i = 0; i < contenders.size(); ++i) {
    const Contender& c = contenders[i];
    if (c.median_us > best.median_us + noise) continue;
    const Contender& w = contenders[winner];
    if (c.resources < w.resources || (c.resources == w.resources && c.order < w.order)) winner = i;
  }
  return static_cast<int64_t>(winner);
}

Expected<TuneResult> Tune(const hlo::HloModule& module, const Device& device, db::Store* store,
                          const std::string& compiler_version, const TuneOptions& options) {
  const hlo::HloComputation& fusion = *module.fusion();
  std::unique_ptr<Backend> backend = MakeBackend(device);
  Session session(fusion, *backend, store, options);
  TS_ASSIGN_OR_RETURN(session.space, BuildSpace(module, device.info, options.free_layouts));
  const Space& space = session.space;
  TS_ASSIGN_OR_RETURN(std::string fingerprint, hlo::FusionFingerprint(module));
  session.key = {fingerprint, device.record.Key(), compiler_version};
  if (!options.job_id.empty()) session.job_id = options.job_id;
  TuneResult& result = session.result;
  result.fingerprint = fingerprint;
  result.device_key = session.key.device_key;
  result.compiler_version = compiler_version;
  result.emitter = space.emitter;
  result.space_size = space.total();
  result.candidates = static_cast<int64_t>(space.candidates.size());
  result.timed = backend->MeasuresWithoutDevice() || options.time_on_device;

  // The model and best-first strategies rank with the stored learned model for this device
  // and compiler when there is one, else the target's analytic model.
  costmodel::ModelChoice model = costmodel::BestModelFor(device.target, device.cache_bytes, store,
                                                         device.record, compiler_version);
  result.model = model.description;
  const costmodel::CostModel& predictor = *model.model;
  session.model_name = std::string(predictor.name());
  session.model_description = model.description;
  ModelRanking ranking(device, std::move(model.model), {.should_stop = options.should_stop});
  if (options.on_stage && (options.strategy == "model" || options.strategy == "best-first")) {
    options.on_stage("ranking " + std::to_string(space.candidates.size()) + " configs with " +
                     model.description);
  }
  session.ranking = &ranking;
  std::unique_ptr<Strategy> strategy;
  const bool listed = !options.configs.empty();
  if (listed) {
    std::vector<int64_t> candidates;
    for (const std::string& hash : options.configs) {
      int64_t index = space.Find(hash);
      if (index < 0) {
        return InvalidArgument("config " + hash.substr(0, 12) +
                               "… is not in this fusion's space here (another compiler "
                               "version, or other free layouts?)");
      }
      candidates.push_back(index);
    }
    strategy = MakeListedStrategy(space, std::move(candidates));
  } else {
    TS_ASSIGN_OR_RETURN(strategy, MakeStrategy(options.strategy, space,
                                               {.budget = options.budget,
                                                .seed = options.seed,
                                                .ranking = &ranking,
                                                .told_predictions = !result.timed}));
  }
  session.progress.planned = listed ? strategy->budget()
                             : options.budget > 0
                                 ? std::min<int64_t>(options.budget, result.candidates)
                                 : result.candidates;

  ReferenceDir reference_dir;
  MeasureOptions measure = options.measure;
  if (measure.flush_bytes == 0) measure.flush_bytes = device.cache_bytes * 3 / 2;
  if (measure.flush_bytes < 0) measure.flush_bytes = 0;
  if (OutputElements(fusion) > options.evaluator_max_elements) {
    measure.reference = reference_dir.path();
  }
  // The session's own observers first, then the caller's.
  std::optional<RetrainingObserver> retraining;
  std::optional<PredictionRecorder> recorder;
  std::map<std::string, db::MeasurementRecord> known;
  if (result.timed) {
    if (options.worker_argv.empty()) return InvalidArgument("no worker command to measure with");
    if (store == nullptr) return InvalidArgument("a timed tune needs a results store");
    TS_RETURN_IF_ERROR(backend->CheckRunnable(fusion));
    session.runner = backend->MakeWorkerRunner(options.worker_argv, measure, options.should_stop);
    if (model.stored && model.learned != nullptr) {
      session.observers.push_back(&retraining.emplace(*model.learned, device, *store));
    }
  } else {
    session.runner = backend->MakePredictingRunner(predictor);
    if (store != nullptr) session.observers.push_back(&recorder.emplace(*store));
  }
  session.observers.insert(session.observers.end(), options.observers.begin(),
                           options.observers.end());
  if (store != nullptr) {
    TS_RETURN_IF_ERROR(store->PutDevice(device.record));
    TS_RETURN_IF_ERROR(store->PutKernel(
        {fingerprint, options.source_format, fusion.name(), hlo::CanonicalFusionText(module)}));
  }
  if (result.timed) {
    TS_ASSIGN_OR_RETURN(known, session.LatestTrials());
  }

  // Resume: whatever the database holds under this key is told, not measured again.
  std::vector<TrialOutcome> resumed;
  for (const auto& [hash, trial] : known) {
    int64_t index = space.Find(hash);
    if (index < 0) continue;
    bool ok = trial.status == db::TrialStatus::kOk && trial.timing.has_value();
    resumed.push_back({index, ok, ok ? trial.timing->median_us : 0});
    ++session.progress.measured;
    session.progress.failed += !ok;
  }
  result.resumed = static_cast<int64_t>(resumed.size());
  if (listed) {
    // Other batches' trials are not this batch's budget.
    std::set<std::string> wanted(options.configs.begin(), options.configs.end());
    std::erase_if(resumed, [&](const TrialOutcome& outcome) {
      return !wanted.contains(space.candidates[outcome.candidate].config_hash);
    });
  }
  strategy->Tell(resumed);

  auto start = Clock::now();
  // The default is always run, first, so the speedup has a baseline.
  if (!listed && !session.Stopping() &&
      !known.contains(space.candidates[space.default_index].config_hash)) {
    TS_ASSIGN_OR_RETURN(auto outcomes, session.RunBatch({space.default_index}));
    strategy->Tell(outcomes);
  }
  result.stopped = "time limit";
  while (options.time_limit_s <= 0 || SecondsSince(start) < options.time_limit_s) {
    if (session.Stopping()) {
      result.stopped = "stopped";
      break;
    }
    std::vector<int64_t> batch = strategy->Ask(std::max<int64_t>(1, options.batch_size));
    if (batch.empty()) {
      result.stopped = !strategy->stop_reason().empty()         ? strategy->stop_reason()
                       : strategy->spent() >= result.candidates ? "space measured"
                                                                : "budget spent";
      break;
    }
    TS_ASSIGN_OR_RETURN(auto outcomes, session.RunBatch(batch));
    strategy->Tell(outcomes);
  }
  result.worker_starts = session.runner->worker_starts();
  if (session.runner->measures()) {
    TS_RETURN_IF_ERROR(session.Conclude());
    if (!listed && !session.Stopping() && session.runner->measurer() != nullptr) {
      TS_RETURN_IF_ERROR(
          ConfirmWinner({store, session.key, space.candidates[space.default_index].config,
                         session.runner->measurer(), measure, options.confirm, SecondsSince(start),
                         session.job_id, options.should_stop},
                        result));
    }
  } else {
    session.ConcludePredicted();
  }
  for (SessionObserver* observer : session.observers) observer->OnFinished(result);
  return result;
}

}  // namespace tilesmith::tuner
