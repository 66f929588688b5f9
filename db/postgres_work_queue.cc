// PostgresStore's work queue (db/work_queue.h). A claim is one UPDATE of the oldest
// claimable row picked with FOR UPDATE SKIP LOCKED, so agents racing for units never wait
// on each other's row locks and never take the same unit; leases run on the server's clock.
#include <utility>

#include "db/postgres_queries.h"
#include "db/postgres_store.h"
#include "db/work_queue_rules.h"

namespace tilesmith::db {
namespace {

using postgres::Params;
using postgres::Result;

// Milliseconds since the epoch, on the server's clock (the wall clock, not the
// transaction's start, so a long transaction does not see time stand still).
constexpr std::string_view kNowMs = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

// A unit is claimable by an agent with the device keys of JSON array $1.
constexpr std::string_view kMatchesKeys =
    "((NOT match_prefix AND device_key IN (SELECT jsonb_array_elements_text($1::jsonb))) OR "
    "(match_prefix AND EXISTS (SELECT 1 FROM jsonb_array_elements_text($1::jsonb) AS k(v) "
    "WHERE starts_with(k.v, device_key))))";

Expected<WorkUnit> ReadUnit(const Result& r, int row) {
  WorkUnit unit;
  unit.id = r.Int(row, 0);
  unit.job_id = r.Text(row, 1);
  unit.sequence = r.Int(row, 2);
  unit.device_key = r.Text(row, 3);
  unit.match_prefix = r.Bool(row, 4);
  unit.fingerprint = r.Text(row, 5);
  unit.name = r.Text(row, 6);
  unit.fusion_text = r.Text(row, 7);
  TS_ASSIGN_OR_RETURN(unit.payload,
                      postgres::ParseStoredJson(r.Text(row, 8), "work_units.payload"));
  TS_ASSIGN_OR_RETURN(unit.state, ParseUnitState(r.Text(row, 9)));
  unit.owner = r.Text(row, 10);
  unit.attempt = r.Int(row, 11);
  unit.reclaims = r.Int(row, 12);
  unit.lease_expires_ms = r.Int(row, 13);
  TS_ASSIGN_OR_RETURN(unit.failures,
                      postgres::ParseStoredJson(r.Text(row, 14), "work_units.failures"));
  unit.error = r.Text(row, 15);
  if (!r.IsNull(row, 16)) {
    TS_ASSIGN_OR_RETURN(unit.result,
                        postgres::ParseStoredJson(r.Text(row, 16), "work_units.result"));
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

// The lease columns of unit `id`, its row locked until the transaction ends.
Expected<StoredLease> LockLease(postgres::Connection& connection, int64_t id) {
  TS_ASSIGN_OR_RETURN(
      Result found,
      connection.Execute("SELECT state, attempt, owner, lease_expires_ms > " + std::string(kNowMs) +
                             ", failures FROM work_units WHERE id = $1 FOR UPDATE",
                         Params().Add(id)));
  if (found.rows() == 0) {
    return MakeError(ErrorCode::kNotFound, "no work unit " + std::to_string(id) + " in the store");
  }
  return StoredLease{found.Text(0, 0), found.Int(0, 1), found.Text(0, 2), found.Bool(0, 3),
                     found.Text(0, 4)};
}

Status CountAgentUnit(postgres::Connection& connection, std::string_view owner,
                      std::string_view column) {
  std::string name(column);
  TS_ASSIGN_OR_RETURN(Result updated, connection.Execute("UPDATE agents SET " + name + " = " +
                                                             name + " + 1 WHERE name = $1",
                                                         Params().Add(owner)));
  return OkStatus();
}

}  // namespace

Expected<int64_t> PostgresStore::EnqueueUnits(std::span<const WorkUnit> units) {
  for (const WorkUnit& unit : units) TS_RETURN_IF_ERROR(ValidateUnit(unit));
  std::string now = UtcNow();
  int64_t added = 0;
  std::lock_guard lock(mutex_);
  TS_RETURN_IF_ERROR(connection_->Transaction(
      "enqueueing " + std::to_string(units.size()) + " work units", [&]() -> Status {
        added = 0;
        for (const WorkUnit& unit : units) {
          TS_ASSIGN_OR_RETURN(
              Result inserted,
              connection_->Execute(
                  "INSERT INTO work_units (job_id, sequence, device_key, match_prefix, "
                  "fingerprint, name, fusion_text, payload, state, created_at, updated_at) "
                  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, 'queued', $9, $9) "
                  "ON CONFLICT (job_id, sequence) DO NOTHING",
                  Params().AddAll(unit.job_id, unit.sequence, unit.device_key, unit.match_prefix,
                                  unit.fingerprint, unit.name, unit.fusion_text,
                                  unit.payload.dump(), now)));
          added += inserted.affected();
        }
        return OkStatus();
      }));
  return added;
}

Expected<std::optional<WorkUnit>> PostgresStore::ClaimUnit(std::string_view owner,
                                                           std::span<const std::string> device_keys,
                                                           int64_t lease_ms) {
  if (owner.empty()) return InvalidArgument("claiming a work unit needs an owner name");
  if (lease_ms <= 0) return InvalidArgument("a lease must last a positive time");
  std::string keys =
      nlohmann::json(std::vector<std::string>(device_keys.begin(), device_keys.end())).dump();
  std::optional<WorkUnit> claimed;
  std::lock_guard lock(mutex_);
  TS_RETURN_IF_ERROR(connection_->Transaction("claiming a work unit", [&]() -> Status {
    claimed.reset();
    std::string now(kNowMs);
    TS_ASSIGN_OR_RETURN(
        Result taken,
        connection_->Execute(
            "UPDATE work_units SET reclaims = reclaims + CASE WHEN state = 'leased' THEN 1 "
            "ELSE 0 END, state = 'leased', owner = $2, attempt = attempt + 1, "
            "lease_expires_ms = " +
                now +
                " + $3, updated_at = $4 WHERE id = (SELECT id FROM work_units WHERE "
                "(state = 'queued' OR (state = 'leased' AND lease_expires_ms <= " +
                now + ")) AND " + std::string(kMatchesKeys) +
                " ORDER BY failures @> jsonb_build_array(jsonb_build_object('owner', $2::text)), "
                "id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING " +
                std::string(kUnitColumns),
            Params().AddAll(keys, owner, lease_ms, UtcNow())));
    if (taken.rows() == 0) return OkStatus();
    TS_ASSIGN_OR_RETURN(WorkUnit unit, ReadUnit(taken, 0));
    claimed = std::move(unit);
    return OkStatus();
  }));
  return claimed;
}

Status PostgresStore::RenewLease(const Lease& lease, int64_t lease_ms) {
  std::lock_guard lock(mutex_);
  return connection_->Transaction("renewing a lease", [&]() -> Status {
    std::string now(kNowMs);
    TS_ASSIGN_OR_RETURN(
        Result renewed,
        connection_->Execute("UPDATE work_units SET lease_expires_ms = " + now +
                                 " + $1 WHERE id = $2 AND attempt = $3 AND owner = $4 AND state "
                                 "= 'leased' AND lease_expires_ms > " +
                                 now,
                             Params().AddAll(lease_ms, lease.unit_id, lease.attempt, lease.owner)));
    if (renewed.affected() == 0) {
      return MakeError(ErrorCode::kFailedPrecondition, LeaseLostMessage(lease));
    }
    return OkStatus();
  });
}

Status PostgresStore::CompleteUnit(const Lease& lease,
                                   std::span<const MeasurementRecord> measurements,
                                   const nlohmann::json& result) {
  auto done = WriteBatch(
      measurements, "completing work unit " + std::to_string(lease.unit_id),
      [&]() -> Expected<bool> {
        TS_ASSIGN_OR_RETURN(StoredLease stored, LockLease(*connection_, lease.unit_id));
        switch (StandingOf(lease, stored.state, stored.attempt, stored.owner, stored.unexpired)) {
          case LeaseStanding::kCompletedByIt:
            return false;
          case LeaseStanding::kLost:
            return MakeError(ErrorCode::kFailedPrecondition, LeaseLostMessage(lease));
          case LeaseStanding::kHeld:
            break;
        }
        TS_ASSIGN_OR_RETURN(
            Result finished,
            connection_->Execute("UPDATE work_units SET state = 'done', result = "
                                 "$1::jsonb, updated_at = $2 WHERE id = $3",
                                 Params().AddAll(result.dump(), UtcNow(), lease.unit_id)));
        TS_RETURN_IF_ERROR(CountAgentUnit(*connection_, lease.owner, "units_done"));
        return true;
      });
  if (!done) return std::unexpected(done.error());
  return OkStatus();
}

Expected<UnitState> PostgresStore::FailUnit(const Lease& lease, std::string_view reason) {
  UnitState state = UnitState::kQueued;
  std::lock_guard lock(mutex_);
  TS_RETURN_IF_ERROR(connection_->Transaction(
      "failing work unit " + std::to_string(lease.unit_id), [&]() -> Status {
        TS_ASSIGN_OR_RETURN(StoredLease stored, LockLease(*connection_, lease.unit_id));
        if (StandingOf(lease, stored.state, stored.attempt, stored.owner, stored.unexpired) !=
            LeaseStanding::kHeld) {
          return MakeError(ErrorCode::kFailedPrecondition, LeaseLostMessage(lease));
        }
        TS_ASSIGN_OR_RETURN(nlohmann::json failures,
                            postgres::ParseStoredJson(stored.failures, "work_units.failures"));
        FailureOutcome outcome = AddFailure(failures, lease, reason);
        state = outcome.final ? UnitState::kFailed : UnitState::kQueued;
        TS_ASSIGN_OR_RETURN(
            Result updated,
            connection_->Execute("UPDATE work_units SET state = $1, failures = $2::jsonb, error = "
                                 "$3, lease_expires_ms = 0, updated_at = $4 WHERE id = $5",
                                 Params().AddAll(UnitStateName(state), outcome.failures.dump(),
                                                 outcome.error, UtcNow(), lease.unit_id)));
        return CountAgentUnit(*connection_, lease.owner, "units_failed");
      }));
  return state;
}

Status PostgresStore::ReleaseUnit(const Lease& lease) {
  std::lock_guard lock(mutex_);
  return connection_->Transaction(
      "giving back work unit " + std::to_string(lease.unit_id), [&]() -> Status {
        TS_ASSIGN_OR_RETURN(StoredLease stored, LockLease(*connection_, lease.unit_id));
        if (StandingOf(lease, stored.state, stored.attempt, stored.owner, stored.unexpired) !=
            LeaseStanding::kHeld) {
          return MakeError(ErrorCode::kFailedPrecondition, LeaseLostMessage(lease));
        }
        TS_ASSIGN_OR_RETURN(Result updated,
                            connection_->Execute("UPDATE work_units SET state = 'queued', "
                                                 "lease_expires_ms = 0, updated_at = $1 WHERE "
                                                 "id = $2",
                                                 Params().AddAll(UtcNow(), lease.unit_id)));
        return OkStatus();
      });
}

Expected<int64_t> PostgresStore::CancelUnits(std::string_view job_id, std::string_view reason) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Result updated,
      connection_->Execute("UPDATE work_units SET state = 'failed', error = $1, lease_expires_ms = "
                           "0, updated_at = $2 WHERE job_id = $3 AND (state = 'queued' OR (state = "
                           "'leased' AND lease_expires_ms <= " +
                               std::string(kNowMs) + ")) RETURNING id",
                           Params().AddAll(reason, UtcNow(), job_id)));
  return static_cast<int64_t>(updated.rows());
}

