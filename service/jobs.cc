#include "service/jobs.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/parser.h"
#include "db/work_lock.h"
#include "support/log.h"
#include "support/sha256.h"
#include "tuner/backends/runner.h"
#include "tuner/confirm_winner.h"
#include "tuner/layouts.h"
#include "tuner/session.h"

namespace tilesmith::service {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Runs of a job whose process ended before the job did, after which it is failed.
constexpr int64_t kMaxUnfinishedRuns = 2;

}  // namespace

json JobProgressJson(const tuner::TuneProgress& progress) {
  return {
      {"compiled", progress.compiled},
      {"measured", progress.measured},
      {"failed", progress.failed},
      {"total", progress.planned},
      {"best_median_us", progress.best_median_us ? json(*progress.best_median_us) : json(nullptr)},
      {"best_config", progress.best_median_us ? progress.best_config : json(nullptr)}};
}

void SetFinalProgress(json& progress, const json& result) {
  for (const char* count : {"compiled", "measured", "failed"}) {
    if (result.contains(count)) progress[count] = result[count];
  }
  if (progress.value("total", json(0)) == 0) progress["total"] = progress.value("measured", 0);
  if (const json& best = result.value("best", json()); best.is_object()) {
    progress["best_median_us"] = best.value("median_us", json());
    progress["best_config"] = best.value("config", json());
  }
  progress.erase("stage");
}

json JobResultJson(const tuner::TuneResult& result) {
  return {{"fingerprint", result.fingerprint},
          {"device", result.device_key},
          {"compiler_version", result.compiler_version},
          {"emitter", result.emitter},
          {"space", {{"size", result.space_size}, {"candidates", result.candidates}}},
          {"compiled", result.compiled},
          {"compile_failed", result.compile_failed},
          {"measured", result.measured},
          {"failed", result.failed},
          {"measured_now", result.measured_now},
          {"resumed", result.resumed},
          {"best", tuner::SummaryJson(result.best)},
          {"default", tuner::SummaryJson(result.default_config)},
          {"speedup", result.speedup ? json(*result.speedup) : json(nullptr)},
          {"significant", result.verdict ? json(result.verdict->significant) : json(nullptr)},
          {"verdict", result.verdict ? tuner::TuneVerdictJson(*result.verdict) : json(nullptr)},
          {"search_best", tuner::SummaryJson(result.search_best)}};
}

json JobJson(const db::JobRecord& job) {
  json out = {{"id", job.id},
              {"state", db::JobStateName(job.state)},
              {"target", job.target},
              {"fingerprint", job.fingerprint},
              {"device", job.device_key},
              {"compiler_version", job.compiler_version},
              {"source_format", job.source_format},
              {"options", job.options},
              {"progress", job.progress},
              {"result", job.result},
              {"created_at", job.created_at},
              {"updated_at", job.updated_at}};
  if (!job.error.empty()) out["error"] = job.error;
  if (job.unfinished_runs > 0) out["unfinished_runs"] = job.unfinished_runs;
  return out;
}

namespace {

class LocalJobManager final : public JobManager {
 public:
  LocalJobManager(db::Store& store, JobEnvironment environment, std::vector<ServedTarget> targets,
                  Metrics& metrics, std::function<void(const db::ResultKey&)> on_commit);
  ~LocalJobManager() override;

  Status Start() override;
  void Stop() override;
  std::string Refusal(const ServedTarget& target) const override;
  Expected<Submitted> Submit(const JobRequest& request) override;
  Expected<std::optional<db::JobRecord>> Get(const std::string& id) override;
  Expected<std::pair<CancelOutcome, std::optional<db::JobRecord>>> Cancel(
      const std::string& id) override;
  bool WhenFinished(const std::string& id, std::function<void(const db::JobRecord&)> done) override;
  Expected<std::map<std::string, int64_t>> CountByState() override;

 private:
  struct Active {
    db::JobRecord record;
    std::atomic<bool> cancel = false;
    std::vector<std::function<void(const db::JobRecord&)>> waiters;
  };

