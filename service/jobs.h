// The service's tuning jobs: durable in the database (db/jobs.h), run one at a time per
// device on a thread of their own (the tuner compiles each batch on its pool), never on
// an HTTP thread. Identical requests share the active job; a restart resumes queued and
// running jobs, and the tuner skips every config already committed under the same key.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "db/jobs.h"
#include "db/store.h"
#include "db/work_lock.h"
#include "service/metrics.h"
#include "service/targets.h"
#include "tuner/measurer.h"

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

class JobManager {
 public:
  /// `store` is written by the job threads (it serialises calls); `on_commit` is called with
  /// a job's fingerprint and device key after each committed batch (to refresh caches).
  JobManager(db::Store& store, JobEnvironment environment, std::vector<ServedTarget> targets,
             Metrics& metrics, std::function<void(const db::ResultKey&)> on_commit);
  ~JobManager();

  /// Re-queues the database's queued and running jobs and starts one thread per target that
  /// can tune.
  Status Start();
  /// Stops every running job (within about a second, committing what it measured), marks it
  /// queued again and joins the threads.
  /// Waiters are told the job as it stands. Idempotent.
  void Stop();

  /// Queues a job, or returns the active job with the same key (budget, strategy, seed,
  /// layouts, fusion, device, compiler).
  Expected<Submitted> Submit(const JobRequest& request);
  /// The job as it stands: live for active jobs, else from the database.
  Expected<std::optional<db::JobRecord>> Get(const std::string& id);
  /// Cancels a queued job at once; a running one stops after its batch commits.
  Expected<std::pair<CancelOutcome, std::optional<db::JobRecord>>> Cancel(const std::string& id);
  /// Calls `done` once the job is final (or now, when it already is, or at Stop with the
  /// job as it stands). Returns false when the job does not exist.
  bool WhenFinished(const std::string& id, std::function<void(const db::JobRecord&)> done);
  /// Jobs by state, from the database.
  Expected<std::map<std::string, int64_t>> CountByState();

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

/// A job as the API shows it.
nlohmann::json JobJson(const db::JobRecord& job);

}  // namespace tilesmith::service
