// SqliteStore's predictions and calibrations tables (db/predictions.h).
#include <sqlite3.h>

#include <set>

#include "db/sqlite_queries.h"
#include "db/sqlite_store.h"

namespace tilesmith::db {
namespace {

using sqlite::Statement;

constexpr std::string_view kPredictionColumns =
    "p.fingerprint, p.device_key, p.compiler_version, c.emitter, c.config_json, p.config_hash, "
    "p.is_default, p.model, p.model_description, p.status, p.message, p.predicted_us, "
    "p.breakdown, p.compile_stats, p.predicted_at, p.job_id";

Expected<PredictionRecord> ReadPrediction(const Statement& row) {
  PredictionRecord prediction;
  prediction.key = {row.Text(0), row.Text(1), row.Text(2)};
  prediction.emitter = row.Text(3);
  TS_ASSIGN_OR_RETURN(prediction.config, ParseStoredJson(row.Text(4), "config_json"));
  prediction.config_hash = row.Text(5);
  prediction.is_default = row.Int(6) != 0;
  prediction.model = row.Text(7);
  prediction.model_description = row.Text(8);
  TS_ASSIGN_OR_RETURN(prediction.status, ParseTrialStatus(row.Text(9)));
  prediction.message = row.Text(10);
  prediction.predicted_us = row.OptionalDouble(11);
  TS_ASSIGN_OR_RETURN(prediction.breakdown, ParseStoredJson(row.Text(12), "breakdown"));
  TS_ASSIGN_OR_RETURN(prediction.compile_stats, ParseStoredJson(row.Text(13), "compile_stats"));
  prediction.predicted_at = row.Text(14);
  prediction.job_id = row.Text(15);
  return prediction;
}

// Foreign key failures would only say "FOREIGN KEY constraint failed": name the missing
// kernel or device instead, checking each distinct one once.
Status RequireKeys(sqlite::Connection& connection, std::span<const PredictionRecord> batch) {
  std::set<std::string> kernels, devices;
  for (const PredictionRecord& p : batch) {
    kernels.insert(p.key.fingerprint);
    devices.insert(p.key.device_key);
  }
  auto require = [&](const std::set<std::string>& keys, std::string_view sql,
                     const std::string& what, const std::string& closing) -> Status {
    TS_ASSIGN_OR_RETURN(Statement exists, connection.Prepare(sql));
    for (const std::string& key : keys) {
      exists.Reset();
      exists.Bind(1, key);
      TS_ASSIGN_OR_RETURN(bool found, exists.Step());
      if (!found) {
        return MakeError(
            ErrorCode::kFailedPrecondition,
            what + key + closing + " is not in the store (put it before its predictions)");
      }
    }
    return OkStatus();
  };
  TS_RETURN_IF_ERROR(
      require(kernels, "SELECT 1 FROM kernels WHERE fingerprint = ?", "kernel ", ""));
  return require(devices, "SELECT 1 FROM devices WHERE device_key = ?", "device '", "'");
}

}  // namespace

Expected<int64_t> SqliteStore::RecordPredictions(std::span<const PredictionRecord> batch) {
  std::vector<std::string> canonical;
  std::vector<std::string> hashes;
  for (const PredictionRecord& prediction : batch) {
    TS_RETURN_IF_ERROR(ValidatePrediction(prediction));
    TS_ASSIGN_OR_RETURN(std::string text, CanonicalConfig(prediction.config));
    TS_ASSIGN_OR_RETURN(std::string hash, ConfigHash(prediction.config));
    canonical.push_back(std::move(text));
    hashes.push_back(std::move(hash));
  }
  std::string now = UtcNow();
  std::lock_guard lock(mutex_);
  int64_t written = 0;
  TS_RETURN_IF_ERROR(connection_->WriteTransaction(
      "recording " + std::to_string(batch.size()) + " predictions", [&]() -> Status {
        written = 0;
        TS_RETURN_IF_ERROR(RequireKeys(*connection_, batch));
        TS_ASSIGN_OR_RETURN(
            Statement insert_config,
            connection_->Prepare("INSERT INTO configs (fingerprint, config_hash, emitter, "
                                 "config_json) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"));
        TS_ASSIGN_OR_RETURN(
            Statement insert,
            connection_->Prepare(
                "INSERT INTO predictions (fingerprint, config_hash, device_key, "
                "compiler_version, is_default, model, model_description, status, message, "
                "predicted_us, breakdown, compile_stats, predicted_at, job_id) VALUES (?, ?, ?, "
                "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (fingerprint, device_key, "
                "compiler_version, model, config_hash) DO UPDATE SET is_default = "
                "excluded.is_default, model_description = excluded.model_description, status "
                "= excluded.status, message = excluded.message, predicted_us = "
                "excluded.predicted_us, breakdown = excluded.breakdown, compile_stats = "
                "excluded.compile_stats, predicted_at = excluded.predicted_at, job_id = "
                "excluded.job_id"));
        for (size_t i = 0; i < batch.size(); ++i) {
          const PredictionRecord& p = batch[i];
          insert_config.Reset();
          insert_config.BindAll(p.key.fingerprint, hashes[i], p.emitter, canonical[i]);
          TS_RETURN_IF_ERROR(insert_config.Run());
          insert.Reset();
          insert.BindAll(p.key.fingerprint, hashes[i], p.key.device_key, p.key.compiler_version,
                         p.is_default ? 1 : 0, p.model, p.model_description,
                         TrialStatusName(p.status), p.message, p.predicted_us, p.breakdown.dump(),
                         p.compile_stats.dump(), p.predicted_at.empty() ? now : p.predicted_at);
          if (p.job_id.empty()) {
            insert.Bind(14, std::nullopt);
          } else {
            insert.Bind(14, p.job_id);
          }
          TS_RETURN_IF_ERROR(insert.Run());
          ++written;
        }
        return OkStatus();
      }));
  return written;
}

Expected<std::vector<PredictionRecord>> SqliteStore::Predictions(const ResultFilter& filter) {
  Conditions where = FilterConditions(filter, "p.");
  std::string sql = "SELECT " + std::string(kPredictionColumns) +
                    " FROM predictions AS p JOIN configs AS c USING (fingerprint, config_hash)";
  if (!where.sql.empty()) sql += " WHERE " + where.sql;
  sql +=
      " ORDER BY p.fingerprint, p.device_key, p.compiler_version, p.status <> 'ok', "
      "p.predicted_us, p.config_hash, p.model";
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query, connection_->Prepare(sql));
  BindValues(query, where.values);
  std::vector<PredictionRecord> predictions;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return predictions;
    TS_ASSIGN_OR_RETURN(PredictionRecord prediction, ReadPrediction(query));
    predictions.push_back(std::move(prediction));
  }
}

