// `tilesmith sweep SWEEP.json`: tunes every (fusion, target) a sweep file names, one after
// another, into one results database, and ends with a table of speedups. Finished pairs are
// recorded beside the database (sweep_state.h) so `--resume` skips them; an interrupted tune
// is resumed by the tuner itself, which never measures a committed config again.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <thread>

#include "db/open_store.h"
#include "support/log.h"
#include "support/sha256.h"
#include "tools/commands.h"
#include "tools/fusion_loader.h"
#include "tools/sweep_distribute.h"
#include "tools/sweep_file.h"
#include "tools/sweep_report.h"
#include "tools/sweep_state.h"
#include "tools/tune_support.h"
#include "tuner/layouts.h"
#include "tuner/strategy.h"

namespace tilesmith::tools {
namespace {

using nlohmann::json;

constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report it

// Ctrl-C (SIGINT) and SIGTERM, taken by a thread with sigwait: the first asks the sweep to
// stop, committing the candidates of the batch in flight measured so far (the tuner stops
// within a candidate's compile or a fraction of a second of measuring), a second ends the
// process at once. The signals stay
// blocked in every thread, and in the workers (a blocked mask survives fork and exec), so a
// Ctrl-C at a terminal, which reaches the whole process group, kills no worker mid-candidate.
class InterruptWatch {
 public:
  InterruptWatch() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
    thread_ = std::thread([this] { Watch(); });
  }
  ~InterruptWatch() {
    done_ = true;
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  bool interrupted() const { return interrupted_.load(); }

 private:
  static void Say(const char* text) {
    [[maybe_unused]] ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  }
  void Watch() {
    timespec tick = {0, 100'000'000};
    while (!done_) {
      if (sigtimedwait(&signals_, nullptr, &tick) < 0) continue;
      if (!interrupted_.exchange(true)) {
        Say("\nsweep: interrupted; committing the candidates measured so far — "
            "interrupt again to stop at once\n");
      } else {
        Say("\nsweep: stopped at once; the batch in flight is lost, every committed one is "
            "kept — rerun with --resume\n");
        _exit(kExitInterrupted);
      }
    }
  }

  sigset_t signals_;
  sigset_t previous_;
  std::atomic<bool> interrupted_ = false;
  std::atomic<bool> done_ = false;
  std::thread thread_;
};

using Pair = SweepPair;

// Checks every target and strategy before anything runs, and lists the pairs in order.
Expected<std::vector<Pair>> PlanPairs(const SweepFile& sweep,
                                      std::map<std::string, tuner::Device>* devices) {
  std::vector<Pair> pairs;
  const std::vector<std::string>& strategies = tuner::StrategyNames();
  for (const SweepFusion& fusion : sweep.fusions) {
    const SweepSettings& settings = fusion.settings;
    if (std::find(strategies.begin(), strategies.end(), settings.strategy) == strategies.end()) {
      return InvalidArgument(sweep.path + ": error: " + settings.strategy_from +
                             ": unknown strategy '" + settings.strategy + "' (" +
                             tuner::StrategyNamesText() + ")");
    }
    for (size_t i = 0; i < settings.targets.size(); ++i) {
      const std::string& target = settings.targets[i];
      if (!devices->contains(target)) {
        auto named = sweep.devices.find(target);
        auto device = tuner::ResolveDevice(
            target, named == sweep.devices.end() ? "" : named->second, tuner::DefaultDevicesDir());
        if (!device) {
          std::string where = settings.targets_from + "[" + std::to_string(i) + "]";
          std::string hint = device.error().code == ErrorCode::kNotFound
                                 ? " (a sweep names it in \"devices\": {\"" + target + "\": ID})"
                                 : "";
          return MakeError(device.error().code,
                           sweep.path + ": error: " + where + ": " + device.error().message + hint);
        }
        devices->emplace(target, std::move(*device));
      }
      pairs.push_back({&fusion, target, &devices->at(target)});
    }
  }
  return pairs;
}

// What makes a finished pair the same pair: the file as it is now, the device, the
// settings and the compiler.
std::string PairKey(const Pair& pair) {
  struct stat info = {};
  stat(pair.fusion->path.c_str(), &info);
  json key = {{"path", pair.fusion->path},
              {"size", static_cast<int64_t>(info.st_size)},
              {"mtime_ns",
               static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec},
              {"target", pair.target},
              {"device", pair.device->record.Key()},
              {"settings", pair.fusion->settings.ToJson()},
              {"compiler_version", TILESMITH_COMPILER_VERSION}};
  auto hash = Sha256Hex(key.dump());
  return hash ? *hash : key.dump();
}

// The sweep's progress on stderr: one line per pair, redrawn after every committed batch on
// a terminal.
class Progress {
 public:
  Progress(bool quiet, size_t total) : quiet_(quiet), total_(total) {}

