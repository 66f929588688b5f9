// PostgresStore: opening, the results role and the admin role.
#include "db/postgres_store.h"

#include <map>
#include <set>
#include <utility>

#include "db/postgres_queries.h"
#include "db/postgres_schema.h"

namespace tilesmith::db {

namespace postgres {

std::string FilterConditions(const ResultFilter& filter, std::string_view prefix, Params& params) {
  std::string sql;
  auto add = [&](const std::optional<std::string>& value, std::string_view column) {
    if (!value) return;
    if (!sql.empty()) sql += " AND ";
    params.Add(*value);
    sql += std::string(prefix) + std::string(column) + " = $" + std::to_string(params.size());
  };
  add(filter.fingerprint, "fingerprint");
  add(filter.device_key, "device_key");
  add(filter.compiler_version, "compiler_version");
  return sql;
}

Expected<nlohmann::json> ParseStoredJson(const std::string& text, std::string_view column) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "stored " + std::string(column) + " is not valid JSON");
  }
  return value;
}

Expected<MeasurementRecord> ReadMeasurement(const Result& r, int row) {
  MeasurementRecord m;
  m.uid = r.Text(row, 0);
  m.key = {r.Text(row, 1), r.Text(row, 2), r.Text(row, 3)};
  m.emitter = r.Text(row, 4);
  TS_ASSIGN_OR_RETURN(m.config, ParseStoredJson(r.Text(row, 5), "config_json"));
  m.config_hash = r.Text(row, 6);
  m.is_default = r.Bool(row, 7);
  TS_ASSIGN_OR_RETURN(m.status, ParseTrialStatus(r.Text(row, 8)));
  m.message = r.Text(row, 9);
  if (!r.IsNull(row, 10)) {
    Timing timing{r.Double(row, 10), r.Double(row, 11), r.Double(row, 12),
                  r.Double(row, 13), r.Double(row, 14), {}};
    TS_ASSIGN_OR_RETURN(nlohmann::json times, ParseStoredJson(r.Text(row, 15), "times_us"));
    if (!times.is_array()) return MakeError(ErrorCode::kFailedPrecondition, "times_us not a list");
    for (const nlohmann::json& time : times) {
      if (!time.is_number()) {
        return MakeError(ErrorCode::kFailedPrecondition, "times_us holds a non-number");
      }
      timing.times_us.push_back(time.get<double>());
    }
    m.timing = std::move(timing);
  }
  TS_ASSIGN_OR_RETURN(m.compile_stats, ParseStoredJson(r.Text(row, 16), "compile_stats"));
  m.verification_error = r.OptionalDouble(row, 17);
  m.measured_at = r.Text(row, 18);
  m.job_id = r.Text(row, 19);
  return m;
}

}  // namespace postgres

namespace {

using postgres::Params;
using postgres::Result;

constexpr std::string_view kDeviceColumns =
    "target, compute_capability, name, cores, clock_mhz, memory_bandwidth_gbps, cache_bytes, "
    "driver_version, toolkit_version";

DeviceRecord ReadDevice(const Result& r, int row) {
  return DeviceRecord{r.Text(row, 0), r.Text(row, 1), r.Text(row, 2),
                      r.Int(row, 3),  r.Int(row, 4),  r.Double(row, 5),
                      r.Int(row, 6),  r.Text(row, 7), r.Text(row, 8)};
}

// Writes the measurements of one RecordBatch transaction, checking each kernel, device and
// config once.
class BatchWriter {
 public:
  explicit BatchWriter(postgres::Connection& connection) : connection_(connection) {}

