// The work-queue role of a store: jobs and sweeps split into work units that hosts claim
// under a lease. A unit is one fusion on one device key with what to measure; an agent
// claims it (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: an immediate transaction), renews
// its lease by heartbeat, and commits the unit's measurements and its completion in one
// transaction. A unit whose lease expired is claimed again; a commit from a lease that is no
// longer held is refused, so a unit's measurements are stored by one attempt only. Times
// are the store's own clock (milliseconds since the epoch), so hosts never compare clocks.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.h"
#include "support/status.h"

namespace tilesmith::db {

/// Where a unit is. kQueued and kLeased are active; kDone and kFailed are final.
enum class UnitState { kQueued, kLeased, kDone, kFailed };

/// The database spelling: "queued", "leased", "done", "failed".
std::string_view UnitStateName(UnitState state);
Expected<UnitState> ParseUnitState(std::string_view name);

/// One piece of a job or sweep.
struct WorkUnit {
  int64_t id = 0;        ///< Assigned by the store when enqueued.
  std::string job_id;    ///< The job or sweep it belongs to.
  int64_t sequence = 0;  ///< Its place in the job: (job_id, sequence) is unique.
  /// The device key it must run on; with `match_prefix`, any key that starts with it (a job
  /// that accepts a whole architecture, `cuda:sm_90`).
  std::string device_key;
  bool match_prefix = false;
  std::string fingerprint;  ///< The fusion's canonical fingerprint.
  std::string name;         ///< The fusion's name, for people.
  std::string fusion_text;  ///< The HLO module.
  /// What to run, read by the agent: the target, tune options, an explicit config batch.
  nlohmann::json payload = nlohmann::json::object();

  UnitState state = UnitState::kQueued;
  std::string owner;             ///< The agent holding it, or that held it last.
  int64_t attempt = 0;           ///< Claims so far; a lease is (id, attempt, owner).
  int64_t reclaims = 0;          ///< Claims that took over an expired lease.
  int64_t lease_expires_ms = 0;  ///< Store clock; 0 when never leased.
  /// [{"owner": …, "reason": …}] for every failed attempt.
  nlohmann::json failures = nlohmann::json::array();
  std::string error;                ///< Why it failed for good.
  nlohmann::json result = nullptr;  ///< What its agent reported when done.
};

/// The hold an agent has on one claimed unit.
struct Lease {
  int64_t unit_id = 0;
  int64_t attempt = 0;
  std::string owner;
};

/// Units of one job (or the whole queue) per state, and how many leases were taken over.
struct UnitCounts {
  int64_t queued = 0;
  int64_t leased = 0;
  int64_t done = 0;
  int64_t failed = 0;
  int64_t reclaims = 0;
  /// Leased units whose lease has run out (their agent died or was cut off).
  int64_t expired = 0;
  int64_t total() const { return queued + leased + done + failed; }
  bool finished() const { return queued == 0 && leased == 0; }
};

/// An agent that said it is alive: its name, what it serves, and when it was last seen.
struct AgentRecord {
  std::string name;  ///< Unique per running agent (host and process).
  std::string host;
  std::vector<std::string> device_keys;
  std::string started_at;
  int64_t last_seen_ms = 0;  ///< Store clock; set by PutAgent.
  int64_t units_done = 0;
  int64_t units_failed = 0;
};

/// Units claimed under leases. Every method is one transaction.
class WorkQueue {
 public:
  virtual ~WorkQueue() = default;

  /// Adds units (ids assigned); a unit whose (job_id, sequence) is already there is left as
  /// it is, so enqueueing a job again resumes it. Returns how many were added.
  virtual Expected<int64_t> EnqueueUnits(std::span<const WorkUnit> units) = 0;
  /// Claims the oldest unit for one of `device_keys` that is queued or whose lease has
  /// expired, leased to `owner` for `lease_ms`; none when nothing can be claimed.
  virtual Expected<std::optional<WorkUnit>> ClaimUnit(std::string_view owner,
                                                      std::span<const std::string> device_keys,
                                                      int64_t lease_ms) = 0;
  /// Extends a lease still held by another `lease_ms`. A lease that expired or was taken
  /// over is an error (kFailedPrecondition) saying so: its owner must stop and not commit.
  virtual Status RenewLease(const Lease& lease, int64_t lease_ms) = 0;
  /// Commits the unit's measurements and marks it done in one transaction. Refused, with
  /// nothing written, when the lease is no longer held. The same lease completing again (a
  /// retried commit whose answer was lost) changes nothing and succeeds.
  virtual Status CompleteUnit(const Lease& lease, std::span<const MeasurementRecord> measurements,
                              const nlohmann::json& result) = 0;
  /// Gives a unit back after its attempt failed: queued again, or failed for good once two
  /// different owners failed it (its error names both). Refused when the lease is not held.
  virtual Expected<UnitState> FailUnit(const Lease& lease, std::string_view reason) = 0;
  /// Gives a unit back unfinished (its agent is stopping): queued again at once, no failure
  /// counted. Refused when the lease is not held.
  virtual Status ReleaseUnit(const Lease& lease) = 0;
  /// Fails, with `reason` as their error, the job's units that no live lease holds (queued,
  /// or leased past expiry): the job was cancelled. A unit an agent is running is left to
  /// it. Returns how many were failed.
  virtual Expected<int64_t> CancelUnits(std::string_view job_id, std::string_view reason) = 0;
  /// The units of a job by sequence (every unit when `job_id` is empty).
  virtual Expected<std::vector<WorkUnit>> ListUnits(std::string_view job_id) = 0;
  /// Counts of a job's units (the whole queue when `job_id` is empty).
  virtual Expected<UnitCounts> CountUnits(std::string_view job_id) = 0;
  /// Records that an agent is alive (inserted, or updated with last_seen now).
  virtual Status PutAgent(const AgentRecord& agent) = 0;
  /// Agents seen within `within_ms` of now (every agent ever seen when 0), by name.
  virtual Expected<std::vector<AgentRecord>> ListAgents(int64_t within_ms) = 0;
};

/// Checks a unit before it is enqueued; messages name the field.
Status ValidateUnit(const WorkUnit& unit);

/// Whether a unit for `unit_key` (a prefix when `match_prefix`) may run on `device_key`.
bool UnitMatchesDevice(std::string_view unit_key, bool match_prefix, std::string_view device_key);

/// The key prefix that admits every device of `device`'s architecture ("cuda:sm_90, "): a
/// unit for it, with `match_prefix`, runs on any H100 whatever its clocks, driver or model.
std::string ArchitectureKeyPrefix(const DeviceRecord& device);
/// Whether `key` is such a prefix rather than a whole device key.
bool IsArchitectureKeyPrefix(std::string_view key);

/// The message of a refused commit or renewal, naming the unit and attempt.
std::string LeaseLostMessage(const Lease& lease);

}  // namespace tilesmith::db