  void Start(size_t index, const SweepRow& row) {
    prefix_ = "sweep " + std::to_string(index + 1) + "/" + std::to_string(total_) + "  " +
              row.fusion + "  " + row.target + "  ";
  }
  void Batch(const tuner::TuneProgress& progress) {
    if (quiet_ || !terminal_) return;
    std::cerr << "\r\033[K" << prefix_
              << Counts(progress.measured, progress.planned, progress.failed,
                        progress.best_median_us)
              << std::flush;
  }
  void Finish(const SweepRow& row) {
    if (quiet_) return;
    std::string what;
    if (row.status == "error") {
      what = "error: " + row.error;
    } else if (row.status == "compiled") {
      what = "compiled " + std::to_string(row.compiled) + "/" +
             std::to_string(row.compiled + row.compile_failed) + ", not timed (no GPU here); " +
             std::to_string(row.predicted) + " predictions stored" +
             (row.predicted_us ? ", best predicted " + Micros(*row.predicted_us) + " us" : "") +
             (row.model.empty() ? "" : " by " + row.model);
    } else {
      what = (row.status == "done" ? "" : row.status + ": ") +
             Counts(row.measured, row.planned, row.failed, row.best_us);
      if (row.status == "done") what += ", " + std::to_string(row.measured_now) + " new";
    }
    std::cerr << (terminal_ ? "\r\033[K" : "") << prefix_ << what << "\n" << std::flush;
  }

 private:
  static std::string Counts(int64_t measured, int64_t planned, int64_t failed,
                            std::optional<double> best) {
    return "measured " + std::to_string(measured) + "/" + std::to_string(planned) + ", failed " +
           std::to_string(failed) + (best ? ", best " + Micros(*best) + " us" : std::string());
  }

