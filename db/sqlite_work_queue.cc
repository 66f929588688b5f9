// SqliteStore's work queue (db/work_queue.h). A claim is one BEGIN IMMEDIATE transaction,
// so two processes on one file never claim the same unit; leases run on SQLite's clock.
#include <utility>

#include "db/sqlite_queries.h"
#include "db/sqlite_store.h"
#include "db/work_queue_rules.h"

namespace tilesmith::db {
namespace {

using sqlite::Statement;

// Milliseconds since the epoch, on the database's clock.
constexpr std::string_view kNowMs =
    "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)";

// A unit is claimable by an agent with the device keys of JSON array ?1.
constexpr std::string_view kMatchesKeys =
    "((match_prefix = 0 AND device_key IN (SELECT value FROM json_each(?1))) OR "
    "(match_prefix = 1 AND EXISTS (SELECT 1 FROM json_each(?1) AS k "
    "WHERE substr(k.value, 1, length(device_key)) = device_key)))";

Expected<WorkUnit> ReadUnit(const Statement& row) {
  WorkUnit unit;
  unit.id = row.Int(0);
  unit.job_id = row.Text(1);
  unit.sequence = row.Int(2);
  unit.device_key = row.Text(3);
  unit.match_prefix = row.Int(4) != 0;
  unit.fingerprint = row.Text(5);
  unit.name = row.Text(6);
  unit.fusion_text = row.Text(7);
  TS_ASSIGN_OR_RETURN(unit.payload, ParseStoredJson(row.Text(8), "work_units.payload"));
  TS_ASSIGN_OR_RETURN(unit.state, ParseUnitState(row.Text(9)));
  unit.owner = row.Text(10);
  unit.attempt = row.Int(11);
  unit.reclaims = row.Int(12);
  unit.lease_expires_ms = row.Int(13);
  TS_ASSIGN_OR_RETURN(unit.failures, ParseStoredJson(row.Text(14), "work_units.failures"));
  unit.error = row.Text(15);
  if (!row.IsNull(16)) {
    TS_ASSIGN_OR_RETURN(unit.result, ParseStoredJson(row.Text(16), "work_units.result"));
  }
  return unit;
}

struct StoredLease {
  std::string state;
  int64_t attempt = 0;
  std::string owner;
  bool unexpired = false;
  std::string failures;
};

// The lease columns of unit `id`; an unknown unit is an error.
Expected<StoredLease> ReadLease(sqlite::Connection& connection, int64_t id) {
  TS_ASSIGN_OR_RETURN(
      Statement query,
      connection.Prepare("SELECT state, attempt, owner, lease_expires_ms > " + std::string(kNowMs) +
                         ", failures FROM work_units WHERE id = ?"));
  query.Bind(1, id);
  TS_ASSIGN_OR_RETURN(bool found, query.Step());
  if (!found) {
    return MakeError(ErrorCode::kNotFound, "no work unit " + std::to_string(id) + " in the store");
  }
  return StoredLease{query.Text(0), query.Int(1), query.Text(2), query.Int(3) != 0, query.Text(4)};
}

Status CountAgentUnit(sqlite::Connection& connection, std::string_view owner,
                      std::string_view column) {
  TS_ASSIGN_OR_RETURN(Statement update,
                      connection.Prepare("UPDATE agents SET " + std::string(column) + " = " +
                                         std::string(column) + " + 1 WHERE name = ?"));
  update.Bind(1, owner);
  return update.Run();
}

}  // namespace

Expected<int64_t> SqliteStore::EnqueueUnits(std::span<const WorkUnit> units) {
  for (const WorkUnit& unit : units) TS_RETURN_IF_ERROR(ValidateUnit(unit));
  std::string now = UtcNow();
  int64_t added = 0;
  std::lock_guard lock(mutex_);
  TS_RETURN_IF_ERROR(connection_->WriteTransaction(
      "enqueueing " + std::to_string(units.size()) + " work units", [&]() -> Status {
        added = 0;
        TS_ASSIGN_OR_RETURN(
            Statement insert,
            connection_->Prepare("INSERT INTO work_units (job_id, sequence, device_key, "
                                 "match_prefix, fingerprint, name, fusion_text, payload, state, "
                                 "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                                 "'queued', ?, ?) ON CONFLICT (job_id, sequence) DO NOTHING"));
        for (const WorkUnit& unit : units) {
          insert.Reset();
          insert.BindAll(unit.job_id, unit.sequence, unit.device_key, unit.match_prefix ? 1 : 0,
                         unit.fingerprint, unit.name, unit.fusion_text, unit.payload.dump(), now,
                         now);
          TS_RETURN_IF_ERROR(insert.Run());
          added += sqlite3_changes(connection_->handle());
        }
        return OkStatus();
      }));
  return added;
}

Expected<std::optional<WorkUnit>> SqliteStore::ClaimUnit(std::string_view owner,
                                                         std::span<const std::string> device_keys,
                                                         int64_t lease_ms) {
  if (owner.empty()) return InvalidArgument("claiming a work unit needs an owner name");
  if (lease_ms <= 0) return InvalidArgument("a lease must last a positive time");
  std::string keys =
      nlohmann::json(std::vector<std::string>(device_keys.begin(), device_keys.end())).dump();
  std::optional<WorkUnit> claimed;
  std::lock_guard lock(mutex_);
  TS_RETURN_IF_ERROR(connection_->WriteTransaction("claiming a work unit", [&]() -> Status {
    claimed.reset();
    TS_ASSIGN_OR_RETURN(
        Statement pick,
        connection_->Prepare("SELECT id FROM work_units WHERE (state = 'queued' OR (state = "
                             "'leased' AND lease_expires_ms <= " +
                             std::string(kNowMs) + ")) AND " + std::string(kMatchesKeys) +
                             // Units this owner already failed go last, so that another
                             // agent tries them first.
                             " ORDER BY EXISTS (SELECT 1 FROM json_each(failures) AS f WHERE "
                             "json_extract(f.value, '$.owner') = ?2), id LIMIT 1"));
    pick.Bind(1, keys);
    pick.Bind(2, owner);
    TS_ASSIGN_OR_RETURN(bool found, pick.Step());
    if (!found) return OkStatus();
    int64_t id = pick.Int(0);
    TS_ASSIGN_OR_RETURN(
        Statement take,
        connection_->Prepare("UPDATE work_units SET reclaims = reclaims + (state = 'leased'), "
                             "state = 'leased', owner = ?, attempt = attempt + 1, "
                             "lease_expires_ms = " +
                             std::string(kNowMs) + " + ?, updated_at = ? WHERE id = ?"));
    take.BindAll(owner, lease_ms, UtcNow(), id);
    TS_RETURN_IF_ERROR(take.Run());
    TS_ASSIGN_OR_RETURN(Statement read, connection_->Prepare("SELECT " + std::string(kUnitColumns) +
                                                             " FROM work_units WHERE id = ?"));
    read.Bind(1, id);
    TS_ASSIGN_OR_RETURN(bool row, read.Step());
    if (!row) return MakeError(ErrorCode::kInternal, "a claimed work unit vanished");
    TS_ASSIGN_OR_RETURN(WorkUnit unit, ReadUnit(read));
    claimed = std::move(unit);
    return OkStatus();
  }));
  return claimed;
}

Status SqliteStore::RenewLease(const Lease& lease, int64_t lease_ms) {
  std::lock_guard lock(mutex_);
  return connection_->WriteTransaction("renewing a lease", [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Statement renew,
        connection_->Prepare("UPDATE work_units SET lease_expires_ms = " + std::string(kNowMs) +
                             " + ? WHERE id = ? AND attempt = ? AND owner = ? AND state = "
                             "'leased' AND lease_expires_ms > " +
                             std::string(kNowMs)));
    renew.BindAll(lease_ms, lease.unit_id, lease.attempt, lease.owner);
    TS_RETURN_IF_ERROR(renew.Run());
    if (sqlite3_changes(connection_->handle()) == 0) {
      return MakeError(ErrorCode::kFailedPrecondition, LeaseLostMessage(lease));
    }
    return OkStatus();
  });
}

Status SqliteStore::CompleteUnit(const Lease& lease,
                                 std::span<const MeasurementRecord> measurements,
                                 const nlohmann::json& result) {
  auto done = WriteBatch(
      measurements, "completing work unit " + std::to_string(lease.unit_id),
      [&]() -> Expected<bool> {
        TS_ASSIGN_OR_RETURN(StoredLease stored, ReadLease(*connection_, lease.unit_id));
        switch (StandingOf(lease, stored.state, stored.attempt, stored.owner, stored.unexpired)) {
          case LeaseStanding::kCompletedByIt:
            return false;
          case LeaseStanding::kLost:
            return MakeError(ErrorCode::kFailedPrecondition, LeaseLostMessage(lease));
          case LeaseStanding::kHeld:
            break;
        }
        TS_ASSIGN_OR_RETURN(Statement finish,
                            connection_->Prepare("UPDATE work_units SET state = 'done', result = "
                                                 "?, updated_at = ? WHERE id = ?"));
        finish.BindAll(result.dump(), UtcNow(), lease.unit_id);
        TS_RETURN_IF_ERROR(finish.Run());
        TS_RETURN_IF_ERROR(CountAgentUnit(*connection_, lease.owner, "units_done"));
        return true;
      });
  if (!done) return std::unexpected(done.error());
  return OkStatus();
}

Expected<UnitState> SqliteStore::FailUnit(const Lease& lease, std::string_view reason) {
  UnitState state = UnitState::kQueued;
  std::lock_guard lock(mutex_);
  TS_RETURN_IF_ERROR(connection_->WriteTransaction(
      "failing work unit " + std::to_string(lease.unit_id), [&]() -> Status {
        TS_ASSIGN_OR_RETURN(StoredLease stored, ReadLease(*connection_, lease.unit_id));
        if (StandingOf(lease, stored.state, stored.attempt, stored.owner, stored.unexpired) !=
            LeaseStanding::kHeld) {
          return MakeError(ErrorCode::kFailedPrecondition, LeaseLostMessage(lease));
        }
        TS_ASSIGN_OR_RETURN(nlohmann::json failures,
                            ParseStoredJson(stored.failures, "work_units.failures"));
        FailureOutcome outcome = AddFailure(failures, lease, reason);
        state = outcome.final ? UnitState::kFailed : UnitState::kQueued;
        TS_ASSIGN_OR_RETURN(Statement update,
                            connection_->Prepare("UPDATE work_units SET state = ?, failures = ?, "
                                                 "error = ?, lease_expires_ms = 0, updated_at = "
                                                 "? WHERE id = ?"));
        update.BindAll(UnitStateName(state), outcome.failures.dump(), outcome.error, UtcNow(),
                       lease.unit_id);
        TS_RETURN_IF_ERROR(update.Run());
        return CountAgentUnit(*connection_, lease.owner, "units_failed");
      }));
  return state;
}

Status SqliteStore::ReleaseUnit(const Lease& lease) {
  std::lock_guard lock(mutex_);
  return connection_->WriteTransaction(
      "giving back work unit " + std::to_string(lease.unit_id), [&]() -> Status {
        TS_ASSIGN_OR_RETURN(StoredLease stored, ReadLease(*connection_, lease.unit_id));
        if (StandingOf(lease, stored.state, stored.attempt, stored.owner, stored.unexpired) !=
            LeaseStanding::kHeld) {
          return MakeError(ErrorCode::kFailedPrecondition, LeaseLostMessage(lease));
        }
        TS_ASSIGN_OR_RETURN(Statement update,
                            connection_->Prepare("UPDATE work_units SET state = 'queued', "
                                                 "lease_expires_ms = 0, updated_at = ? WHERE id "
                                                 "= ?"));
        update.BindAll(UtcNow(), lease.unit_id);
        return update.Run();
      });
}

Expected<int64_t> SqliteStore::CancelUnits(std::string_view job_id, std::string_view reason) {
  std::lock_guard lock(mutex_);
  int64_t cancelled = 0;
  TS_RETURN_IF_ERROR(connection_->WriteTransaction(
      "cancelling the units of job " + std::string(job_id), [&]() -> Status {
        TS_ASSIGN_OR_RETURN(
            Statement update,
            connection_->Prepare("UPDATE work_units SET state = 'failed', error = ?, "
                                 "lease_expires_ms = 0, updated_at = ? WHERE job_id = ? AND "
                                 "(state = 'queued' OR (state = 'leased' AND lease_expires_ms <= " +
                                 std::string(kNowMs) + "))"));
        update.BindAll(reason, UtcNow(), job_id);
        TS_RETURN_IF_ERROR(update.Run());
        cancelled = sqlite3_changes(connection_->handle());
        return OkStatus();
      }));
  return cancelled;
}

Expected<std::vector<WorkUnit>> SqliteStore::ListUnits(std::string_view job_id) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Statement query,
      connection_->Prepare("SELECT " + std::string(kUnitColumns) +
                           " FROM work_units WHERE ?1 = '' OR job_id = ?1 ORDER BY job_id, "
                           "sequence"));
  query.Bind(1, job_id);
  std::vector<WorkUnit> units;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    TS_ASSIGN_OR_RETURN(WorkUnit unit, ReadUnit(query));
    units.push_back(std::move(unit));
  }
  return units;
}