  void RunQueue(const std::string& target);
  void RunJob(const std::shared_ptr<Active>& job, const ServedTarget& target);
  // Writes the record (logging a failure: the in-memory state stays authoritative).
  void Persist(const db::JobRecord& record);
  // Finishes a job that reached a final state: persists, tells waiters, forgets it.
  void Finish(const std::shared_ptr<Active>& job, std::unique_lock<std::mutex>& lock);
  const ServedTarget* FindTarget(const std::string& name) const;

  db::Store& store_;
  JobEnvironment environment_;
  std::vector<ServedTarget> targets_;
  Metrics& metrics_;
  std::function<void(const db::ResultKey&)> on_commit_;
  const std::string lock_owner_ = db::ProcessOwnerName("serve");

  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stopping_ = false;
  bool started_ = false;
  std::map<std::string, std::shared_ptr<Active>> active_;  // by id
  std::map<std::string, std::deque<std::string>> queues_;  // by target name
  std::vector<std::thread> threads_;
};

LocalJobManager::LocalJobManager(db::Store& store, JobEnvironment environment,
                                 std::vector<ServedTarget> targets, Metrics& metrics,
                                 std::function<void(const db::ResultKey&)> on_commit)
    : store_(store),
      environment_(std::move(environment)),
      targets_(std::move(targets)),
      metrics_(metrics),
      on_commit_(std::move(on_commit)) {}

LocalJobManager::~LocalJobManager() { Stop(); }

std::string LocalJobManager::Refusal(const ServedTarget& target) const {
  return target.can_tune ? std::string() : "target '" + target.name + "' " + target.note;
}

const ServedTarget* LocalJobManager::FindTarget(const std::string& name) const {
  return FindServedTarget(targets_, name);
}

void LocalJobManager::Persist(const db::JobRecord& record) {
  if (auto written = store_.PutJob(record); !written) {
    TS_LOG(kError) << "job " << record.id << ": " << written.error().message;
  }
}

Status LocalJobManager::Start() {
  std::vector<db::JobState> states = {db::JobState::kQueued, db::JobState::kRunning};
  TS_ASSIGN_OR_RETURN(std::vector<db::JobRecord> jobs, store_.ListJobs(states));
  std::lock_guard lock(mutex_);
  for (db::JobRecord& record : jobs) {
    const ServedTarget* target = FindTarget(record.target);
    if (target == nullptr || !target->can_tune) {
      TS_LOG(kWarning) << "job " << record.id << " stays queued: this server does not tune '"
                       << record.target << "'";
      continue;
    }
    if (record.compiler_version != environment_.compiler_version ||
        record.device_key != target->device.record.Key()) {
      record.state = db::JobState::kFailed;
      record.error = "queued for " + record.device_key + " under " + record.compiler_version +
                     "; this server tunes " + target->device.record.Key() + " under " +
                     environment_.compiler_version + ": submit it again";
      Persist(record);
      continue;
    }
    // A job still `running` here outlived its process: it was killed or crashed mid-job.
    // Resumed once; a job that takes its process down twice is failed, so that a server
    // always starts instead of dying on the same job again.
    if (record.state == db::JobState::kRunning) {
      ++record.unfinished_runs;
      if (record.unfinished_runs >= kMaxUnfinishedRuns) {
        record.state = db::JobState::kFailed;
        record.error = "the server's process ended " + std::to_string(record.unfinished_runs) +
                       " times while running this job (killed, or crashed by it); it is not "
                       "resumed again: submit it again to retry";
        TS_LOG(kWarning) << "job " << record.id << " failed: " << record.error;
        Persist(record);
        continue;
      }
    }
    TS_LOG(kInfo) << "resuming job " << record.id << " (" << db::JobStateName(record.state)
                  << ") on " << record.target;
    if (record.state == db::JobState::kRunning) {
      record.state = db::JobState::kQueued;
      Persist(record);  // the count survives a process that dies before the job starts
    }
    auto job = std::make_shared<Active>();
    job->record = std::move(record);
    queues_[job->record.target].push_back(job->record.id);
    active_[job->record.id] = job;
  }
  for (const ServedTarget& target : targets_) {
    if (target.can_tune) threads_.emplace_back(&LocalJobManager::RunQueue, this, target.name);
  }
  started_ = true;
  return OkStatus();
}

void LocalJobManager::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
  std::vector<std::pair<db::JobRecord, std::function<void(const db::JobRecord&)>>> calls;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, job] : active_) {
      for (auto& waiter : job->waiters) calls.emplace_back(job->record, std::move(waiter));
      job->waiters.clear();
    }
  }
  for (auto& [record, waiter] : calls) waiter(record);
}