  bool quiet_;
  bool terminal_ = isatty(STDERR_FILENO);
  size_t total_;
  std::string prefix_;
};

// Whether the database still holds what the state says a finished pair measured (or, for
// a compile-only pair, predicted: one recorded before sweeps stored predictions says 0 and
// is tuned again).
bool StillStored(db::Store& store, const SweepRow& row) {
  if (row.status == "compiled") {
    if (row.predicted == 0) return false;
    auto predictions = store.Predictions({row.fingerprint, row.device, TILESMITH_COMPILER_VERSION});
    return predictions && static_cast<int64_t>(predictions->size()) >= row.predicted;
  }
  if (row.status != "done" && row.status != "failed") return false;
  auto measured = store.MeasuredConfigs({row.fingerprint, row.device, TILESMITH_COMPILER_VERSION});
  return measured && static_cast<int64_t>(measured->size()) >= row.measured;
}

struct RunContext {
  db::Store* store;
  const tuner::CudaDriverProbe* driver;
  const InterruptWatch* watch;
  Progress* progress;
};

// Failed trials under the row's key by status, each with its count and one message.
json FailureSummary(db::ResultStore& store, const SweepRow& row) {
  json failures = json::object();
  auto trials = store.Measurements({row.fingerprint, row.device, TILESMITH_COMPILER_VERSION});
  if (!trials) return failures;
  for (const db::MeasurementRecord& trial : *trials) {
    if (trial.status == db::TrialStatus::kOk) continue;
    json& entry = failures[std::string(db::TrialStatusName(trial.status))];
    if (entry.is_null()) entry = {{"count", 0}, {"example", trial.message}};
    entry["count"] = entry["count"].get<int64_t>() + 1;
  }
  return failures;
}

// Tunes one pair into `row`.
void TunePair(const Pair& pair, const RunContext& context, SweepRow* row) {
  auto started = std::chrono::steady_clock::now();
  const SweepSettings& settings = pair.fusion->settings;
  auto loaded = LoadSweepFusion(*pair.fusion);
  if (!loaded) {
    row->status = "error";
    row->error = loaded.error().message;
    return;
  }
  tuner::TuneOptions options;
  auto free = tuner::ParseFreeLayouts(settings.free_layouts, *loaded->module->fusion());
  if (!free) {
    row->status = "error";
    row->error = free.error().message;
    return;
  }
  options.free_layouts = *free;
  options.strategy = settings.strategy;
  options.budget = settings.budget;
  options.time_limit_s = settings.time_s;
  options.seed = settings.seed;
  options.batch_size = settings.batch;
  options.measure.warmup_ms = settings.warmup_ms;
  options.measure.budget_ms = settings.rep_ms;
  options.measure.timeout_ms = settings.timeout_ms;
  options.measure.flush_bytes = settings.flush ? 0 : -1;
  options.source_format = loaded->request ? "ascgraph" : "hlo";
  options.time_on_device = CanTime(*pair.device, *context.driver);
  options.worker_argv = WorkerArgv(pair.fusion->path, *pair.device, pair.fusion->InputFlags());
  options.on_progress = [&](const tuner::TuneProgress& progress) {
    row->planned = progress.planned;
    context.progress->Batch(progress);
  };
  bool stopped = false;
  options.should_stop = [&] { return stopped = context.watch->interrupted(); };
  // Without a GPU a CUDA pair is compiled and ranked by the cost model, and its predictions
  // are stored as such (as `tune` stores them), for `/v1/query` to answer from.
  auto result = tuner::Tune(*loaded->module, *pair.device, context.store,
                            TILESMITH_COMPILER_VERSION, options);
  row->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!result) {
    row->status = "error";
    row->error = result.error().message;
    return;
  }
  row->fingerprint = result->fingerprint;
  row->device = result->device_key;
  row->emitter = result->emitter;
  row->planned =
      settings.budget > 0 ? std::min(settings.budget, result->candidates) : result->candidates;
  row->measured = result->measured;
  row->measured_now = result->measured_now;
  row->failed = result->failed;
  row->compiled = result->compiled;
  row->compile_failed = result->compile_failed;
  row->model = result->model;
  if (!result->timed) {
    // The tune's times are the cost model's here; a sweep's table holds measurements only,
    // so the prediction goes to its own fields.
    row->status = "compiled";
    row->predicted = result->predicted;
    if (result->best) {
      row->predicted_us = result->best->median_us;
      row->predicted_config = result->best->config;
    }
    return;
  }
  if (result->default_config) row->default_us = result->default_config->median_us;
  if (result->best) {
    row->best_us = result->best->median_us;
    row->best_config = result->best->config;
  }
  row->speedup = result->speedup;
  if (result->verdict) {
    row->speedup_low = result->verdict->speedup_low;
    if (std::isfinite(result->verdict->speedup_high)) {
      row->speedup_high = result->verdict->speedup_high;
    }
    row->significant = result->verdict->significant;
  }
  if (result->failed > 0) row->failures = FailureSummary(*context.store, *row);
  if (stopped && row->measured < row->planned) {
    row->status = "interrupted";
  } else {
    row->status = result->best ? "done" : "failed";
  }
}

int RunSweep(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one sweep file (see docs/sweeps.md)");
    return kExitUsage;
  }
  auto sweep = ReadSweepFile(args.positionals()[0]);
  if (!sweep) return ReportError(sweep.error().message);
  bool quiet = args.Has("quiet");
  if (GetLogLevel() <= LogLevel::kWarning) {
    for (const std::string& warning : sweep->warnings) std::cerr << "warning: " << warning << "\n";
  }
  std::map<std::string, tuner::Device> devices;
  auto planned = PlanPairs(*sweep, &devices);
  if (!planned) return ReportError(planned.error().message);
  const std::vector<Pair>& pairs = *planned;
  std::string db_path = ResolveDbPath(args.Get("db"));