  Status Write(const MeasurementRecord& m, const std::string& config_json, int64_t* inserted) {
    TS_RETURN_IF_ERROR(RequireRow("SELECT 1 FROM kernels WHERE fingerprint = $1", m.key.fingerprint,
                                  kernels_seen_,
                                  "kernel " + m.key.fingerprint +
                                      " is not in the store (put the kernel before its "
                                      "measurements)"));
    TS_RETURN_IF_ERROR(RequireRow("SELECT 1 FROM devices WHERE device_key = $1", m.key.device_key,
                                  devices_seen_,
                                  "device '" + m.key.device_key +
                                      "' is not in the store (put the device before its "
                                      "measurements)"));
    TS_RETURN_IF_ERROR(WriteConfig(m, config_json));
    const std::optional<Timing>& timing = m.timing;
    auto time = [&](double Timing::*field) -> std::optional<double> {
      if (!timing) return std::nullopt;
      return (*timing).*field;
    };
    Params params;
    params.AddAll(m.uid, m.key.fingerprint, m.config_hash, m.key.device_key, m.key.compiler_version,
                  m.is_default, TrialStatusName(m.status), m.message, time(&Timing::median_us),
                  time(&Timing::p20_us), time(&Timing::p80_us), time(&Timing::min_us),
                  time(&Timing::max_us),
                  nlohmann::json(timing ? timing->times_us : std::vector<double>{}).dump(),
                  m.compile_stats.dump(), m.verification_error, m.measured_at);
    if (m.job_id.empty()) {
      params.Add(std::nullopt);
    } else {
      params.Add(m.job_id);
    }
    TS_ASSIGN_OR_RETURN(
        Result done,
        connection_.Execute(
            "INSERT INTO measurements (uid, fingerprint, config_hash, device_key, "
            "compiler_version, is_default, status, message, median_us, p20_us, p80_us, min_us, "
            "max_us, times_us, compile_stats, verification_error, measured_at, job_id) VALUES "
            "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) "
            "ON CONFLICT (uid) DO NOTHING",
            params));
    *inserted += done.affected();
    return OkStatus();
  }

 private:
  // A foreign key failure would only name the constraint; name the missing row instead.
  Status RequireRow(std::string_view sql, const std::string& key, std::set<std::string>& seen,
                    const std::string& missing_message) {
    if (seen.contains(key)) return OkStatus();
    TS_ASSIGN_OR_RETURN(Result found, connection_.Execute(sql, Params().Add(key)));
    if (found.rows() == 0) return MakeError(ErrorCode::kFailedPrecondition, missing_message);
    seen.insert(key);
    return OkStatus();
  }

  // The same config under another emitter would be another kernel: refused, not merged.
  Status WriteConfig(const MeasurementRecord& m, const std::string& config_json) {
    std::string config_key = m.key.fingerprint + "/" + m.config_hash;
    if (configs_seen_.contains(config_key)) return OkStatus();
    TS_ASSIGN_OR_RETURN(
        Result inserted,
        connection_.Execute(
            "INSERT INTO configs (fingerprint, config_hash, emitter, config_json) "
            "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            Params().AddAll(m.key.fingerprint, m.config_hash, m.emitter, config_json)));
    if (inserted.affected() == 0) {
      TS_ASSIGN_OR_RETURN(Result stored,
                          connection_.Execute("SELECT emitter FROM configs WHERE fingerprint = $1 "
                                              "AND config_hash = $2",
                                              Params().AddAll(m.key.fingerprint, m.config_hash)));
      if (stored.rows() > 0 && stored.Text(0, 0) != m.emitter) {
        return InvalidArgument("config " + config_json + " of kernel " + m.key.fingerprint +
                               " is stored for emitter '" + stored.Text(0, 0) + "', not '" +
                               m.emitter + "'");
      }
    }
    configs_seen_.insert(config_key);
    return OkStatus();
  }

  postgres::Connection& connection_;
  std::set<std::string> kernels_seen_;
  std::set<std::string> devices_seen_;
  std::set<std::string> configs_seen_;
};

}  // namespace

Expected<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url,
                                                             bool read_only) {
  TS_ASSIGN_OR_RETURN(auto connection, postgres::Connection::Open(url));
  TS_RETURN_IF_ERROR(postgres::Migrate(*connection, read_only));
  if (read_only) {
    TS_ASSIGN_OR_RETURN(Result set, connection->Execute("SET default_transaction_read_only = on"));
  }
  return std::unique_ptr<PostgresStore>(new PostgresStore(std::move(connection)));
}

Expected<bool> PostgresStore::PutDevice(const DeviceRecord& device) {
  TS_RETURN_IF_ERROR(ValidateDevice(device));
  std::lock_guard lock(mutex_);
  bool inserted = false;
  TS_RETURN_IF_ERROR(connection_->Transaction("storing a device", [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Result done,
        connection_->Execute(
            "INSERT INTO devices (device_key, " + std::string(kDeviceColumns) +
                ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
                "ON CONFLICT DO NOTHING",
            Params().AddAll(device.Key(), device.target, device.compute_capability, device.name,
                            device.cores, device.clock_mhz, device.memory_bandwidth_gbps,
                            device.cache_bytes, device.driver_version, device.toolkit_version)));
    inserted = done.affected() > 0;
    return OkStatus();
  }));
  return inserted;
}

