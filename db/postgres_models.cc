// PostgresStore's models, predictions and calibrations tables (db/models.h,
// db/predictions.h).
#include <set>
#include <utility>

#include "db/postgres_queries.h"
#include "db/postgres_store.h"

namespace tilesmith::db {
namespace {

using postgres::Params;
using postgres::Result;

constexpr std::string_view kPredictionColumns =
    "p.fingerprint, p.device_key, p.compiler_version, c.emitter, c.config_json, p.config_hash, "
    "p.is_default, p.model, p.model_description, p.status, p.message, p.predicted_us, "
    "p.breakdown, p.compile_stats, p.predicted_at, p.job_id";

Expected<PredictionRecord> ReadPrediction(const Result& r, int row) {
  PredictionRecord p;
  p.key = {r.Text(row, 0), r.Text(row, 1), r.Text(row, 2)};
  p.emitter = r.Text(row, 3);
  TS_ASSIGN_OR_RETURN(p.config, postgres::ParseStoredJson(r.Text(row, 4), "config_json"));
  p.config_hash = r.Text(row, 5);
  p.is_default = r.Bool(row, 6);
  p.model = r.Text(row, 7);
  p.model_description = r.Text(row, 8);
  TS_ASSIGN_OR_RETURN(p.status, ParseTrialStatus(r.Text(row, 9)));
  p.message = r.Text(row, 10);
  p.predicted_us = r.OptionalDouble(row, 11);
  TS_ASSIGN_OR_RETURN(p.breakdown, postgres::ParseStoredJson(r.Text(row, 12), "breakdown"));
  TS_ASSIGN_OR_RETURN(p.compile_stats, postgres::ParseStoredJson(r.Text(row, 13), "compile_stats"));
  p.predicted_at = r.Text(row, 14);
  p.job_id = r.Text(row, 15);
  return p;
}

// A foreign key failure would only name the constraint: name the missing kernel or device.
Status RequireKeys(postgres::Connection& connection, std::span<const PredictionRecord> batch) {
  std::set<std::string> kernels, devices;
  for (const PredictionRecord& p : batch) {
    kernels.insert(p.key.fingerprint);
    devices.insert(p.key.device_key);
  }
  auto require = [&](const std::set<std::string>& keys, std::string_view sql,
                     const std::string& what, const std::string& closing) -> Status {
    for (const std::string& key : keys) {
      TS_ASSIGN_OR_RETURN(Result found, connection.Execute(sql, Params().Add(key)));
      if (found.rows() == 0) {
        return MakeError(
            ErrorCode::kFailedPrecondition,
            what + key + closing + " is not in the store (put it before its predictions)");
      }
    }
    return OkStatus();
  };
  TS_RETURN_IF_ERROR(
      require(kernels, "SELECT 1 FROM kernels WHERE fingerprint = $1", "kernel ", ""));
  return require(devices, "SELECT 1 FROM devices WHERE device_key = $1", "device '", "'");
}

}  // namespace

Expected<int64_t> PostgresStore::PutModel(const ModelRecord& model) {
  TS_RETURN_IF_ERROR(ValidateModel(model));
  std::string created_at = model.created_at.empty() ? UtcNow() : model.created_at;
  std::lock_guard lock(mutex_);
  int64_t id = 0;
  TS_RETURN_IF_ERROR(connection_->Transaction(
      "storing model " + model.name + " for " + model.device_key, [&]() -> Status {
        TS_ASSIGN_OR_RETURN(
            id,
            connection_->QueryInt(
                "INSERT INTO models (name, device_key, compiler_version, feature_schema, "
                "format, data, training_rows, fusions, meta, created_at) VALUES ($1, $2, $3, "
                "$4, $5, $6, $7, $8, $9, $10) RETURNING id",
                Params().AddAll(model.name, model.device_key, model.compiler_version,
                                model.feature_schema, model.format, model.data, model.training_rows,
                                model.fusions, model.meta.dump(), created_at)));
        return OkStatus();
      }));
  return id;
}

Expected<std::optional<ModelRecord>> PostgresStore::LatestModel(std::string_view name,
                                                                std::string_view device_key,
                                                                std::string_view compiler_version,
                                                                int64_t feature_schema) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Result found,
      connection_->Execute("SELECT id, name, device_key, compiler_version, feature_schema, "
                           "format, data, training_rows, fusions, meta, created_at FROM models "
                           "WHERE name = $1 AND device_key = $2 AND compiler_version = $3 AND "
                           "feature_schema = $4 ORDER BY id DESC LIMIT 1",
                           Params().AddAll(name, device_key, compiler_version, feature_schema)));
  if (found.rows() == 0) return std::optional<ModelRecord>();
  ModelRecord model;
  model.id = found.Int(0, 0);
  model.name = found.Text(0, 1);
  model.device_key = found.Text(0, 2);
  model.compiler_version = found.Text(0, 3);
  model.feature_schema = found.Int(0, 4);
  model.format = found.Text(0, 5);
  model.data = found.Text(0, 6);
  model.training_rows = found.Int(0, 7);
  model.fusions = found.Int(0, 8);
  Expected<nlohmann::json> meta = postgres::ParseStoredJson(found.Text(0, 9), "model meta");
  if (!meta) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "stored model " + std::to_string(model.id) + ": meta is not valid JSON");
  }
  model.meta = std::move(*meta);
  model.created_at = found.Text(0, 10);
  return std::optional<ModelRecord>(std::move(model));
}