Expected<Submitted> LocalJobManager::Submit(const JobRequest& request) {
  const ServedTarget* target = FindTarget(request.target);
  if (target == nullptr) return InvalidArgument("unknown target '" + request.target + "'");
  if (!target->can_tune) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "target '" + target->name + "' " + target->note);
  }
  json material = {{"fingerprint", request.fingerprint},
                   {"device", target->device.record.Key()},
                   {"compiler_version", environment_.compiler_version},
                   {"options", request.options}};
  TS_ASSIGN_OR_RETURN(std::string dedupe_key, Sha256Hex(material.dump()));
  std::lock_guard lock(mutex_);
  if (stopping_) {
    return MakeError(ErrorCode::kFailedPrecondition, "the server is shutting down");
  }
  for (const auto& [id, job] : active_) {
    if (job->record.dedupe_key == dedupe_key && !job->cancel) {
      return Submitted{job->record, true};
    }
  }
  auto job = std::make_shared<Active>();
  db::JobRecord& record = job->record;
  record.id = db::NewUid();
  record.dedupe_key = dedupe_key;
  record.state = db::JobState::kQueued;
  record.fingerprint = request.fingerprint;
  record.device_key = target->device.record.Key();
  record.compiler_version = environment_.compiler_version;
  record.target = target->name;
  record.source_format = request.source_format;
  record.fusion_text = request.hlo_text;
  record.options = request.options;
  record.progress = {{"compiled", 0}, {"measured", 0}, {"failed", 0}, {"total", 0}};
  record.created_at = db::UtcNow();
  record.updated_at = record.created_at;
  // Durable before it is acknowledged: a 202 means the job survives a restart.
  TS_RETURN_IF_ERROR(store_.PutJob(record));
  active_[record.id] = job;
  queues_[record.target].push_back(record.id);
  wake_.notify_all();
  return Submitted{record, false};
}

Expected<std::optional<db::JobRecord>> LocalJobManager::Get(const std::string& id) {
  {
    std::lock_guard lock(mutex_);
    auto found = active_.find(id);
    if (found != active_.end()) return std::optional<db::JobRecord>(found->second->record);
  }
  return store_.GetJob(id);
}

Expected<std::pair<CancelOutcome, std::optional<db::JobRecord>>> LocalJobManager::Cancel(
    const std::string& id) {
  std::unique_lock lock(mutex_);
  auto found = active_.find(id);
  if (found != active_.end()) {
    std::shared_ptr<Active> job = found->second;
    if (job->record.state == db::JobState::kQueued) {
      std::deque<std::string>& queue = queues_[job->record.target];
      queue.erase(std::remove(queue.begin(), queue.end(), id), queue.end());
      job->record.state = db::JobState::kCancelled;
      Finish(job, lock);
      return std::pair{CancelOutcome::kCancelled, std::optional(job->record)};
    }
    job->cancel = true;
    return std::pair{CancelOutcome::kCancelling, std::optional(job->record)};
  }
  lock.unlock();
  TS_ASSIGN_OR_RETURN(std::optional<db::JobRecord> stored, store_.GetJob(id));
  return std::pair{stored ? CancelOutcome::kAlreadyFinal : CancelOutcome::kNotFound, stored};
}