  if (args.Has("dry-run")) {
    json list = json::array();
    for (const Pair& pair : pairs) {
      list.push_back({{"fusion", pair.fusion->name},
                      {"path", pair.fusion->path},
                      {"entry", pair.fusion->entry},
                      {"target", pair.target},
                      {"device", pair.device->record.Key()},
                      {"settings", pair.fusion->settings.ToJson()},
                      {"input_flags", pair.fusion->InputFlags()}});
    }
    if (args.Has("json")) {
      std::cout << json{{"sweep", sweep->name},
                        {"database", db::DescribeLocation(db_path)},
                        {"pairs", list}}
                       .dump(2)
                << "\n";
    } else {
      for (const json& pair : list) {
        const json& settings = pair["settings"];
        std::cout << pair["fusion"].get<std::string>() << "  " << pair["target"].get<std::string>()
                  << "  " << settings["strategy"].get<std::string>() << ", budget "
                  << settings["budget"] << "\n";
      }
      std::cout << pairs.size() << " (fusion, target) pairs, " << sweep->fusions.size()
                << " fusions\n";
    }
    return kExitOk;
  }

  InterruptWatch watch;  // before any thread starts, so that every thread inherits the mask
  if (!args.Has("distribute") && (args.Has("unit-configs") || args.Has("any-device"))) {
    ReportError(std::string(args.Has("unit-configs") ? "--unit-configs" : "--any-device") +
                " applies to a distributed sweep: add --distribute");
    return kExitUsage;
  }
  if (args.Has("distribute")) {
    DistributeOptions distribute;
    distribute.db_location = db_path;
    distribute.json = args.Has("json");
    distribute.quiet = quiet;
    distribute.any_device = args.Has("any-device");
    auto unit_configs = args.GetInteger("unit-configs", 0, 0, 1'000'000);
    if (!unit_configs) {
      ReportError(unit_configs.error().message);
      return kExitUsage;
    }
    distribute.unit_configs = *unit_configs;
    distribute.interrupted = [&watch] { return watch.interrupted(); };
    return RunDistributedSweep(*sweep, pairs, distribute);
  }
  tuner::CudaDriverProbe driver;
  bool any_needs_driver = std::any_of(pairs.begin(), pairs.end(), [](const Pair& pair) {
    return TimedOnlyWithDevice(*pair.device);
  });
  if (any_needs_driver) driver = tuner::ProbeCudaDriver();
  auto opened = db::OpenStore(db_path);
  if (!opened) return ReportError(opened.error().message);
  std::unique_ptr<db::Store> store = std::move(*opened);
  std::string state_path = SweepState::PathFor(db_path);
  // The state is a shortcut: a damaged one is left alone and the sweep runs without it.
  std::optional<SweepState> state;
  if (auto loaded = SweepState::Load(state_path); loaded) {
    state = std::move(*loaded);
  } else {
    std::cerr << "warning: " << loaded.error().message << "; every pair is tuned again\n";
  }

  if (!quiet) {
    std::cerr << "sweep " << sweep->name << ": " << sweep->fusions.size()
              << (sweep->fusions.size() == 1 ? " fusion, " : " fusions, ") << pairs.size()
              << (pairs.size() == 1 ? " (fusion, target) pair" : " (fusion, target) pairs")
              << " into " << db_path << (args.Has("resume") ? " (resuming)" : "") << "\n";
  }
  Progress progress(quiet, pairs.size());
  RunContext context{store.get(), &driver, &watch, &progress};
  std::vector<SweepRow> rows;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Pair& pair = pairs[i];
    SweepRow row;
    row.fusion = pair.fusion->name;
    row.path = pair.fusion->path;
    row.target = pair.target;
    row.device = pair.device->record.Key();
    if (watch.interrupted()) {
      rows.push_back(std::move(row));  // not run
      continue;
    }
    progress.Start(i, row);
    std::string key = PairKey(pair);
    const json* recorded = args.Has("resume") && state ? state->Find(key) : nullptr;
    std::optional<SweepRow> finished =
        recorded != nullptr ? SweepRow::FromJson(*recorded) : std::nullopt;
    if (finished && StillStored(*store, *finished)) {
      row = std::move(*finished);
      row.fusion = pair.fusion->name;
      row.measured_now = 0;
      row.seconds = 0;
      if (row.status == "done") row.status = "resumed";
    } else {
      TunePair(pair, context, &row);
      if (state && (row.status == "done" || row.status == "compiled" || row.status == "failed")) {
        if (auto recorded = state->Record(key, row.ToJson()); !recorded) {
          TS_LOG(kWarning) << "could not record the sweep's progress: " << recorded.error().message;
        }
      }
    }
    progress.Finish(row);
    rows.push_back(std::move(row));
  }

  bool interrupted = watch.interrupted();
  if (args.Has("json")) {
    std::cout
        << TableJson(rows, sweep->name, db_path, TILESMITH_COMPILER_VERSION, interrupted).dump(2)
        << "\n";
  } else {
    PrintTable(std::cout, rows);
  }
  std::cout << std::flush;
  for (const auto& [target, device] : devices) {
    if (!CanTime(device, driver)) {
      std::cerr << "note: " << target << " was compiled only, not timed: " << driver.message
                << "\n";
    }
  }
  if (interrupted) {
    size_t done = std::count_if(rows.begin(), rows.end(), [](const SweepRow& row) {
      return row.status == "done" || row.status == "resumed" || row.status == "compiled" ||
             row.status == "failed";
    });
    std::cerr << "sweep interrupted after " << done << " of " << rows.size()
              << " pairs; every committed batch is kept. Rerun with --resume to go on:\n  "
              << "tilesmith sweep " << sweep->path << " --db " << db_path << " --resume\n";
    return kExitInterrupted;
  }
  bool failed = std::any_of(rows.begin(), rows.end(), [](const SweepRow& row) {
    return row.status == "error" || row.status == "failed";
  });
  return failed ? kExitFailure : kExitOk;
}

}  // namespace

