// SqliteStore's verdicts table (db/verdicts.h).
#include <sqlite3.h>

#include "db/sqlite_queries.h"
#include "db/sqlite_store.h"

namespace tilesmith::db {
namespace {

using sqlite::Statement;

Expected<VerdictRecord> ReadVerdict(const Statement& row) {
  VerdictRecord verdict;
  verdict.id = row.Int(0);
  verdict.key = {row.Text(1), row.Text(2), row.Text(3)};
  verdict.best_config_hash = row.Text(4);
  TS_ASSIGN_OR_RETURN(verdict.best_config, ParseStoredJson(row.Text(5), "best_config"));
  verdict.chosen_config_hash = row.Text(6);
  TS_ASSIGN_OR_RETURN(verdict.chosen_config, ParseStoredJson(row.Text(7), "chosen_config"));
  verdict.chosen_is_default = row.Int(8) != 0;
  verdict.chosen_median_us = row.Double(9);
  verdict.default_median_us = row.Double(10);
  verdict.speedup = row.Double(11);
  verdict.speedup_low = row.Double(12);
  verdict.speedup_high = row.Double(13);
  verdict.confidence = row.Double(14);
  verdict.significant = row.Int(15) != 0;
  verdict.rounds = row.Int(16);
  verdict.method = row.Text(17);
  verdict.reason = row.Text(18);
  TS_ASSIGN_OR_RETURN(verdict.details, ParseStoredJson(row.Text(19), "details"));
  verdict.decided_at = row.Text(20);
  verdict.job_id = row.Text(21);
  return verdict;
}

}  // namespace

Expected<int64_t> SqliteStore::RecordVerdict(const VerdictRecord& verdict) {
  TS_RETURN_IF_ERROR(ValidateVerdict(verdict));
  TS_ASSIGN_OR_RETURN(std::string best_hash, ConfigHash(verdict.best_config));
  TS_ASSIGN_OR_RETURN(std::string chosen_hash, ConfigHash(verdict.chosen_config));
  std::string decided_at = verdict.decided_at.empty() ? UtcNow() : verdict.decided_at;
  std::lock_guard lock(mutex_);
  int64_t id = 0;
  TS_RETURN_IF_ERROR(connection_->WriteTransaction(
      "storing the verdict of " + verdict.key.fingerprint.substr(0, 12), [&]() -> Status {
        // Name what is missing instead of "FOREIGN KEY constraint failed".
        TS_ASSIGN_OR_RETURN(Statement kernel,
                            connection_->Prepare("SELECT 1 FROM kernels WHERE fingerprint = ?"));
        kernel.Bind(1, verdict.key.fingerprint);
        TS_ASSIGN_OR_RETURN(bool has_kernel, kernel.Step());
        if (!has_kernel) {
          return MakeError(ErrorCode::kFailedPrecondition,
                           "kernel " + verdict.key.fingerprint +
                               " is not in the store (put it before its verdict)");
        }
        TS_ASSIGN_OR_RETURN(Statement device,
                            connection_->Prepare("SELECT 1 FROM devices WHERE device_key = ?"));
        device.Bind(1, verdict.key.device_key);
        TS_ASSIGN_OR_RETURN(bool has_device, device.Step());
        if (!has_device) {
          return MakeError(ErrorCode::kFailedPrecondition,
                           "device '" + verdict.key.device_key +
                               "' is not in the store (put it before its verdict)");
        }
        TS_ASSIGN_OR_RETURN(
            Statement insert,
            connection_->Prepare(
                "INSERT INTO verdicts (fingerprint, device_key, compiler_version, "
                "best_config_hash, best_config, chosen_config_hash, chosen_config, "
                "chosen_is_default, chosen_median_us, default_median_us, speedup, speedup_low, "
                "speedup_high, confidence, significant, rounds, method, reason, details, "
                "decided_at, job_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?, ?, ?)"));
        insert.BindAll(
            verdict.key.fingerprint, verdict.key.device_key, verdict.key.compiler_version,
            best_hash, verdict.best_config.dump(), chosen_hash, verdict.chosen_config.dump(),
            verdict.chosen_is_default ? 1 : 0, verdict.chosen_median_us, verdict.default_median_us,
            verdict.speedup, verdict.speedup_low, verdict.speedup_high, verdict.confidence,
            verdict.significant ? 1 : 0, verdict.rounds, verdict.method, verdict.reason,
            verdict.details.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
            decided_at);
        if (verdict.job_id.empty()) {
          insert.Bind(21, std::nullopt);
        } else {
          insert.Bind(21, verdict.job_id);
        }
        TS_RETURN_IF_ERROR(insert.Run());
        id = sqlite3_last_insert_rowid(connection_->handle());
        return OkStatus();
      }));
  return id;
}

Expected<std::vector<std::optional<VerdictRecord>>> SqliteStore::Verdicts(
    std::span<const ResultKey> keys) {
  std::vector<std::optional<VerdictRecord>> verdicts(keys.size());
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Statement query,
      connection_->Prepare(
          "SELECT id, fingerprint, device_key, compiler_version, best_config_hash, best_config, "
          "chosen_config_hash, chosen_config, chosen_is_default, chosen_median_us, "
          "default_median_us, speedup, speedup_low, speedup_high, confidence, significant, "
          "rounds, method, reason, details, decided_at, coalesce(job_id, '') FROM verdicts "
          "WHERE fingerprint = ? AND device_key = ? AND compiler_version = ? ORDER BY id DESC "
          "LIMIT 1"));
  for (size_t i = 0; i < keys.size(); ++i) {
    query.Reset();
    query.BindAll(keys[i].fingerprint, keys[i].device_key, keys[i].compiler_version);
    TS_ASSIGN_OR_RETURN(bool found, query.Step());
    if (!found) continue;
    TS_ASSIGN_OR_RETURN(VerdictRecord verdict, ReadVerdict(query));
    verdicts[i] = std::move(verdict);
  }
  return verdicts;
}

}  // namespace tilesmith::db
