#include "service/agent.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/parser.h"
#include "db/open_store.h"
#include "db/staged_store.h"
#include "db/work_lock.h"
#include "service/job_report.h"
#include "service/jobs.h"
#include "tuner/backends/runner.h"
#include "tuner/layouts.h"
#include "tuner/session.h"

namespace tilesmith::service {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Waits up to `seconds` or until `stop` is set, in short steps.
void SleepUnlessStopped(double seconds, const std::atomic<bool>& stop) {
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (!stop && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// A database error worth waiting out: the server is unreachable or restarting. Anything
// else (a refused lease, a bad unit) is an answer.
bool IsTransient(const Error& error) { return error.code == ErrorCode::kIo; }

json TuneResultJson(const tuner::TuneResult& result, double seconds) {
  auto summary = [](const std::optional<tuner::TrialSummary>& trial) -> json {
    return trial ? json(trial->median_us) : json(nullptr);
  };
  return {{"fingerprint", result.fingerprint},
          {"device", result.device_key},
          {"emitter", result.emitter},
          {"planned", result.candidates},
          {"measured", result.measured},
          {"measured_now", result.measured_now},
          {"failed", result.failed},
          {"compiled", result.compiled},
          {"compile_failed", result.compile_failed},
          {"default_us", summary(result.default_config)},
          {"best_us", summary(result.best)},
          {"speedup", result.speedup ? json(*result.speedup) : json(nullptr)},
          {"best_config", result.best ? result.best->config : json(nullptr)},
          {"status", !result.timed ? "compiled"
                     : result.best ? "done"
                                   : "failed"},
          {"seconds", seconds}};
}

class Agent {
 public:
  Agent(const AgentOptions& options, db::Store& store, db::Store& heartbeat_store,
        const std::atomic<bool>& stop)
      : options_(options), store_(store), heartbeat_store_(heartbeat_store), stop_(stop) {
    for (const ServedTarget& target : options_.targets) {
      if (target.can_tune) keys_.push_back(target.device.record.Key());
    }
  }

  Expected<AgentStats> Run() {
    if (keys_.empty()) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "no target of this agent can tune here (" + TargetNotes() + ")");
    }
    double backoff_s = 0.5;
    auto last_seen = Clock::time_point{};
    while (!stop_) {
      if (Clock::now() - last_seen > std::chrono::milliseconds(HeartbeatMs())) {
        if (Status said = store_.PutAgent(Record()); said) last_seen = Clock::now();
      }
      auto claimed = store_.ClaimUnit(options_.name, keys_, options_.lease_ms);
      if (!claimed) {
        ++stats_.db_errors;
        if (!IsTransient(claimed.error())) return std::unexpected(claimed.error());
        Log("database unreachable (" + claimed.error().message + "); retrying in " +
            std::to_string(backoff_s).substr(0, 3) + " s");
        SleepUnlessStopped(backoff_s, stop_);
        backoff_s = std::min(backoff_s * 2, 5.0);
        continue;
      }
      backoff_s = 0.5;
      if (!claimed->has_value()) {
        if (options_.exit_when_idle) break;
        SleepUnlessStopped(options_.poll_s, stop_);
        continue;
      }
      ++stats_.claimed;
      RunUnit(**claimed);
    }
    return stats_;
  }

 private:
  int64_t HeartbeatMs() const {
    return options_.heartbeat_ms > 0 ? options_.heartbeat_ms
                                     : std::max<int64_t>(options_.lease_ms / 3, 10);
  }

  db::AgentRecord Record() const {
    db::AgentRecord record;
    record.name = options_.name;
    record.host = db::HostName();
    record.device_keys = keys_;
    record.started_at = started_at_;
    return record;
  }

  std::string TargetNotes() const {
    std::string notes;
    for (const ServedTarget& target : options_.targets) {
      notes += (notes.empty() ? "" : "; ") + target.name + ": " + target.note;
    }
    return notes;
  }

  void Log(const std::string& line) const {
    if (options_.log) options_.log(options_.name + ": " + line);
  }

  const ServedTarget* TargetFor(const db::WorkUnit& unit) const {
    for (const ServedTarget& target : options_.targets) {
      if (target.can_tune &&
          db::UnitMatchesDevice(unit.device_key, unit.match_prefix, target.device.record.Key())) {
        return &target;
      }
    }
    return nullptr;
  }

  // Gives a unit back as failed; a lease lost meanwhile is only counted.
  void Fail(const db::Lease& lease, const db::WorkUnit& unit, const std::string& reason) {
    auto state = store_.FailUnit(lease, reason);
    if (!state) {
      ++stats_.lost;
      Log("unit " + std::to_string(unit.id) + " failed (" + reason +
          ") but could not be given back: " + state.error().message);
      return;
    }
    ++stats_.failed;
    if (report_ && *state == db::UnitState::kQueued) report_->Requeued(reason);
    if (report_ && *state == db::UnitState::kFailed) {
      auto units = store_.ListUnits(unit.job_id);
      report_->Failed(units && !units->empty() ? units->front().error : reason);
    }
    Log("unit " + std::to_string(unit.id) + " (" + unit.name + ") failed: " + reason + "; now " +
        std::string(db::UnitStateName(*state)));
  }

  void RunUnit(const db::WorkUnit& unit) {
    report_.reset();
    db::Lease lease{unit.id, unit.attempt, unit.owner};
    Log("claimed unit " + std::to_string(unit.id) + " (" + unit.name + ", attempt " +
        std::to_string(unit.attempt) + (unit.reclaims > 0 ? ", taken over" : "") + ")");
    const ServedTarget* target = TargetFor(unit);
    if (target == nullptr) return Fail(lease, unit, "no target of this agent matches its device");
    auto settings = UnitTuneSettings::FromJson(unit.payload);
    if (!settings) return Fail(lease, unit, settings.error().message);
    if (!settings->compiler_version.empty() &&
        settings->compiler_version != options_.compiler_version) {
      return Fail(lease, unit,
                  "enqueued by tilesmith " + settings->compiler_version + ", this agent is " +
                      options_.compiler_version + " (run one version across the fleet)");
    }
    if (settings->service_job) {
      auto begun = report_.emplace(store_, unit.job_id).Begin(options_.name);
      if (!begun) {
        report_.reset();
        return Fail(lease, unit, begun.error().message);
      }
      if (!*begun) {
        Status skipped = store_.CompleteUnit(lease, {}, {{"cancelled", true}});
        Log("unit " + std::to_string(unit.id) + ": its job was cancelled; " +
            (skipped ? "skipped" : "not skipped: " + skipped.error().message));
        return;
      }
    }
    auto module = hlo::ParseHloModule(unit.fusion_text, "unit " + std::to_string(unit.id));
    if (!module) return Fail(lease, unit, module.error().message);
    auto fingerprint = hlo::FusionFingerprint(**module);
    if (!fingerprint || *fingerprint != unit.fingerprint) {
      return Fail(lease, unit, "its fusion does not have fingerprint " + unit.fingerprint);
    }
    std::error_code error;
    fs::path dir = fs::path(options_.data_dir) / "units";
    fs::create_directories(dir, error);
    fs::path path = dir / (std::to_string(unit.id) + "-" + std::to_string(unit.attempt) + ".hlo");
    {
      std::ofstream file(path, std::ios::binary | std::ios::trunc);
      file << unit.fusion_text;
      if (!file.good()) return Fail(lease, unit, "cannot write " + path.string());
    }

    tuner::TuneOptions options;
    options.strategy = settings->strategy;
    options.budget = settings->budget;
    options.time_limit_s = settings->time_s;
    options.seed = settings->seed;
    options.batch_size = settings->batch;
    options.compile_threads = options_.compile_threads;
    options.measure = settings->measure;
    options.source_format = settings->source_format;
    options.time_on_device = true;  // only targets that can tune claim units
    options.job_id = unit.job_id;
    options.configs = settings->configs;
    auto free = tuner::ParseFreeLayouts(settings->free_layouts, *(*module)->fusion());
    if (!free) return Fail(lease, unit, free.error().message);
    options.free_layouts = *free;
    options.worker_argv =
        tuner::WorkerCommand(options_.worker_binary, path.string(), target->device);

    db::StagedStore staged(store_);
    auto started = Clock::now();
    db::LeaseHeartbeat heartbeat(heartbeat_store_, lease, options_.lease_ms);
    options.should_stop = [&] {
      return stop_.load() || heartbeat.lost() || (report_ && report_->Cancelled());
    };
    if (report_) {
      options.on_progress = [&](const tuner::TuneProgress& progress) {
        report_->Progress(progress);
      };
      options.on_stage = [&](const std::string& stage) { report_->Stage(stage); };
    }
    auto result =
        tuner::Tune(**module, target->device, &staged, options_.compiler_version, options);
    double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    fs::remove(path, error);
    if (heartbeat.lost()) {
      ++stats_.lost;
      Log("lost the lease of unit " + std::to_string(unit.id) + "; dropped " +
          std::to_string(staged.staged().size()) + " measurements (another agent has it)");
      return;
    }
    if (stop_) {
      Status released = store_.ReleaseUnit(lease);
      if (released && report_) report_->Requeued("its agent " + options_.name + " stopped");
      Log("stopping: unit " + std::to_string(unit.id) +
          (released ? " given back to the queue"
                    : " left to another agent once its lease expires (" + released.error().message +
                          ")"));
      return;
    }
    if (report_ && report_->Cancelled()) {
      // What the cancelled job measured is kept, as a server running it itself keeps it.
      json cancelled = result ? JobResultJson(*result) : json::object();
      cancelled["cancelled"] = true;
      Commit(lease, unit, staged, cancelled);
      return;
    }
    if (!result) return Fail(lease, unit, result.error().message);
    if (!report_) {
      Commit(lease, unit, staged, TuneResultJson(*result, seconds));
      return;
    }
    json job_result = JobResultJson(*result);
    if (Commit(lease, unit, staged, job_result)) report_->Done(job_result);
  }

  // Commits the unit, waiting out an unreachable database while the lease may still hold.
  bool Commit(const db::Lease& lease, const db::WorkUnit& unit, const db::StagedStore& staged,
              const json& result) {
    std::vector<db::MeasurementRecord> measurements = staged.staged();
    auto deadline = Clock::now() + std::chrono::milliseconds(options_.lease_ms);
    double backoff_s = 0.25;
    while (true) {
      Status done = store_.CompleteUnit(lease, measurements, result);
      if (done) break;
      if (!IsTransient(done.error()) || Clock::now() > deadline) {
        if (done.error().code == ErrorCode::kFailedPrecondition) {
          ++stats_.lost;
          Log("commit of unit " + std::to_string(unit.id) + " refused: " + done.error().message);
        } else {
          Fail(lease, unit, "commit failed: " + done.error().message);
        }
        return false;
      }
      ++stats_.db_errors;
      SleepUnlessStopped(backoff_s, stop_);
      backoff_s = std::min(backoff_s * 2, 5.0);
    }
    for (const db::VerdictRecord& verdict : staged.staged_verdicts()) {
      if (auto recorded = store_.RecordVerdict(verdict); !recorded) {
        Log("unit " + std::to_string(unit.id) +
            ": verdict not stored: " + recorded.error().message);
      }
    }
    ++stats_.done;
    Log("unit " + std::to_string(unit.id) + " (" + unit.name +
        ") done: " + std::to_string(measurements.size()) + " measurements committed");
    if (options_.on_commit) {
      options_.on_commit(
          {unit.fingerprint, result.value("device", std::string()), options_.compiler_version});
    }
    return true;
  }

  const AgentOptions& options_;
  db::Store& store_;
  db::Store& heartbeat_store_;
  const std::atomic<bool>& stop_;
  std::vector<std::string> keys_;
  std::string started_at_ = db::UtcNow();
  AgentStats stats_;
  std::optional<JobReport> report_;  // the job of the unit running, when a server queued it
};

}  // namespace