Subcommand SweepSubcommand() {
  cli::Command command(
      "sweep", "tune every fusion of a sweep file on its targets",
      "SWEEP.json [--db PATH|URL] [--resume] [--distribute] [--json] [--dry-run] [--quiet]");
  command
      .Flag("db", "PATH|URL",
            "results database: a SQLite file or a postgresql:// URL (default $TILESMITH_DB, "
            "else ./tilesmith.db)")
      .Switch("resume",
              "skip the (fusion, target) pairs an earlier run of the same settings finished "
              "(recorded in PATH.sweeps.json beside the database)")
      .Switch("distribute",
              "enqueue the pairs as work units for the fleet's agents (`tilesmith agent`) "
              "and follow them until all are finished; with the same sweep again (--resume), "
              "follow the same units from any host (docs/fleet.md)")
      .Switch("any-device",
              "with --distribute: any device of a target's architecture may run its units, "
              "not only the exact device (card, clocks, driver, toolkit)")
      .Flag("unit-configs", "N",
            "with --distribute: split each (fusion, target) into units of N configs that "
            "agents measure at once, then one unit that confirms its winner (exhaustive and "
            "random strategies; default 0: one unit per pair)")
      .Switch("dry-run", "list the (fusion, target) pairs and their settings; tune nothing")
      .Switch("quiet", "no progress lines on stderr")
      .Switch("json",
              "print {sweep, database, compiler_version, complete, interrupted, pairs, done, "
              "errors, geomean_speedup, geomean_rows, rows: [{fusion, path, target, device, "
              "status, fingerprint, emitter, planned, measured, measured_now, failed, "
              "default_us, best_us, speedup, speedup_low, speedup_high, significant, best_config, "
              "predicted_us, predicted_config, "
              "…}]}")
      .Epilog(
          "A sweep file is JSON (docs/sweeps.md): {\"targets\": [\"host\"], \"budget\": 16,\n"
          "\"strategy\": \"best-first\", \"fusions\": [\"../examples/gelu.hlo\", {\"path\":\n"
          "\"../examples/ascgraph/*.ascgraph.txt\", \"sizes\": {\"s0\": 64}}]}; paths and globs\n"
          "(*, ?, [..], **) are relative to the sweep file's folder. Each (fusion, target) is\n"
          "tuned as `tilesmith tune` would, every batch committed before it is reported.\n"
          "Ctrl-C commits what was measured, prints the partial table and exits 130;\n"
          "rerun with --resume. A rerun never measures a committed config again.\n"
          "Exit status 0 when every pair finished with a verified best config (or, for a\n"
          "CUDA target without a GPU, compiled and its predictions stored); 1 on errors;\n"
          "2 on a bad command line.");
  return {std::move(command), &RunSweep};
}

}  // namespace tilesmith::tools
