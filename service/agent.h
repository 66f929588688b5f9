// The fleet's worker loop (`tilesmith agent`, and a server with local targets): claims work
// units (db/work_queue.h) for the device keys of its targets, tunes each under a lease that
// a heartbeat renews, and commits the unit's measurements with its completion in one
// transaction. A lease lost mid-unit (the agent was cut off past its expiry) stops the tune
// and drops what it measured: another agent has the unit. The database being unreachable
// is waited out with backoff, never fatal.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/work_queue.h"
#include "service/targets.h"
#include "support/status.h"
#include "tuner/measurer.h"

namespace tilesmith::service {

/// How a unit's payload asks for a tune: written by whoever enqueues (`sweep
/// --distribute`, a server's queued job), read by the agent. Absent fields take the tuner's
/// defaults.
struct UnitTuneSettings {
  std::string target;  ///< As the enqueuer named it ("host", "cuda:sm_90"), for people.
  std::string source_format = "hlo";
  std::string compiler_version;  ///< The enqueuer's; an agent of another version refuses.
  std::string strategy = "model";
  int64_t budget = 0;
  double time_s = 0;
  uint64_t seed = 0;
  int64_t batch = 8;
  tuner::MeasureOptions measure;
  std::vector<std::string> free_layouts;
  /// The unit runs a job a server queued (POST /v1/tune), whose id is the unit's job id: the
  /// agent writes the job's progress and end into its record, and stops when it is cancelled.
  bool service_job = false;
  /// A batch of a split tune: exactly these configs (hashes), no confirmation
  /// (tuner::TuneOptions::configs). Empty: the whole tune.
  std::vector<std::string> configs;

  nlohmann::json ToJson() const;
  static Expected<UnitTuneSettings> FromJson(const nlohmann::json& payload);
};

struct AgentOptions {
  std::string name;  ///< Unique per running agent; `agent HOST:PID` when empty.
  /// The targets it tunes for; only those that can tune (targets.h) claim units.
  std::vector<ServedTarget> targets;
  std::string worker_binary;  ///< The `tilesmith` whose `worker` times candidates.
  std::string data_dir;       ///< Claimed units' fusion files go under `data_dir/units/`.
  std::string compiler_version;
  int64_t lease_ms = 30000;
  int64_t heartbeat_ms = 0;  ///< How often it says it is alive (0: a third of the lease).
  double poll_s = 1.0;       ///< The wait after a claim found nothing.
  /// Returns once a claim finds nothing and no unit is running (tests, one-shot runs).
  bool exit_when_idle = false;
  int compile_threads = 0;  ///< Per batch (0: one per core).
  /// One line per event (claimed, done, lost, backing off); empty: silent.
  std::function<void(const std::string&)> log;
  /// Called with each unit's key after it commits (a server refreshes its caches).
  std::function<void(const db::ResultKey&)> on_commit;
};

/// What an agent did.
struct AgentStats {
  int64_t claimed = 0;
  int64_t done = 0;
  int64_t failed = 0;     ///< Units it gave back as failed.
  int64_t lost = 0;       ///< Units whose lease it lost (their measurements dropped).
  int64_t db_errors = 0;  ///< Calls the database did not answer (waited out).
};

/// Runs units from the store at `db_location` until `stop` is set (a unit in progress
/// stops within about a second and is given back to the queue),
/// or, with `exit_when_idle`, the queue has nothing for it.
Expected<AgentStats> RunAgent(const std::string& db_location, const AgentOptions& options,
                              const std::atomic<bool>& stop);

}  // namespace tilesmith::service