bool LocalJobManager::WhenFinished(const std::string& id,
                                   std::function<void(const db::JobRecord&)> done) {
  {
    std::lock_guard lock(mutex_);
    auto found = active_.find(id);
    if (found != active_.end() && !stopping_) {
      found->second->waiters.push_back(std::move(done));
      return true;
    }
  }
  auto job = Get(id);
  if (!job || !job->has_value()) return false;
  done(**job);
  return true;
}

Expected<std::map<std::string, int64_t>> LocalJobManager::CountByState() {
  return store_.CountJobs();
}

void LocalJobManager::Finish(const std::shared_ptr<Active>& job,
                             std::unique_lock<std::mutex>& lock) {
  job->record.updated_at = db::UtcNow();
  Persist(job->record);  // under the lock, so Get never sees an older state in the database
  active_.erase(job->record.id);
  std::vector<std::function<void(const db::JobRecord&)>> waiters = std::move(job->waiters);
  job->waiters.clear();
  db::JobRecord snapshot = job->record;
  lock.unlock();
  for (auto& waiter : waiters) waiter(snapshot);
  lock.lock();
}

void LocalJobManager::RunQueue(const std::string& target_name) {
  const ServedTarget* target = FindTarget(target_name);
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queues_[target_name].empty(); });
    if (stopping_) return;
    std::string id = queues_[target_name].front();
    queues_[target_name].pop_front();
    auto found = active_.find(id);
    if (found == active_.end()) continue;
    std::shared_ptr<Active> job = found->second;
    job->record.state = db::JobState::kRunning;
    job->record.updated_at = db::UtcNow();
    Persist(job->record);
    lock.unlock();
    RunJob(job, *target);
    lock.lock();
  }
}