Expected<int64_t> PostgresStore::RecordPredictions(std::span<const PredictionRecord> batch) {
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
  TS_RETURN_IF_ERROR(connection_->Transaction(
      "recording " + std::to_string(batch.size()) + " predictions", [&]() -> Status {
        written = 0;
        TS_RETURN_IF_ERROR(RequireKeys(*connection_, batch));
        for (size_t i = 0; i < batch.size(); ++i) {
          const PredictionRecord& p = batch[i];
          TS_ASSIGN_OR_RETURN(
              Result config,
              connection_->Execute(
                  "INSERT INTO configs (fingerprint, config_hash, emitter, "
                  "config_json) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                  Params().AddAll(p.key.fingerprint, hashes[i], p.emitter, canonical[i])));
          Params params;
          params.AddAll(p.key.fingerprint, hashes[i], p.key.device_key, p.key.compiler_version,
                        p.is_default, p.model, p.model_description, TrialStatusName(p.status),
                        p.message, p.predicted_us, p.breakdown.dump(), p.compile_stats.dump(),
                        p.predicted_at.empty() ? now : p.predicted_at);
          if (p.job_id.empty()) {
            params.Add(std::nullopt);
          } else {
            params.Add(p.job_id);
          }
          TS_ASSIGN_OR_RETURN(
              Result done,
              connection_->Execute(
                  "INSERT INTO predictions (fingerprint, config_hash, device_key, "
                  "compiler_version, is_default, model, model_description, status, message, "
                  "predicted_us, breakdown, compile_stats, predicted_at, job_id) VALUES ($1, $2, "
                  "$3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT "
                  "(fingerprint, device_key, compiler_version, model, config_hash) DO UPDATE SET "
                  "is_default = excluded.is_default, model_description = "
                  "excluded.model_description, status = excluded.status, message = "
                  "excluded.message, predicted_us = excluded.predicted_us, breakdown = "
                  "excluded.breakdown, compile_stats = excluded.compile_stats, predicted_at = "
                  "excluded.predicted_at, job_id = excluded.job_id",
                  params));
          ++written;
        }
        return OkStatus();
      }));
  return written;
}

Expected<std::vector<PredictionRecord>> PostgresStore::Predictions(const ResultFilter& filter) {
  Params params;
  std::string where = postgres::FilterConditions(filter, "p.", params);
  std::string sql = "SELECT " + std::string(kPredictionColumns) +
                    " FROM predictions AS p JOIN configs AS c USING (fingerprint, config_hash)";
  if (!where.empty()) sql += " WHERE " + where;
  // NULLS FIRST: SQLite's order, so both stores list the same rows the same way.
  sql +=
      " ORDER BY p.fingerprint, p.device_key, p.compiler_version, p.status <> 'ok', "
      "p.predicted_us NULLS FIRST, p.config_hash, p.model";
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found, connection_->Execute(sql, params));
  std::vector<PredictionRecord> predictions;
  for (int row = 0; row < found.rows(); ++row) {
    TS_ASSIGN_OR_RETURN(PredictionRecord prediction, ReadPrediction(found, row));
    predictions.push_back(std::move(prediction));
  }
  return predictions;
}

Expected<int64_t> PostgresStore::PutCalibration(const CalibrationRecord& calibration) {
  TS_RETURN_IF_ERROR(ValidateCalibration(calibration));
  std::string measured_at = calibration.measured_at.empty() ? UtcNow() : calibration.measured_at;
  std::lock_guard lock(mutex_);
  int64_t id = 0;
  TS_RETURN_IF_ERROR(connection_->Transaction(
      "storing the calibration of " + calibration.device_key, [&]() -> Status {
        TS_ASSIGN_OR_RETURN(
            id, connection_->QueryInt("INSERT INTO calibrations (device_key, figures, "
                                      "measured_at) VALUES ($1, $2, $3) RETURNING id",
                                      Params().AddAll(calibration.device_key,
                                                      calibration.figures.dump(), measured_at)));
        return OkStatus();
      }));
  return id;
}

Expected<std::optional<CalibrationRecord>> PostgresStore::LatestCalibration(
    std::string_view device_key) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found,
                      connection_->Execute("SELECT id, device_key, figures, measured_at FROM "
                                           "calibrations WHERE device_key = $1 ORDER BY id DESC "
                                           "LIMIT 1",
                                           Params().Add(device_key)));
  if (found.rows() == 0) return std::optional<CalibrationRecord>();
  CalibrationRecord calibration;
  calibration.id = found.Int(0, 0);
  calibration.device_key = found.Text(0, 1);
  TS_ASSIGN_OR_RETURN(calibration.figures, postgres::ParseStoredJson(found.Text(0, 2), "figures"));
  calibration.measured_at = found.Text(0, 3);
  return std::optional<CalibrationRecord>(std::move(calibration));
}

}  // namespace tilesmith::db