Expected<int64_t> SqliteStore::PutCalibration(const CalibrationRecord& calibration) {
  TS_RETURN_IF_ERROR(ValidateCalibration(calibration));
  std::string measured_at = calibration.measured_at.empty() ? UtcNow() : calibration.measured_at;
  std::lock_guard lock(mutex_);
  int64_t id = 0;
  TS_RETURN_IF_ERROR(connection_->WriteTransaction(
      "storing the calibration of " + calibration.device_key, [&]() -> Status {
        TS_ASSIGN_OR_RETURN(Statement insert,
                            connection_->Prepare("INSERT INTO calibrations (device_key, figures, "
                                                 "measured_at) VALUES (?, ?, ?)"));
        insert.BindAll(calibration.device_key, calibration.figures.dump(), measured_at);
        TS_RETURN_IF_ERROR(insert.Run());
        id = sqlite3_last_insert_rowid(connection_->handle());
        return OkStatus();
      }));
  return id;
}

Expected<std::optional<CalibrationRecord>> SqliteStore::LatestCalibration(
    std::string_view device_key) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query,
                      connection_->Prepare("SELECT id, device_key, figures, measured_at FROM "
                                           "calibrations WHERE device_key = ? ORDER BY id DESC "
                                           "LIMIT 1"));
  query.Bind(1, device_key);
  TS_ASSIGN_OR_RETURN(bool found, query.Step());
  if (!found) return std::optional<CalibrationRecord>();
  CalibrationRecord calibration;
  calibration.id = query.Int(0);
  calibration.device_key = query.Text(1);
  TS_ASSIGN_OR_RETURN(calibration.figures, ParseStoredJson(query.Text(2), "figures"));
  calibration.measured_at = query.Text(3);
  return std::optional<CalibrationRecord>(std::move(calibration));
}

}  // namespace tilesmith::db
