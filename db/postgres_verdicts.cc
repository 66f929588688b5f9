// PostgresStore's verdicts table (db/verdicts.h).
#include "db/postgres_queries.h"
#include "db/postgres_store.h"
#include "db/verdicts.h"

namespace tilesmith::db {
namespace {

using postgres::Params;
using postgres::Result;

Expected<VerdictRecord> ReadVerdict(const Result& r, int row) {
  VerdictRecord verdict;
  verdict.id = r.Int(row, 0);
  verdict.key = {r.Text(row, 1), r.Text(row, 2), r.Text(row, 3)};
  verdict.best_config_hash = r.Text(row, 4);
  TS_ASSIGN_OR_RETURN(verdict.best_config,
                      postgres::ParseStoredJson(r.Text(row, 5), "best_config"));
  verdict.chosen_config_hash = r.Text(row, 6);
  TS_ASSIGN_OR_RETURN(verdict.chosen_config,
                      postgres::ParseStoredJson(r.Text(row, 7), "chosen_config"));
  verdict.chosen_is_default = r.Bool(row, 8);
  verdict.chosen_median_us = r.Double(row, 9);
  verdict.default_median_us = r.Double(row, 10);
  verdict.speedup = r.Double(row, 11);
  verdict.speedup_low = r.Double(row, 12);
  verdict.speedup_high = r.Double(row, 13);
  verdict.confidence = r.Double(row, 14);
  verdict.significant = r.Bool(row, 15);
  verdict.rounds = r.Int(row, 16);
  verdict.method = r.Text(row, 17);
  verdict.reason = r.Text(row, 18);
  TS_ASSIGN_OR_RETURN(verdict.details, postgres::ParseStoredJson(r.Text(row, 19), "details"));
  verdict.decided_at = r.Text(row, 20);
  verdict.job_id = r.Text(row, 21);
  return verdict;
}

}  // namespace

Expected<int64_t> PostgresStore::RecordVerdict(const VerdictRecord& verdict) {
  TS_RETURN_IF_ERROR(ValidateVerdict(verdict));
  TS_ASSIGN_OR_RETURN(std::string best_hash, ConfigHash(verdict.best_config));
  TS_ASSIGN_OR_RETURN(std::string chosen_hash, ConfigHash(verdict.chosen_config));
  std::string decided_at = verdict.decided_at.empty() ? UtcNow() : verdict.decided_at;
  Params params;
  params.AddAll(verdict.key.fingerprint, verdict.key.device_key, verdict.key.compiler_version,
                best_hash, verdict.best_config.dump(), chosen_hash, verdict.chosen_config.dump(),
                verdict.chosen_is_default, verdict.chosen_median_us, verdict.default_median_us,
                verdict.speedup, verdict.speedup_low, verdict.speedup_high, verdict.confidence,
                verdict.significant, verdict.rounds, verdict.method, verdict.reason,
                verdict.details.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                decided_at);
  if (verdict.job_id.empty()) {
    params.Add(std::nullopt);
  } else {
    params.Add(verdict.job_id);
  }
  std::lock_guard lock(mutex_);
  int64_t id = 0;
  TS_RETURN_IF_ERROR(connection_->Transaction(
      "storing the verdict of " + verdict.key.fingerprint.substr(0, 12), [&]() -> Status {
        // Name what is missing instead of a foreign-key violation.
        TS_ASSIGN_OR_RETURN(Result kernel,
                            connection_->Execute("SELECT 1 FROM kernels WHERE fingerprint = $1",
                                                 Params().Add(verdict.key.fingerprint)));
        if (kernel.rows() == 0) {
          return MakeError(ErrorCode::kFailedPrecondition,
                           "kernel " + verdict.key.fingerprint +
                               " is not in the store (put it before its verdict)");
        }
        TS_ASSIGN_OR_RETURN(Result device,
                            connection_->Execute("SELECT 1 FROM devices WHERE device_key = $1",
                                                 Params().Add(verdict.key.device_key)));
        if (device.rows() == 0) {
          return MakeError(ErrorCode::kFailedPrecondition,
                           "device '" + verdict.key.device_key +
                               "' is not in the store (put it before its verdict)");
        }
        TS_ASSIGN_OR_RETURN(
            id, connection_->QueryInt(
                    "INSERT INTO verdicts (fingerprint, device_key, compiler_version, "
                    "best_config_hash, best_config, chosen_config_hash, chosen_config, "
                    "chosen_is_default, chosen_median_us, default_median_us, speedup, "
                    "speedup_low, speedup_high, confidence, significant, rounds, method, reason, "
                    "details, decided_at, job_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
                    "$10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21) RETURNING id",
                    params));
        return OkStatus();
      }));
  return id;
}

Expected<std::vector<std::optional<VerdictRecord>>> PostgresStore::Verdicts(
    std::span<const ResultKey> keys) {
  std::vector<std::optional<VerdictRecord>> verdicts(keys.size());
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < keys.size(); ++i) {
    TS_ASSIGN_OR_RETURN(
        Result found,
        connection_->Execute(
            "SELECT id, fingerprint, device_key, compiler_version, best_config_hash, "
            "best_config, chosen_config_hash, chosen_config, chosen_is_default, "
            "chosen_median_us, default_median_us, speedup, speedup_low, speedup_high, "
            "confidence, significant, rounds, method, reason, details, decided_at, "
            "coalesce(job_id, '') FROM verdicts WHERE fingerprint = $1 AND device_key = $2 AND "
            "compiler_version = $3 ORDER BY id DESC LIMIT 1",
            Params().AddAll(keys[i].fingerprint, keys[i].device_key, keys[i].compiler_version)));
    if (found.rows() == 0) continue;
    TS_ASSIGN_OR_RETURN(VerdictRecord verdict, ReadVerdict(found, 0));
    verdicts[i] = std::move(verdict);
  }
  return verdicts;
}

}  // namespace tilesmith::db
