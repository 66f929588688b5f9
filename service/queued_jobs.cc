// A fleet's jobs: each POST /v1/tune becomes one work unit of the database's queue, which
// the agent that has the device runs (service/agent.h) and whose progress and end it writes
// into the job's record. This server only follows: it derives a job's end from its unit
// when no agent wrote it (an agent killed between its commit and its report), and answers
// the waiters of its own requests.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "db/work_queue.h"
#include "service/agent.h"
#include "service/jobs.h"
#include "support/log.h"
#include "support/sha256.h"

namespace tilesmith::service {
namespace {

using nlohmann::json;

// How often the follower looks at the jobs its requests wait for, and at every active job.
constexpr auto kWaitedPoll = std::chrono::milliseconds(200);
constexpr auto kSweepPeriod = std::chrono::seconds(2);
// An agent seen within this long counts as there for a queued job's device.
constexpr int64_t kAgentSeenWithinMs = 60'000;

class QueuedJobManager final : public JobManager {
 public:
  QueuedJobManager(db::Store& store, JobEnvironment environment, std::vector<ServedTarget> targets,
                   std::function<void(const db::ResultKey&)> on_commit)
      : store_(store),
        environment_(std::move(environment)),
        targets_(std::move(targets)),
        on_commit_(std::move(on_commit)) {}
  ~QueuedJobManager() override { Stop(); }

  Status Start() override {
    // Active jobs without a unit (queued by a server that ran its jobs itself) get one, so
    // switching a database to the fleet strands nothing; enqueueing is idempotent.
    std::vector<db::JobState> active = {db::JobState::kQueued, db::JobState::kRunning};
    TS_ASSIGN_OR_RETURN(std::vector<db::JobRecord> jobs, store_.ListJobs(active));
    for (const db::JobRecord& job : jobs) {
      std::vector<db::WorkUnit> unit = {UnitFor(job)};
      if (auto added = store_.EnqueueUnits(unit); !added) {
        TS_LOG(kWarning) << "job " << job.id << ": cannot queue it: " << added.error().message;
      }
    }
    std::lock_guard lock(mutex_);
    follower_ = std::thread(&QueuedJobManager::Follow, this);
    return OkStatus();
  }

  void Stop() override {
    std::map<std::string, std::vector<std::function<void(const db::JobRecord&)>>> waiters;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      waiters.swap(waiters_);
    }
    wake_.notify_all();
    if (follower_.joinable()) follower_.join();
    for (auto& [id, calls] : waiters) {
      auto job = Get(id);
      if (!job || !*job) continue;
      for (auto& call : calls) call(**job);
    }
  }

  std::string Refusal(const ServedTarget&) const override { return {}; }

  Expected<Submitted> Submit(const JobRequest& request) override {
    const ServedTarget* target = FindServedTarget(targets_, request.target);
    if (target == nullptr) return InvalidArgument("unknown target '" + request.target + "'");
    // A device this server has is asked for exactly; one it only describes cannot be (its
    // driver and clocks are unknown here), so any agent of the architecture may run it.
    bool whole_architecture = !target->can_tune || request.options.value("any_device", false);
    std::string device_key = whole_architecture ? db::ArchitectureKeyPrefix(target->device.record)
                                                : target->device.record.Key();
    json material = {{"fingerprint", request.fingerprint},
                     {"device", device_key},
                     {"compiler_version", environment_.compiler_version},
                     {"options", request.options}};
    TS_ASSIGN_OR_RETURN(std::string dedupe_key, Sha256Hex(material.dump()));
    std::lock_guard lock(submit_mutex_);
    if (stopping_) return MakeError(ErrorCode::kFailedPrecondition, "the server is shutting down");
    std::vector<db::JobState> active = {db::JobState::kQueued, db::JobState::kRunning};
    TS_ASSIGN_OR_RETURN(std::vector<db::JobRecord> jobs, store_.ListJobs(active));
    for (db::JobRecord& job : jobs) {
      if (job.dedupe_key != dedupe_key) continue;
      TS_ASSIGN_OR_RETURN(db::JobRecord followed, Reconcile(std::move(job)));
      if (db::IsActive(followed.state)) return Submitted{std::move(followed), true};
    }
    db::JobRecord record;
    record.id = db::NewUid();
    record.dedupe_key = dedupe_key;
    record.state = db::JobState::kQueued;
    record.fingerprint = request.fingerprint;
    record.device_key = device_key;
    record.compiler_version = environment_.compiler_version;
    record.target = target->name;
    record.source_format = request.source_format;
    record.fusion_text = request.hlo_text;
    record.options = request.options;
    record.progress = {{"compiled", 0},
                       {"measured", 0},
                       {"failed", 0},
                       {"total", 0},
                       {"stage", "queued for an agent"}};
    record.created_at = db::UtcNow();
    record.updated_at = record.created_at;
    // Durable before it is acknowledged, and queued before any agent can look for it.
    TS_RETURN_IF_ERROR(store_.PutJob(record));
    std::vector<db::WorkUnit> unit = {UnitFor(record)};
    if (auto added = store_.EnqueueUnits(unit); !added) {
      record.state = db::JobState::kFailed;
      record.error = "could not queue the job: " + added.error().message;
      (void)store_.UpdateActiveJob(record);
      return std::unexpected(added.error());
    }
    return Submitted{record, false};
  }