Expected<UnitCounts> SqliteStore::CountUnits(std::string_view job_id) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Statement query,
      connection_->Prepare("SELECT state, count(*), sum(reclaims), sum(state = 'leased' AND "
                           "lease_expires_ms <= " +
                           std::string(kNowMs) +
                           ") FROM work_units WHERE ?1 = '' OR job_id = ?1 GROUP BY state"));
  query.Bind(1, job_id);
  UnitCounts counts;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    TS_ASSIGN_OR_RETURN(UnitState state, ParseUnitState(query.Text(0)));
    SetStateCount(counts, state, query.Int(1));
    counts.reclaims += query.Int(2);
    counts.expired += query.Int(3);
  }
  return counts;
}

Status SqliteStore::PutAgent(const AgentRecord& agent) {
  if (agent.name.empty()) return InvalidArgument("an agent needs a name");
  std::lock_guard lock(mutex_);
  return connection_->WriteTransaction("recording agent " + agent.name, [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Statement upsert,
        connection_->Prepare("INSERT INTO agents (name, host, device_keys, started_at, "
                             "last_seen_ms) VALUES (?, ?, ?, ?, " +
                             std::string(kNowMs) +
                             ") ON CONFLICT (name) DO UPDATE SET host = excluded.host, "
                             "device_keys = excluded.device_keys, last_seen_ms = "
                             "excluded.last_seen_ms"));
    upsert.BindAll(agent.name, agent.host, nlohmann::json(agent.device_keys).dump(),
                   agent.started_at.empty() ? UtcNow() : agent.started_at);
    return upsert.Run();
  });
}

Expected<std::vector<AgentRecord>> SqliteStore::ListAgents(int64_t within_ms) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Statement query,
      connection_->Prepare("SELECT name, host, device_keys, started_at, last_seen_ms, "
                           "units_done, units_failed FROM agents WHERE ?1 = 0 OR last_seen_ms "
                           ">= " +
                           std::string(kNowMs) + " - ?1 ORDER BY name"));
  query.Bind(1, within_ms);
  std::vector<AgentRecord> agents;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    AgentRecord agent{query.Text(0), query.Text(1), {},          query.Text(3),
                      query.Int(4),  query.Int(5),  query.Int(6)};
    TS_ASSIGN_OR_RETURN(nlohmann::json keys, ParseStoredJson(query.Text(2), "agents.device_keys"));
    agent.device_keys = keys.get<std::vector<std::string>>();
    agents.push_back(std::move(agent));
  }
  return agents;
}

}  // namespace tilesmith::db