Expected<std::vector<WorkUnit>> PostgresStore::ListUnits(std::string_view job_id) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found, connection_->Execute("SELECT " + std::string(kUnitColumns) +
                                                             " FROM work_units WHERE $1 = '' OR "
                                                             "job_id = $1 ORDER BY job_id, "
                                                             "sequence",
                                                         Params().Add(job_id)));
  std::vector<WorkUnit> units;
  for (int row = 0; row < found.rows(); ++row) {
    TS_ASSIGN_OR_RETURN(WorkUnit unit, ReadUnit(found, row));
    units.push_back(std::move(unit));
  }
  return units;
}

Expected<UnitCounts> PostgresStore::CountUnits(std::string_view job_id) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Result found,
      connection_->Execute("SELECT state, count(*), coalesce(sum(reclaims), 0), count(*) FILTER "
                           "(WHERE state = 'leased' AND lease_expires_ms <= " +
                               std::string(kNowMs) +
                               ") FROM work_units WHERE $1 = '' OR job_id = $1 GROUP BY state",
                           Params().Add(job_id)));
  UnitCounts counts;
  for (int row = 0; row < found.rows(); ++row) {
    TS_ASSIGN_OR_RETURN(UnitState state, ParseUnitState(found.Text(row, 0)));
    SetStateCount(counts, state, found.Int(row, 1));
    counts.reclaims += found.Int(row, 2);
    counts.expired += found.Int(row, 3);
  }
  return counts;
}