  Expected<std::optional<db::JobRecord>> Get(const std::string& id) override {
    TS_ASSIGN_OR_RETURN(std::optional<db::JobRecord> job, store_.GetJob(id));
    if (!job || !db::IsActive(job->state)) return job;
    TS_ASSIGN_OR_RETURN(db::JobRecord followed, Reconcile(std::move(*job)));
    return std::optional<db::JobRecord>(std::move(followed));
  }

  Expected<std::pair<CancelOutcome, std::optional<db::JobRecord>>> Cancel(
      const std::string& id) override {
    TS_ASSIGN_OR_RETURN(std::optional<db::JobRecord> job, Get(id));
    if (!job) return std::pair{CancelOutcome::kNotFound, job};
    if (!db::IsActive(job->state)) return std::pair{CancelOutcome::kAlreadyFinal, job};
    // The job's record turns cancelled first: an agent running its unit sees that, stops
    // after its batch and commits what it measured; a unit no agent holds is failed here.
    db::JobRecord cancelled = *job;
    cancelled.state = db::JobState::kCancelled;
    TS_ASSIGN_OR_RETURN(bool updated, store_.UpdateActiveJob(cancelled));
    if (!updated) {
      TS_ASSIGN_OR_RETURN(job, store_.GetJob(id));
      return std::pair{CancelOutcome::kAlreadyFinal, job};
    }
    TS_ASSIGN_OR_RETURN(int64_t unclaimed, store_.CancelUnits(id, "the job was cancelled"));
    TS_ASSIGN_OR_RETURN(job, store_.GetJob(id));
    Notify(id);
    return std::pair{unclaimed > 0 ? CancelOutcome::kCancelled : CancelOutcome::kCancelling, job};
  }

  bool WhenFinished(const std::string& id,
                    std::function<void(const db::JobRecord&)> done) override {
    auto job = Get(id);
    if (!job || !*job) return false;
    {
      std::lock_guard lock(mutex_);
      if (db::IsActive((*job)->state) && !stopping_) {
        waiters_[id].push_back(std::move(done));
        wake_.notify_all();
        return true;
      }
    }
    done(**job);
    return true;
  }

  Expected<std::map<std::string, int64_t>> CountByState() override { return store_.CountJobs(); }

 private:
  db::WorkUnit UnitFor(const db::JobRecord& job) const {
    UnitTuneSettings settings;
    settings.target = job.target;
    settings.source_format = job.source_format;
    settings.compiler_version = job.compiler_version;
    settings.strategy = job.options.value("strategy", settings.strategy);
    settings.budget = job.options.value("budget", settings.budget);
    settings.seed = job.options.value("seed", settings.seed);
    settings.batch = environment_.batch_size;
    settings.measure = environment_.measure;
    for (const json& output : job.options.value("free_layouts", json::array())) {
      settings.free_layouts.push_back(output.get<std::string>());
    }
    settings.service_job = true;
    db::WorkUnit unit;
    unit.job_id = job.id;
    unit.sequence = 0;
    unit.device_key = job.device_key;
    unit.match_prefix = db::IsArchitectureKeyPrefix(job.device_key);
    unit.fingerprint = job.fingerprint;
    unit.name = "job " + job.id.substr(0, 8) + " (" + job.fingerprint.substr(0, 12) + ")";
    unit.fusion_text = job.fusion_text;
    unit.payload = settings.ToJson();
    return unit;
  }

