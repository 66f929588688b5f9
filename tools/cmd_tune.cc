// `tilesmith space`, `tilesmith tune` and `tilesmith worker`: the search space of a fusion,
// the tuning loop over it, and the subprocess candidates are run in.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "compiler/hlo/canonical.h"
#include "db/open_store.h"
#include "db/work_lock.h"
#include "tools/commands.h"
#include "tools/fusion_loader.h"
#include "tools/tune_support.h"
#include "tuner/confirm_winner.h"
#include "tuner/cuda_driver.h"
#include "tuner/device.h"
#include "tuner/layouts.h"
#include "tuner/session.h"
#include "tuner/space.h"
#include "tuner/strategy.h"
#include "tuner/worker.h"

namespace tilesmith::tools {
namespace {

using nlohmann::json;

// `--target cuda:0` names this machine's first GPU by its architecture.
Expected<tuner::Device> DeviceFromArgs(const cli::Args& args) {
  TS_ASSIGN_OR_RETURN(std::string target, tuner::GpuTargetOf(args.Get("target", "host")));
  return tuner::ResolveDevice(target, args.Get("device"), tuner::DefaultDevicesDir());
}

int RunSpace(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one fusion file");
    return kExitUsage;
  }
  auto loaded = LoadFusion(args.positionals()[0], args);
  if (!loaded) return ReportError(loaded.error().message);
  auto device = DeviceFromArgs(args);
  if (!device) return ReportError(device.error().message);
  auto free = tuner::ParseFreeLayouts(args.Get("free-layouts"), *loaded->module->fusion());
  if (!free) return ReportError(free.error().message);
  auto space = tuner::BuildSpace(*loaded->module, device->info, *free);
  if (!space) return ReportError(space.error().message);
  // A reduction's split strategies are reported apart: the tree pass and atomics are
  // different kernels with different reducers allowed.
  std::map<std::string, int64_t> strategies;
  for (const tuner::Candidate& candidate : space->candidates) {
    if (std::string strategy = tuner::SplitStrategy(candidate.config); !strategy.empty()) {
      ++strategies[strategy];
    }
  }
  if (args.Has("json")) {
    json configs = json::array();
    for (const tuner::Candidate& candidate : space->candidates) {
      configs.push_back({{"config", candidate.config}, {"default", candidate.is_default}});
    }
    json pruned = json::array();
    for (const tuner::PrunedConfig& entry : space->pruned) {
      pruned.push_back({{"config", entry.config}, {"reason", entry.reason}});
    }
    std::cout << json{{"target", device->target.ToString()},
                      {"device", device->record.Key()},
                      {"emitter", space->emitter},
                      {"size", space->total()},
                      {"valid", space->candidates.size()},
                      {"pruned_count", space->pruned.size()},
                      {"pruned_by_reason", space->pruned_by_reason},
                      {"split_strategies", strategies},
                      {"configs", configs},
                      {"pruned", pruned}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << "emitter   " << space->emitter << "\n"
            << "device    " << device->record.Key() << "\n"
            << "space     " << space->total() << " configs: " << space->candidates.size()
            << " valid, " << space->pruned.size() << " pruned\n";
  for (const auto& [reason, count] : space->pruned_by_reason) {
    std::cout << "  pruned " << count << ": " << reason << "\n";
  }
  if (!strategies.empty()) {
    std::cout << "splits    " << strategies["unsplit"] << " unsplit, " << strategies["atomic"]
              << " atomic, " << strategies["tree"] << " tree";
    std::cout << " (valid configs by how a split's parts combine)\n";
  }
  std::cout << "configs\n";
  for (const tuner::Candidate& candidate : space->candidates) {
    std::cout << "  " << candidate.config.dump() << (candidate.is_default ? "  <- default" : "")
              << "\n";
  }
  if (args.Has("pruned")) {
    std::cout << "pruned\n";
    for (const tuner::PrunedConfig& entry : space->pruned) {
      std::cout << "  " << entry.config.dump() << "  " << entry.reason << "\n";
    }
  }
  return kExitOk;
}

Expected<double> NumberFlag(const cli::Args& args, const std::string& flag, double fallback) {
  if (!args.Has(flag)) return fallback;
  try {
    size_t used = 0;
    double value = std::stod(args.Get(flag), &used);
    if (used == args.Get(flag).size() && value >= 0) return value;
  } catch (const std::exception&) {
  }
  return InvalidArgument("--" + flag + " expects a non-negative number, not '" + args.Get(flag) +
                         "'");
}

void PrintProgress(const tuner::TuneProgress& progress) {
  bool terminal = isatty(STDERR_FILENO);
  std::string line =
      "tune: " + std::to_string(progress.measured) + "/" + std::to_string(progress.planned) +
      "  compiled " + std::to_string(progress.compiled) + ", measured " +
      std::to_string(progress.measured) + ", failed " + std::to_string(progress.failed);
  if (progress.best_median_us) {
    line += ", best " + Micros(*progress.best_median_us) + " us " + progress.best_config.dump();
  }
  std::cerr << (terminal ? "\r\033[K" : "") << line << (terminal ? "" : "\n") << std::flush;
}

// A compile-only (CUDA, no GPU) tune's summary: every time is the model's, and says so.
void PrintPredicted(const tuner::TuneResult& result, const hlo::HloComputation& fusion,
                    const std::string& strategy) {
  std::cout << "fusion      " << fusion.name() << " (" << result.fingerprint.substr(0, 12) << ")\n"
            << "device      " << result.device_key << "\n"
            << "space       " << result.space_size << " configs, " << result.candidates
            << " valid (" << result.emitter << " emitter)\n"
            << "compiled    " << result.compiled << " (" << result.compile_failed
            << " rejected by the compiler), not timed: no GPU here\n"
            << "predicted   " << result.predicted << " by " << result.model << "\n"
            << "search      " << strategy << ", ended: " << result.stopped << "\n";
  auto line = [](const char* label, const std::optional<tuner::TrialSummary>& summary) {
    if (summary) {
      std::cout << label << summary->config.dump() << "  predicted " << Micros(summary->median_us)
                << " us\n";
    }
  };
  if (!result.best) std::cout << "best        none predicted\n";
  line("best        ", result.best);
  line("default     ", result.default_config);
  if (result.speedup) std::cout << "speedup     " << Micros(*result.speedup) << "x predicted\n";
  std::cout << "stored      as predictions (table `predictions`), never as measurements\n";
}

// The noise-aware verdict under the speedup: its interval and whether it is more than noise.
void PrintVerdict(const tuner::TuneResult& result) {
  if (!result.verdict) {
    std::cout << "verdict     unknown (no confirmation: --confirm-top 0, or no verified default)\n";
    return;
  }
  const tuner::TuneVerdict& v = *result.verdict;
  char high[32] = "inf";
  if (std::isfinite(v.speedup_high)) std::snprintf(high, sizeof high, "%.3f", v.speedup_high);
  char interval[160];
  std::snprintf(interval, sizeof interval, "[%.3f, %s] at %g%%, %lld paired rounds in %.1f s",
                v.speedup_low, high, v.confidence * 100, static_cast<long long>(v.rounds),
                v.seconds);
  std::cout << "interval    " << interval << "\n"
            << "verdict     " << (v.significant ? "significant" : "not significant") << ": "
            << v.reason << "\n";
  if (result.search_best) {
    std::cout << "searched    " << result.search_best->config.dump() << "  median "
              << Micros(result.search_best->median_us) << " us (reported as "
              << (v.reported_as_default ? "the default" : "another contender") << ")\n";
  }
}

// Waits until this process holds the lock of the key it is about to tune (db/work_lock.h).
Expected<std::unique_ptr<db::WorkLock>> LockTuneKey(db::Store& store, const hlo::HloModule& module,
                                                    const tuner::Device& device, bool quiet) {
  TS_ASSIGN_OR_RETURN(std::string fingerprint, hlo::FusionFingerprint(module));
  std::string name =
      db::TuneLockName({fingerprint, device.record.Key(), TILESMITH_COMPILER_VERSION});
  std::string owner = db::ProcessOwnerName("tune");
  bool said = false;
  while (true) {
    TS_ASSIGN_OR_RETURN(std::unique_ptr<db::WorkLock> lock,
                        db::WorkLock::TryAcquire(store, name, owner));
    if (lock) return lock;
    if (!said && !quiet) {
      auto holder = db::WorkLock::Holder(store, name);
      std::cerr << "tune: another tune of this fusion on this device is running ("
                << (holder && !holder->empty() ? *holder : std::string("another process"))
                << "); waiting for it, then measuring only what it did not commit\n";
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

int RunTune(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one fusion file");
    return kExitUsage;
  }
  const std::string& path = args.positionals()[0];
  auto loaded = LoadFusion(path, args);
  if (!loaded) return ReportError(loaded.error().message);
  auto device = DeviceFromArgs(args);
  if (!device) return ReportError(device.error().message);

  tuner::TuneOptions options;
  auto free = tuner::ParseFreeLayouts(args.Get("free-layouts"), *loaded->module->fusion());
  if (!free) return ReportError(free.error().message);
  options.free_layouts = *free;
  options.strategy = args.Get("strategy", "model");
  options.source_format = loaded->request ? "ascgraph" : "hlo";
  auto budget = NumberFlag(args, "budget", 0);
  auto time = NumberFlag(args, "time", 0);
  auto seed = NumberFlag(args, "seed", 0);
  auto batch = NumberFlag(args, "batch", 8);
  const tuner::MeasureOptions defaults;
  auto warmup = NumberFlag(args, "warmup-ms", defaults.warmup_ms);
  auto reps = NumberFlag(args, "rep-ms", defaults.budget_ms);
  auto timeout = NumberFlag(args, "timeout-ms", defaults.timeout_ms);
  auto reference = NumberFlag(args, "evaluator-max-elements", double(int64_t{1} << 24));
  auto confirm_top = NumberFlag(args, "confirm-top", 5);
  auto confidence = NumberFlag(args, "confidence", 0.95);
  auto confirm_time = NumberFlag(args, "confirm-time-s", 0);
  for (const auto* flag : {&budget, &time, &seed, &batch, &warmup, &reps, &timeout, &reference,
                           &confirm_top, &confidence, &confirm_time}) {
    if (!*flag) {
      ReportError(flag->error().message);
      return kExitUsage;
    }
  }
  options.budget = static_cast<int64_t>(*budget);
  options.time_limit_s = *time;
  options.seed = static_cast<uint64_t>(*seed);
  options.batch_size = std::max<int64_t>(1, static_cast<int64_t>(*batch));
  options.measure.warmup_ms = *warmup;
  options.measure.budget_ms = *reps;
  options.measure.timeout_ms = *timeout;
  std::string flush = args.Has("no-flush") ? "none" : args.Get("flush", "buffers");
  if (flush != "buffers" && flush != "cache" && flush != "none") {
    ReportError("--flush must be buffers, cache or none, not '" + flush + "'");
    return kExitUsage;
  }
  options.measure.flush_bytes = flush == "none" ? -1 : 0;
  if (flush != "none") options.measure.flush = flush;
  options.measure.timing = args.Get("timing", "kernel");
  if (options.measure.timing != "kernel" && options.measure.timing != "events") {
    ReportError("--timing must be kernel or events, not '" + options.measure.timing + "'");
    return kExitUsage;
  }
  options.evaluator_max_elements = static_cast<int64_t>(*reference);
  if (*confirm_top < 0 || !(*confidence > 0 && *confidence < 1) || *confirm_time < 0) {
    ReportError(
        "--confirm-top must be >= 0, --confidence between 0 and 1 (0.95 is 95%), "
        "--confirm-time-s >= 0");
    return kExitUsage;
  }
  options.confirm.top_k = static_cast<int64_t>(*confirm_top);
  options.confirm.confidence = *confidence;
  options.confirm.time_s = *confirm_time;
  options.confirm.seed = options.seed;
  tuner::CudaDriverProbe driver = tuner::ProbeCudaDriver();
  options.time_on_device = CanTime(*device, driver);
  std::vector<std::string> input_flags;
  for (const char* flag : {"format", "sizes"}) {
    if (args.Has(flag)) {
      input_flags.push_back(std::string("--") + flag);
      input_flags.push_back(args.Get(flag));
    }
  }
  options.worker_argv = WorkerArgv(path, *device, input_flags);
  if (!args.Has("quiet")) {
    options.on_progress = PrintProgress;
    options.on_stage = [](const std::string& stage) { std::cerr << "tune: " << stage << "\n"; };
  }

  const std::vector<std::string>& names = tuner::StrategyNames();
  if (std::find(names.begin(), names.end(), options.strategy) == names.end()) {
    ReportError("unknown strategy '" + options.strategy + "' (" + tuner::StrategyNamesText() + ")");
    return kExitUsage;
  }
  auto store = db::OpenStore(ResolveDbPath(args.Get("db")));
  if (!store) return ReportError(store.error().message);
  // One tune of a key at a time on one database: a second waits for the first and then
  // measures only what the first did not commit.
  auto lock = LockTuneKey(**store, *loaded->module, *device, args.Has("quiet"));
  if (!lock) return ReportError(lock.error().message);
  // A CUDA tune without a GPU compiles, predicts and stores predictions, never measurements.
  auto result =
      tuner::Tune(*loaded->module, *device, store->get(), TILESMITH_COMPILER_VERSION, options);
  if (options.on_progress && isatty(STDERR_FILENO)) std::cerr << "\n";
  if (!result) return ReportError(result.error().message);

  json out = {{"fingerprint", result->fingerprint},
              {"device", result->device_key},
              {"compiler_version", result->compiler_version},
              {"emitter", result->emitter},
              {"strategy", options.strategy},
              {"space", {{"size", result->space_size}, {"candidates", result->candidates}}},
              {"compiled", result->compiled},
              {"compile_failed", result->compile_failed},
              {"compile_seconds", result->compile_seconds},
              {"measure_seconds", result->measure_seconds},
              {"timed", result->timed},
              {"source", result->timed ? "measured" : "predicted"},
              {"predicted", result->predicted},
              {"measured", result->measured},
              {"failed", result->failed},
              {"measured_now", result->measured_now},
              {"resumed", result->resumed},
              {"worker_starts", result->worker_starts},
              {"best", tuner::SummaryJson(result->best)},
              {"default", tuner::SummaryJson(result->default_config)},
              {"speedup", result->speedup ? json(*result->speedup) : json(nullptr)},
              {"speedup_low", nullptr},
              {"speedup_high", nullptr},
              {"confidence", nullptr},
              {"significant", nullptr},
              {"verdict", nullptr},
              {"search_best", tuner::SummaryJson(result->search_best)},
              {"stopped", result->stopped},
              {"model", result->model},
              {"model_update", result->model_update}};
  if (result->verdict) {
    json verdict = tuner::TuneVerdictJson(*result->verdict);
    for (const char* field : {"speedup_low", "speedup_high", "confidence", "significant"}) {
      out[field] = verdict[field];
    }
    out["verdict"] = std::move(verdict);
  }
  if (TimedOnlyWithDevice(*device)) out["cuda_driver"] = driver.message;
  if (!result->timed) {
    if (args.Has("json")) {
      std::cout << out.dump(2) << "\n";
    } else {
      PrintPredicted(*result, *loaded->module->fusion(), options.strategy);
    }
    std::cerr << "note: " << CompiledOnlyMessage(*result, *device, driver) << "\n";
    if (!result->best) return ReportError("no candidate compiled and could be predicted");
    return kExitOk;
  }
  if (args.Has("json")) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "fusion      " << loaded->module->fusion()->name() << " ("
              << result->fingerprint.substr(0, 12) << ")\n"
              << "device      " << result->device_key << "\n"
              << "space       " << result->space_size << " configs, " << result->candidates
              << " valid (" << result->emitter << " emitter)\n"
              << "measured    " << result->measured << " (" << result->measured_now << " this run, "
              << result->resumed << " from the database), failed " << result->failed << "\n"
              << "search      " << options.strategy << ", ended: " << result->stopped << "\n";
    if (options.strategy == "model" || options.strategy == "best-first") {
      std::cout << "ranked by   " << result->model << "\n";
    }
    if (!result->model_update.empty()) std::cout << "model       " << result->model_update << "\n";
    if (result->best) {
      std::cout << "best        " << result->best->config.dump() << "  median "
                << Micros(result->best->median_us) << " us (p20 " << Micros(result->best->p20_us)
                << ", p80 " << Micros(result->best->p80_us) << ")\n";
    } else {
      std::cout << "best        none verified\n";
    }
    if (result->default_config) {
      std::cout << "default     " << result->default_config->config.dump() << "  median "
                << Micros(result->default_config->median_us) << " us\n";
    }
    if (result->speedup) std::cout << "speedup     " << Micros(*result->speedup) << "x\n";
    PrintVerdict(*result);
  }
  return result->best ? kExitOk : kExitFailure;
}

int RunWorkerCommand(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one fusion file");
    return kExitUsage;
  }
  auto loaded = LoadFusion(args.positionals()[0], args);
  if (!loaded) return ReportError(loaded.error().message);
  auto device = DeviceFromArgs(args);
  if (!device) return ReportError(device.error().message);
  return tuner::RunWorker(*loaded->module, device->target, device->info, std::cin, std::cout);
}

}  // namespace

Subcommand SpaceSubcommand() {
  cli::Command command(
      "space", "list a fusion's config space and what constraints pruned",
      "FILE --target T [--device ID] [--free-layouts p0,out0,…] [--pruned] [--json]");
  AddFusionInputFlags(command)
      .Flag("target", "T", "host, cuda:sm_80, cuda:sm_89, cuda:sm_90, … (default host)")
      .Flag("device", "ID",
            "a description in configs/devices (h100_sxm, h100_pcie, h200, a100, l4, rtx4090, "
            "host) or a .json path; default: the target's representative part")
      .Flag("free-layouts", "p0,out0,…",
            "fusion parameters (p<N>, as the kernel's buffers are named) and outputs (out<N>) "
            "whose layout is tuned too: every minor_to_major permutation and tiled layouts "
            "(T(8,128), with (2,1) for 16-bit types) become part of the config")
      .Switch("pruned", "also list every pruned config with its reason")
      .Switch("json",
              "print {target, device, emitter, size, valid, pruned_count, pruned_by_reason, "
              "split_strategies, "
              "configs: [{config, default}], pruned: [{config, reason}]}")
      .Epilog(FusionInputHelp());
  return {std::move(command), &RunSpace};
}

Subcommand TuneSubcommand() {
  cli::Command command(
      "tune", "measure a fusion's configs and store every trial",
      "FILE --target host|cuda:sm_XX [--db PATH] [--budget N|--time S] [--strategy S] "
      "[--seed N] [--free-layouts p0,out0,…] [--json]");
  AddFusionInputFlags(command)
      .Flag("target", "T",
            "host (timed here), cuda:sm_XX (compiled only without a GPU) or cuda:0 (this "
            "machine's GPU, by its architecture)")
      .Flag("device", "ID", "device description (see `tilesmith space --help`)")
      .Flag("free-layouts", "p0,out0,…",
            "parameters and outputs whose layout is tuned too (see `tilesmith space --help`); "
            "the chosen layouts are the config's \"layouts\" field")
      .Flag("db", "PATH|URL",
            "results database: a SQLite file or a postgresql:// URL (default $TILESMITH_DB, "
            "else ./tilesmith.db)")
      .Flag("budget", "N", "measure at most N configs, the default included (default: all)")
      .Flag("time", "S", "start no new batch after S seconds (default: no limit)")
      .Flag("strategy", "S",
            "model (default: measure the cost model's best, correct it with the measurements, "
            "stop when no config is predicted to win by more than noise), exhaustive, random, "
            "best-first or evolutionary")
      .Flag("seed", "N", "seed of the random and evolutionary strategies (default 0)")
      .Flag("batch", "N", "configs compiled in parallel and committed together (default 8)")
      .Flag("warmup-ms", "MS",
            "warm-up time per config before timing (default " +
                MeasureDefault(tuner::MeasureOptions{}.warmup_ms) + ")")
      .Flag("rep-ms", "MS",
            "timed repetitions per config for this long, at least 3 (default " +
                MeasureDefault(tuner::MeasureOptions{}.budget_ms) + ")")
      .Flag("timeout-ms", "MS",
            "a config still running this long after it started executing is killed and "
            "recorded as timeout (default " +
                MeasureDefault(tuner::MeasureOptions{}.timeout_ms) +
                "; compiling and queueing do not count)")
      .Flag("evaluator-max-elements", "N",
            "verify against the evaluator up to N output elements, beyond that against the "
            "first verified config (default 16777216)")
      .Flag("flush", "HOW",
            "how each repetition starts from memory: buffers (default: the config's own "
            "buffers are evicted from every cache level), cache (a buffer 1.5x the "
            "last-level cache is written) or none")
      .Switch("no-flush", "the same as --flush none")
      .Flag("timing", "HOW",
            "what ranks CUDA configs: kernel (default: the kernel's duration from CUPTI, as "
            "XLA reports it; CUDA events where CUPTI cannot record) or events (CUDA events "
            "around each launch, launch cost included); the host ignores it")
      .Flag("confirm-top", "K",
            "after the search, re-time the K best configs and the default in paired, "
            "interleaved rounds; a best not significantly faster than the default is "
            "reported as the default (default 5; 0: off)")
      .Flag("confidence", "C", "confidence of the speedup's interval (default 0.95)")
      .Flag("confirm-time-s", "S",
            "time for the paired rounds (default: a tenth of the search's time, 3 to 30 s)")
      .Switch("quiet", "no progress line on stderr")
      .Switch("json",
              "print {fingerprint, device, compiler_version, emitter, strategy, space, "
              "compiled, compile_failed, measured, failed, measured_now, resumed, best, "
              "default, speedup, speedup_low, speedup_high, confidence, significant, verdict, "
              "search_best, …}; best, default and search_best are {config, median_us, p20_us, "
              "p80_us} (CUDA: and timing_method, event_us)")
      .Epilog(
          "Every candidate runs in a `tilesmith worker` subprocess: a crash, a hang or a\n"
          "write outside its buffers marks it failed (crash, timeout, red_zone) and the\n"
          "worker is restarted. Outputs are verified; a wrong one is stored as wrong_result.\n"
          "Every batch is committed before it is reported; rerunning the same tune skips\n"
          "the configs the database already holds for this fusion, device and compiler.\n"
          "Exit status 0 when a verified best config exists.\n\n" +
          FusionInputHelp());
  return {std::move(command), &RunTune};
}

Subcommand WorkerSubcommand() {
  cli::Command command("worker", "(internal) run candidates for `tune` over stdin/stdout",
                       "FILE [--target T] [--device ID]");
  AddFusionInputFlags(command)
      .Flag("target", "T", "host (default) or cuda:sm_XX (needs a GPU and its driver)")
      .Flag("device", "ID", "the device description (default: the target's)")
      .Epilog(
          "Reads one JSON request per line ({id, config, warmup_ms, budget_ms, min_reps,\n"
          "max_reps, flush_bytes, flush, reference}) and answers {id, event: running}, then\n"
          "{id, status, times_us, compile_ms, verification_error, message}.");
  return {std::move(command), &RunWorkerCommand};
}

}  // namespace tilesmith::tools