Expected<bool> PostgresStore::PutKernel(const KernelRecord& kernel) {
  TS_RETURN_IF_ERROR(ValidateKernel(kernel));
  std::lock_guard lock(mutex_);
  bool inserted = false;
  TS_RETURN_IF_ERROR(connection_->Transaction("storing a kernel", [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Result done,
        connection_->Execute("INSERT INTO kernels (fingerprint, source_format, name, "
                             "canonical_text, created_at) VALUES ($1, $2, $3, $4, $5) "
                             "ON CONFLICT DO NOTHING",
                             Params().AddAll(kernel.fingerprint, kernel.source_format, kernel.name,
                                             kernel.canonical_text, UtcNow())));
    inserted = done.affected() > 0;
    return OkStatus();
  }));
  return inserted;
}

Expected<BatchResult> PostgresStore::RecordBatch(std::span<const MeasurementRecord> batch) {
  return WriteBatch(batch, "recording " + std::to_string(batch.size()) + " measurements",
                    []() -> Expected<bool> { return true; });
}

Expected<BatchResult> PostgresStore::WriteBatch(std::span<const MeasurementRecord> batch,
                                                std::string_view what,
                                                const std::function<Expected<bool>()>& first) {
  // Everything that can be checked is checked before the transaction starts.
  std::vector<MeasurementRecord> rows(batch.begin(), batch.end());
  std::vector<std::string> config_jsons;
  BatchResult result;
  for (size_t i = 0; i < rows.size(); ++i) {
    TS_ASSIGN_OR_RETURN(std::string config_json,
                        PrepareMeasurement(rows[i], "measurement " + std::to_string(i)));
    config_jsons.push_back(std::move(config_json));
    result.uids.push_back(rows[i].uid);
  }
  std::lock_guard lock(mutex_);
  TS_RETURN_IF_ERROR(connection_->Transaction(what, [&]() -> Status {
    result.inserted = 0;  // a retried transaction starts over
    TS_ASSIGN_OR_RETURN(bool write_rows, first());
    if (!write_rows) return OkStatus();
    BatchWriter writer(*connection_);
    for (size_t i = 0; i < rows.size(); ++i) {
      Status written = writer.Write(rows[i], config_jsons[i], &result.inserted);
      if (!written) {
        return std::unexpected(written.error().WithContext("measurement " + std::to_string(i)));
      }
    }
    return OkStatus();
  }));
  return result;
}

Expected<std::optional<DeviceRecord>> PostgresStore::GetDevice(std::string_view key) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found, connection_->Execute("SELECT " + std::string(kDeviceColumns) +
                                                             " FROM devices WHERE device_key = $1",
                                                         Params().Add(key)));
  if (found.rows() == 0) return std::optional<DeviceRecord>();
  return ReadDevice(found, 0);
}

Expected<std::vector<DeviceRecord>> PostgresStore::ListDevices() {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found, connection_->Execute("SELECT " + std::string(kDeviceColumns) +
                                                         " FROM devices ORDER BY device_key"));
  std::vector<DeviceRecord> devices;
  for (int row = 0; row < found.rows(); ++row) devices.push_back(ReadDevice(found, row));
  return devices;
}

Expected<std::optional<KernelRecord>> PostgresStore::GetKernel(std::string_view fingerprint) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found,
                      connection_->Execute("SELECT fingerprint, source_format, name, "
                                           "canonical_text FROM kernels WHERE fingerprint = $1",
                                           Params().Add(fingerprint)));
  if (found.rows() == 0) return std::optional<KernelRecord>();
  return KernelRecord{found.Text(0, 0), found.Text(0, 1), found.Text(0, 2), found.Text(0, 3)};
}