  // The job as its unit says it is. The agent writes the job's progress and end; when it
  // could not (killed after its commit) or the unit failed for good, the end is derived
  // here, conditionally, so every server derives the same and a cancellation still wins.
  Expected<db::JobRecord> Reconcile(db::JobRecord job) {
    TS_ASSIGN_OR_RETURN(std::vector<db::WorkUnit> units, store_.ListUnits(job.id));
    if (units.empty()) return job;
    const db::WorkUnit& unit = units.front();
    db::JobRecord derived = job;
    switch (unit.state) {
      case db::UnitState::kDone:
        derived.state =
            unit.result.value("cancelled", false) ? db::JobState::kCancelled : db::JobState::kDone;
        if (derived.result.is_null()) derived.result = unit.result;
        SetFinalProgress(derived.progress, derived.result);
        break;
      case db::UnitState::kFailed:
        derived.state = db::JobState::kFailed;
        derived.error = unit.error;
        break;
      case db::UnitState::kLeased:
        derived.progress["agent"] = unit.owner;
        if (unit.attempt > 1) derived.progress["attempt"] = unit.attempt;
        return derived;
      case db::UnitState::kQueued:
        if (unit.attempt > 0) derived.progress["attempt"] = unit.attempt + 1;
        if (auto waiting = NoAgentFor(unit)) derived.progress["stage"] = *waiting;
        return derived;
    }
    TS_ASSIGN_OR_RETURN(bool updated, store_.UpdateActiveJob(derived));
    if (!updated) {
      TS_ASSIGN_OR_RETURN(std::optional<db::JobRecord> stored, store_.GetJob(job.id));
      if (stored) return *stored;
    }
    if (updated && derived.state == db::JobState::kDone && on_commit_) {
      on_commit_({derived.fingerprint, derived.result.value("device", derived.device_key),
                  derived.compiler_version});
    }
    return derived;
  }

  // What a queued unit waits for when no agent seen lately has its device.
  std::optional<std::string> NoAgentFor(const db::WorkUnit& unit) {
    auto agents = store_.ListAgents(kAgentSeenWithinMs);
    if (!agents) return std::nullopt;
    for (const db::AgentRecord& agent : *agents) {
      for (const std::string& key : agent.device_keys) {
        if (db::UnitMatchesDevice(unit.device_key, unit.match_prefix, key)) return std::nullopt;
      }
    }
    return "queued: no agent seen in the last minute has device '" + unit.device_key +
           (unit.match_prefix ? "…'" : "'") + "; start `tilesmith agent` on a host that does";
  }

  void Notify(const std::string& id) {
    std::lock_guard lock(mutex_);
    if (waiters_.count(id)) wake_.notify_all();
  }

  // Answers the waiters of jobs that ended, and every few seconds derives the end of every
  // active job whose agent could not write it.
  void Follow() {
    auto next_sweep = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, kWaitedPoll);
      if (stopping_) break;
      std::vector<std::string> waited;
      for (const auto& [id, calls] : waiters_) waited.push_back(id);
      lock.unlock();
      for (const std::string& id : waited) {
        auto job = Get(id);
        if (!job || !*job || db::IsActive((*job)->state)) continue;
        std::vector<std::function<void(const db::JobRecord&)>> calls;
        {
          std::lock_guard relock(mutex_);
          auto found = waiters_.find(id);
          if (found != waiters_.end()) {
            calls = std::move(found->second);
            waiters_.erase(found);
          }
        }
        for (auto& call : calls) call(**job);
      }
      if (std::chrono::steady_clock::now() >= next_sweep) {
        next_sweep = std::chrono::steady_clock::now() + kSweepPeriod;
        std::vector<db::JobState> active = {db::JobState::kQueued, db::JobState::kRunning};
        if (auto jobs = store_.ListJobs(active)) {
          for (db::JobRecord& job : *jobs) (void)Reconcile(std::move(job));
        }
      }
      lock.lock();
    }
  }

  db::Store& store_;
  JobEnvironment environment_;
  std::vector<ServedTarget> targets_;
  std::function<void(const db::ResultKey&)> on_commit_;

  std::mutex submit_mutex_;  // one Submit at a time, so identical requests share a job
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stopping_ = false;
  std::map<std::string, std::vector<std::function<void(const db::JobRecord&)>>> waiters_;
  std::thread follower_;
};

}  // namespace

std::unique_ptr<JobManager> MakeQueuedJobManager(
    db::Store& store, JobEnvironment environment, std::vector<ServedTarget> targets,
    std::function<void(const db::ResultKey&)> on_commit) {
  return std::make_unique<QueuedJobManager>(store, std::move(environment), std::move(targets),
                                            std::move(on_commit));
}

}  // namespace tilesmith::service