void LocalJobManager::RunJob(const std::shared_ptr<Active>& job, const ServedTarget& target) {
  const std::string id = job->record.id;  // fields read here never change while running
  auto finish = [&](db::JobState state, std::string error, json result) {
    std::unique_lock lock(mutex_);
    job->record.state = state;
    job->record.error = std::move(error);
    if (!result.is_null()) job->record.result = std::move(result);
    if (state == db::JobState::kQueued) {
      job->record.updated_at = db::UtcNow();
      Persist(job->record);  // interrupted: resumed by the next server on this database
      return;
    }
    Finish(job, lock);
  };
  auto module = hlo::ParseHloModule(job->record.fusion_text, "job " + id);
  if (!module) return finish(db::JobState::kFailed, module.error().message, nullptr);
  auto fingerprint = hlo::FusionFingerprint(**module);
  if (!fingerprint || *fingerprint != job->record.fingerprint) {
    return finish(db::JobState::kFailed,
                  "the job's fusion no longer has fingerprint " + job->record.fingerprint, nullptr);
  }
  // One tune of a key at a time on one database (db/work_lock.h): a job that another
  // server is running (a restart resumed it on both) is waited for, and its end adopted.
  std::unique_ptr<db::WorkLock> key_lock;
  bool said_waiting = false;
  while (true) {
    auto acquired =
        db::WorkLock::TryAcquire(store_,
                                 db::TuneLockName({job->record.fingerprint, job->record.device_key,
                                                   job->record.compiler_version}),
                                 lock_owner_);
    if (!acquired) return finish(db::JobState::kFailed, acquired.error().message, nullptr);
    if (*acquired) {
      key_lock = std::move(*acquired);
      break;
    }
    if (job->cancel) return finish(db::JobState::kCancelled, "", nullptr);
    if (stopping_) return finish(db::JobState::kQueued, "", nullptr);
    auto stored = store_.GetJob(id);
    if (stored && *stored && !db::IsActive((*stored)->state)) {
      std::unique_lock lock(mutex_);
      job->record = **stored;
      Finish(job, lock);
      return;
    }
    if (!said_waiting) {
      TS_LOG(kInfo) << "job " << id << ": another process is tuning this key; waiting for it";
      said_waiting = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  std::error_code error;
  fs::path dir = fs::path(environment_.data_dir) / "jobs";
  fs::create_directories(dir, error);
  fs::path path = dir / (id + ".hlo");
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << job->record.fusion_text;
    if (!file.good()) {
      return finish(db::JobState::kFailed, "cannot write " + path.string(), nullptr);
    }
  }
  const json& options_json = job->record.options;
  tuner::TuneOptions options;
  options.strategy = options_json.value("strategy", std::string("model"));
  options.budget = options_json.value("budget", int64_t{0});
  options.seed = options_json.value("seed", uint64_t{0});
  options.batch_size = environment_.batch_size;
  options.compile_threads = environment_.compile_threads;
  options.measure = environment_.measure;
  options.source_format = job->record.source_format;
  // A served target that can tune has what timing it needs (targets.h: can_tune).
  options.time_on_device = true;
  options.job_id = id;
  auto free = tuner::ParseFreeLayouts(
      options_json.value("free_layouts", std::vector<std::string>{}), *(*module)->fusion());
  if (!free) return finish(db::JobState::kFailed, free.error().message, nullptr);
  options.free_layouts = *free;
  options.worker_argv =
      tuner::WorkerCommand(environment_.worker_binary, path.string(), target.device);

  // Counted from what the database already holds, so resumed trials are not counted again.
  db::ResultKey key{job->record.fingerprint, job->record.device_key, job->record.compiler_version};
  int64_t last_compiled = 0, last_measured = 0, last_failed = 0;
  if (auto known = store_.MeasuredConfigs(key)) {
    last_measured = static_cast<int64_t>(known->size());
    last_failed = std::count_if(known->begin(), known->end(),
                                [](const db::MeasuredConfig& config) { return !config.any_ok; });
  }
  options.on_progress = [&](const tuner::TuneProgress& progress) {
    metrics_.AddCandidates(progress.compiled - last_compiled,
                           std::max<int64_t>(0, progress.measured - last_measured),
                           std::max<int64_t>(0, progress.failed - last_failed));
    last_compiled = progress.compiled;
    last_measured = std::max(last_measured, progress.measured);
    last_failed = std::max(last_failed, progress.failed);
    {
      std::lock_guard lock(mutex_);
      job->record.progress = JobProgressJson(progress);
      job->record.updated_at = db::UtcNow();
      Persist(job->record);
    }
    if (on_commit_) on_commit_(key);
  };
  options.on_stage = [&](const std::string& stage) {
    std::lock_guard lock(mutex_);
    job->record.progress["stage"] = stage;
    job->record.updated_at = db::UtcNow();
    Persist(job->record);
  };
  std::atomic<bool> interrupted = false;
  options.should_stop = [&] {
    if (job->cancel) return true;
    if (stopping_) interrupted = true;
    return interrupted.load();
  };
  TS_LOG(kInfo) << "job " << id << ": tuning " << job->record.fingerprint.substr(0, 12) << " on "
                << target.name << " (" << options.strategy << ", budget " << options.budget << ")";
  auto result =
      tuner::Tune(**module, target.device, &store_, environment_.compiler_version, options);
  fs::remove(path, error);
  if (!result) return finish(db::JobState::kFailed, result.error().message, nullptr);
  if (on_commit_) on_commit_(key);
  const json result_json = JobResultJson(*result);
  {
    // A fully resumed job commits no batch: its counts come from the result.
    std::lock_guard lock(mutex_);
    SetFinalProgress(job->record.progress, result_json);
  }
  if (job->cancel) return finish(db::JobState::kCancelled, "", result_json);
  if (interrupted) return finish(db::JobState::kQueued, "", nullptr);
  TS_LOG(kInfo) << "job " << id << ": done, " << result->measured_now << " measured";
  finish(db::JobState::kDone, "", result_json);
}

}  // namespace

std::unique_ptr<JobManager> MakeLocalJobManager(
    db::Store& store, JobEnvironment environment, std::vector<ServedTarget> targets,
    Metrics& metrics, std::function<void(const db::ResultKey&)> on_commit) {
  return std::make_unique<LocalJobManager>(store, std::move(environment), std::move(targets),
                                           metrics, std::move(on_commit));
}

}  // namespace tilesmith::service