Expected<std::vector<KernelSummary>> PostgresStore::ListKernels(const ResultFilter& filter) {
  // As SqliteStore::ListKernels: device and compiler version narrow the joined measurements.
  ResultFilter measured = filter;
  measured.fingerprint.reset();
  Params params;
  std::string on = postgres::FilterConditions(measured, "m.", params);
  std::string sql =
      "SELECT k.fingerprint, k.name, k.source_format, count(m.id), "
      "coalesce(sum(CASE WHEN m.status = 'ok' THEN 1 ELSE 0 END), 0), "
      "coalesce(sum(CASE WHEN m.status <> 'ok' THEN 1 ELSE 0 END), 0), "
      "min(CASE WHEN m.status = 'ok' THEN m.median_us END) "
      "FROM kernels AS k LEFT JOIN measurements AS m ON m.fingerprint = k.fingerprint";
  if (!on.empty()) sql += " AND " + on;
  if (filter.fingerprint) {
    params.Add(*filter.fingerprint);
    sql += " WHERE k.fingerprint = $" + std::to_string(params.size());
  }
  sql += " GROUP BY k.fingerprint";
  if (!on.empty()) sql += " HAVING count(m.id) > 0";
  sql += " ORDER BY k.name, k.fingerprint";
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found, connection_->Execute(sql, params));
  std::vector<KernelSummary> kernels;
  for (int row = 0; row < found.rows(); ++row) {
    kernels.push_back({found.Text(row, 0), found.Text(row, 1), found.Text(row, 2),
                       found.Int(row, 3), found.Int(row, 4), found.Int(row, 5),
                       found.OptionalDouble(row, 6)});
  }
  return kernels;
}

Expected<std::vector<BestResult>> PostgresStore::QueryBest(const std::string& where,
                                                           const Params& params) {
  std::string sql = "SELECT " + std::string(postgres::kMeasurementColumns) +
                    ", kernel_name, default_median_us FROM (" + postgres::BestResultsQuery(where) +
                    ") AS best ORDER BY kernel_name, fingerprint, device_key, compiler_version";
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found, connection_->Execute(sql, params));
  std::vector<BestResult> results;
  for (int row = 0; row < found.rows(); ++row) {
    TS_ASSIGN_OR_RETURN(MeasurementRecord measurement, postgres::ReadMeasurement(found, row));
    results.push_back({std::move(measurement), found.Text(row, postgres::kMeasurementColumnCount),
                       found.OptionalDouble(row, postgres::kMeasurementColumnCount + 1)});
  }
  return results;
}

Expected<std::optional<BestResult>> PostgresStore::Best(const ResultKey& key) {
  TS_ASSIGN_OR_RETURN(
      std::vector<BestResult> results,
      QueryBest("m.fingerprint = $1 AND m.device_key = $2 AND m.compiler_version = $3",
                Params().AddAll(key.fingerprint, key.device_key, key.compiler_version)));
  if (results.empty()) return std::optional<BestResult>();
  return std::move(results.front());
}

Expected<std::vector<std::optional<BestResult>>> PostgresStore::BestMany(
    std::span<const ResultKey> keys) {
  // One query per device and compiler version, its fingerprints as one array parameter;
  // the view's rule ranks each key on its own, so the answers are Best's.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> groups;
  for (const ResultKey& key : keys) {
    groups[{key.device_key, key.compiler_version}].insert(key.fingerprint);
  }
  std::map<std::pair<std::string, std::string>, std::map<std::string, BestResult>> found;
  for (const auto& [group, fingerprints] : groups) {
    // A text[] literal: every element quoted, quotes and backslashes escaped.
    std::string array = "{";
    for (const std::string& fingerprint : fingerprints) {
      if (array.size() > 1) array += ",";
      array += "\"";
      for (char c : fingerprint) {
        if (c == '"' || c == '\\') array += '\\';
        array += c;
      }
      array += "\"";
    }
    array += "}";
    TS_ASSIGN_OR_RETURN(std::vector<BestResult> results,
                        QueryBest("m.fingerprint = ANY($1::text[]) AND m.device_key = $2 AND "
                                  "m.compiler_version = $3",
                                  Params().AddAll(array, group.first, group.second)));
    for (BestResult& result : results) {
      std::string fingerprint = result.measurement.key.fingerprint;
      found[group].emplace(std::move(fingerprint), std::move(result));
    }
  }
  std::vector<std::optional<BestResult>> answers;
  answers.reserve(keys.size());
  for (const ResultKey& key : keys) {
    const auto& group = found[{key.device_key, key.compiler_version}];
    auto best = group.find(key.fingerprint);
    answers.push_back(best == group.end() ? std::nullopt : std::optional(best->second));
  }
  return answers;
}

Expected<std::vector<BestResult>> PostgresStore::ListBest(const ResultFilter& filter) {
  Params params;
  std::string where = postgres::FilterConditions(filter, "m.", params);
  return QueryBest(where, params);
}

