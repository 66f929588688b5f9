// The service's tuning jobs: durable in the database (db/jobs.h), never run on an HTTP
// thread. On one host they run one at a time per device on a thread of their own (the
// tuner compiles each batch on its pool); in a fleet they are work units that agents run.
// Identical requests share the active job; a restart resumes queued and running jobs, and
// the tuner skips every config already committed under the same key.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/jobs.h"
#include "db/store.h"
#include "service/metrics.h"
#include "service/targets.h"
#include "tuner/measurer.h"

namespace tilesmith::tuner {
struct TuneProgress;
struct TuneResult;
}  // namespace tilesmith::tuner

namespace tilesmith::service {

/// How jobs are run; the same for every job of a server.
struct JobEnvironment {
  std::string data_dir;       ///< Jobs write their fusion file under `data_dir/jobs/`.
  std::string worker_binary;  ///< The `tilesmith` binary whose `worker` runs candidates.
  std::string compiler_version;
  int compile_threads = 0;  ///< Per batch (0: one per core).
  int64_t batch_size = 4;   ///< Candidates compiled and committed together.
  tuner::MeasureOptions measure;
};

/// What a client asked to tune; becomes a JobRecord.
struct JobRequest {
  std::string fingerprint;
  std::string target;
  std::string source_format;
  std::string hlo_text;
  nlohmann::json options;  ///< {budget, strategy, seed, free_layouts}, defaults filled in.
};

/// Submitted: the job and whether an identical active job was reused.
struct Submitted {
  db::JobRecord job;
  bool shared = false;
};

/// Why Cancel did nothing.
enum class CancelOutcome { kCancelled, kCancelling, kAlreadyFinal, kNotFound };

/// Runs the service's tuning jobs: on this server's own threads (MakeLocalJobManager), or as
/// work units of the database's queue for whichever agent has the device
/// (MakeQueuedJobManager).
class JobManager {
 public:
  virtual ~JobManager() = default;

  /// Resumes the database's active jobs and starts the manager's threads.
  virtual Status Start() = 0;
  /// Stops the threads (a local job commits its batch and is queued again); waiters are
  /// told the job as it stands. Idempotent.
  virtual void Stop() = 0;

  /// Why a job for `target` cannot be taken here (empty when it can).
  virtual std::string Refusal(const ServedTarget& target) const = 0;
  /// Queues a job, or returns the active job with the same key (budget, strategy, seed,
  /// layouts, fusion, device, compiler).
  virtual Expected<Submitted> Submit(const JobRequest& request) = 0;
  /// The job as it stands (live for active jobs), or none.
  virtual Expected<std::optional<db::JobRecord>> Get(const std::string& id) = 0;
  /// Cancels a queued job at once; a running one stops after its batch commits.
  virtual Expected<std::pair<CancelOutcome, std::optional<db::JobRecord>>> Cancel(
      const std::string& id) = 0;
  /// Calls `done` once the job is final (or now, when it already is, or at Stop with the
  /// job as it stands). Returns false when the job does not exist.
  virtual bool WhenFinished(const std::string& id,
                            std::function<void(const db::JobRecord&)> done) = 0;
  /// Jobs by state, from the database.
  virtual Expected<std::map<std::string, int64_t>> CountByState() = 0;
};

/// Runs jobs on this server: one thread per target that can tune, one job at a time each.
/// `store` is written by the job threads (it serialises calls); `on_commit` is called with a
/// job's fingerprint and device key after each committed batch (to refresh caches).
std::unique_ptr<JobManager> MakeLocalJobManager(
    db::Store& store, JobEnvironment environment, std::vector<ServedTarget> targets,
    Metrics& metrics, std::function<void(const db::ResultKey&)> on_commit);

/// Queues jobs as work units (db/work_queue.h) for the fleet's agents (service/agent.h),
/// which write the job's progress and end into the job's record; this server follows them.
/// A target this server cannot time on is accepted too: its job runs on any agent with a
/// device of that architecture. `on_commit` is called once a followed job is done.
std::unique_ptr<JobManager> MakeQueuedJobManager(
    db::Store& store, JobEnvironment environment, std::vector<ServedTarget> targets,
    std::function<void(const db::ResultKey&)> on_commit);

/// A tune's end as a job's `result` (and a fleet job's work unit result).
nlohmann::json JobResultJson(const tuner::TuneResult& result);
/// A tune's progress as a job's `progress`.
nlohmann::json JobProgressJson(const tuner::TuneProgress& progress);
/// A job's `progress` at its end, from its `result` (JobResultJson): the final counts,
/// resumed trials included, and the best; the stage it was in no longer applies.
void SetFinalProgress(nlohmann::json& progress, const nlohmann::json& result);

/// A job as the API shows it.
nlohmann::json JobJson(const db::JobRecord& job);

}  // namespace tilesmith::service