Status PostgresStore::PutAgent(const AgentRecord& agent) {
  if (agent.name.empty()) return InvalidArgument("an agent needs a name");
  std::lock_guard lock(mutex_);
  return connection_->Transaction("recording agent " + agent.name, [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Result upserted,
        connection_->Execute(
            "INSERT INTO agents (name, host, device_keys, started_at, last_seen_ms) VALUES ($1, "
            "$2, $3::jsonb, $4, " +
                std::string(kNowMs) +
                ") ON CONFLICT (name) DO UPDATE SET host = excluded.host, device_keys = "
                "excluded.device_keys, last_seen_ms = excluded.last_seen_ms",
            Params().AddAll(agent.name, agent.host, nlohmann::json(agent.device_keys).dump(),
                            agent.started_at.empty() ? UtcNow() : agent.started_at)));
    return OkStatus();
  });
}

Expected<std::vector<AgentRecord>> PostgresStore::ListAgents(int64_t within_ms) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Result found,
      connection_->Execute("SELECT name, host, device_keys, started_at, last_seen_ms, "
                           "units_done, units_failed FROM agents WHERE $1 = 0 OR last_seen_ms "
                           ">= " +
                               std::string(kNowMs) + " - $1 ORDER BY name",
                           Params().Add(within_ms)));
  std::vector<AgentRecord> agents;
  for (int row = 0; row < found.rows(); ++row) {
    AgentRecord agent{found.Text(row, 0), found.Text(row, 1), {},
                      found.Text(row, 3), found.Int(row, 4),  found.Int(row, 5),
                      found.Int(row, 6)};
    TS_ASSIGN_OR_RETURN(nlohmann::json keys,
                        postgres::ParseStoredJson(found.Text(row, 2), "agents.device_keys"));
    agent.device_keys = keys.get<std::vector<std::string>>();
    agents.push_back(std::move(agent));
  }
  return agents;
}

}  // namespace tilesmith::db