json UnitTuneSettings::ToJson() const {
  return {{"target", target},
          {"source_format", source_format},
          {"compiler_version", compiler_version},
          {"strategy", strategy},
          {"budget", budget},
          {"time_s", time_s},
          {"seed", seed},
          {"batch", batch},
          {"warmup_ms", measure.warmup_ms},
          {"rep_ms", measure.budget_ms},
          {"timeout_ms", measure.timeout_ms},
          {"flush", measure.flush_bytes >= 0},
          {"free_layouts", free_layouts},
          {"service_job", service_job},
          {"configs", configs}};
}

Expected<UnitTuneSettings> UnitTuneSettings::FromJson(const json& payload) {
  UnitTuneSettings settings;
  try {
    settings.target = payload.value("target", settings.target);
    settings.source_format = payload.value("source_format", settings.source_format);
    settings.compiler_version = payload.value("compiler_version", settings.compiler_version);
    settings.strategy = payload.value("strategy", settings.strategy);
    settings.budget = payload.value("budget", settings.budget);
    settings.time_s = payload.value("time_s", settings.time_s);
    settings.seed = payload.value("seed", settings.seed);
    settings.batch = payload.value("batch", settings.batch);
    settings.measure.warmup_ms = payload.value("warmup_ms", settings.measure.warmup_ms);
    settings.measure.budget_ms = payload.value("rep_ms", settings.measure.budget_ms);
    settings.measure.timeout_ms = payload.value("timeout_ms", settings.measure.timeout_ms);
    settings.measure.flush_bytes = payload.value("flush", true) ? 0 : -1;
    settings.free_layouts = payload.value("free_layouts", settings.free_layouts);
    settings.service_job = payload.value("service_job", settings.service_job);
    settings.configs = payload.value("configs", settings.configs);
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("work unit payload: ") + e.what());
  }
  if (settings.batch < 1) return InvalidArgument("work unit payload: batch must be at least 1");
  return settings;
}

Expected<AgentStats> RunAgent(const std::string& db_location, const AgentOptions& options,
                              const std::atomic<bool>& stop) {
  AgentOptions named = options;
  if (named.name.empty()) named.name = db::ProcessOwnerName("agent");
  TS_ASSIGN_OR_RETURN(auto store, db::OpenStore(db_location, db::StoreAccess::kReadWrite));
  TS_ASSIGN_OR_RETURN(auto heartbeat_store,
                      db::OpenStore(db_location, db::StoreAccess::kReadWrite));
  Agent agent(named, *store, *heartbeat_store, stop);
  return agent.Run();
}

}  // namespace tilesmith::service