Expected<std::vector<MeasurementRecord>> PostgresStore::Measurements(const ResultFilter& filter) {
  Params params;
  std::string where = postgres::FilterConditions(filter, "", params);
  std::string sql = "SELECT " + std::string(postgres::kMeasurementColumns) +
                    " FROM measurements JOIN configs USING (fingerprint, config_hash)";
  if (!where.empty()) sql += " WHERE " + where;
  sql += " ORDER BY id";
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found, connection_->Execute(sql, params));
  std::vector<MeasurementRecord> measurements;
  for (int row = 0; row < found.rows(); ++row) {
    TS_ASSIGN_OR_RETURN(MeasurementRecord measurement, postgres::ReadMeasurement(found, row));
    measurements.push_back(std::move(measurement));
  }
  return measurements;
}

Expected<std::vector<MeasuredConfig>> PostgresStore::MeasuredConfigs(const ResultKey& key) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Result found,
      connection_->Execute(
          "SELECT c.config_hash, c.config_json, count(*), bool_or(m.status = 'ok') "
          "FROM measurements AS m JOIN configs AS c USING (fingerprint, config_hash) "
          "WHERE m.fingerprint = $1 AND m.device_key = $2 AND m.compiler_version = $3 "
          "GROUP BY c.fingerprint, c.config_hash ORDER BY c.config_hash",
          Params().AddAll(key.fingerprint, key.device_key, key.compiler_version)));
  std::vector<MeasuredConfig> configs;
  for (int row = 0; row < found.rows(); ++row) {
    configs.push_back(
        {found.Text(row, 0), found.Text(row, 1), found.Int(row, 2), found.Bool(row, 3)});
  }
  return configs;
}

Expected<int64_t> PostgresStore::StorageBytes() {
  std::lock_guard lock(mutex_);
  return connection_->QueryInt("SELECT pg_database_size(current_database())");
}

Expected<StoreStats> PostgresStore::Stats() {
  std::lock_guard lock(mutex_);
  StoreStats stats;
  postgres::Connection& db = *connection_;
  TS_ASSIGN_OR_RETURN(stats.schema_version, postgres::ReadSchemaVersion(db));
  TS_ASSIGN_OR_RETURN(stats.devices, db.QueryInt("SELECT count(*) FROM devices"));
  TS_ASSIGN_OR_RETURN(stats.kernels, db.QueryInt("SELECT count(*) FROM kernels"));
  TS_ASSIGN_OR_RETURN(stats.configs, db.QueryInt("SELECT count(*) FROM configs"));
  TS_ASSIGN_OR_RETURN(stats.measurements, db.QueryInt("SELECT count(*) FROM measurements"));
  TS_ASSIGN_OR_RETURN(stats.predictions, db.QueryInt("SELECT count(*) FROM predictions"));
  TS_ASSIGN_OR_RETURN(stats.calibrations, db.QueryInt("SELECT count(*) FROM calibrations"));
  // The server keeps one write-ahead log for all its databases: none is this one's own.
  TS_ASSIGN_OR_RETURN(stats.database_bytes,
                      db.QueryInt("SELECT pg_database_size(current_database())"));
  stats.wal_bytes = 0;
  for (TrialStatus status : AllTrialStatuses()) {
    stats.by_status[std::string(TrialStatusName(status))];
  }
  TS_ASSIGN_OR_RETURN(Result by_status,
                      db.Execute("SELECT status, count(*) FROM measurements GROUP BY status"));
  for (int row = 0; row < by_status.rows(); ++row) {
    stats.by_status[by_status.Text(row, 0)] = by_status.Int(row, 1);
  }
  TS_ASSIGN_OR_RETURN(Result versions, db.Execute("SELECT DISTINCT compiler_version FROM "
                                                  "measurements ORDER BY compiler_version"));
  for (int row = 0; row < versions.rows(); ++row) {
    stats.compiler_versions.push_back(versions.Text(row, 0));
  }
  return stats;
}

Status PostgresStore::Vacuum() {
  std::lock_guard lock(mutex_);
  // VACUUM runs outside a transaction; only the store's own tables.
  Expected<Result> vacuumed = connection_->Execute(
      "VACUUM devices, kernels, configs, measurements, jobs, models, "
      "predictions, calibrations, schema_version");
  if (!vacuumed) return std::unexpected(vacuumed.error().WithContext("vacuum"));
  return OkStatus();
}

}  // namespace tilesmith::db
