#include "db/sqlite_store.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>
#include <utility>

#include "db/schema.h"
#include "db/sqlite_queries.h"

namespace tilesmith::db {

Conditions FilterConditions(const ResultFilter& filter, std::string_view prefix) {
  Conditions conditions;
  auto add = [&](const std::optional<std::string>& value, std::string_view column) {
    if (!value) return;
    if (!conditions.sql.empty()) conditions.sql += " AND ";
    conditions.sql += std::string(prefix) + std::string(column) + " = ?";
    conditions.values.push_back(*value);
  };
  add(filter.fingerprint, "fingerprint");
  add(filter.device_key, "device_key");
  add(filter.compiler_version, "compiler_version");
  return conditions;
}

void BindValues(sqlite::Statement& statement, const std::vector<std::string>& values, int first) {
  for (size_t i = 0; i < values.size(); ++i) statement.Bind(first + static_cast<int>(i), values[i]);
}

namespace {

// The start of a corrupted field for an error message: one line of printable ASCII, every
// other byte escaped as \xHH, so a message never carries raw binary or line breaks.
std::string PrintableExcerpt(std::string_view text, size_t limit = 48) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < std::min(text.size(), limit); ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      out += static_cast<char>(byte);
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  if (text.size() > limit) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace

Expected<nlohmann::json> ParseStoredJson(const std::string& text, std::string_view column) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        "stored " + std::string(column) + " is not valid JSON: \"" + PrintableExcerpt(text) + "\"");
  }
  return value;
}

using sqlite::Statement;

namespace {

// A stored times_us list, as the store writes it (`[1.5,2.25,...]`, nlohmann's shortest
// round-trip form), read with from_chars: hundreds of times per trial made a general JSON
// parse most of a cold batch's lookups. Anything else takes the general parser, with the
// same result: both round to the nearest double.
Expected<std::vector<double>> ParseStoredTimes(const std::string& text) {
  std::vector<double> times;
  const char* at = text.data();
  const char* end = at + text.size();
  bool plain = at != end && *at == '[';
  if (plain) ++at;
  while (plain && at != end && *at != ']') {
    double value = 0;
    auto [next, error] = std::from_chars(at, end, value);
    if (error != std::errc() || next == end || !std::isfinite(value)) {
      plain = false;
      break;
    }
    times.push_back(value);
    at = next;
    if (*at == ',' && ++at != end && *at == ']') plain = false;  // `[1,]` is not JSON
  }
  if (plain && at != end && *at == ']' && at + 1 == end) return times;
  times.clear();
  TS_ASSIGN_OR_RETURN(nlohmann::json parsed, ParseStoredJson(text, "times_us"));
  if (!parsed.is_array()) return MakeError(ErrorCode::kFailedPrecondition, "times_us not a list");
  for (const nlohmann::json& time : parsed) {
    if (!time.is_number()) {
      return MakeError(ErrorCode::kFailedPrecondition, "times_us holds a non-number");
    }
    times.push_back(time.get<double>());
  }
  return times;
}

}  // namespace

Expected<MeasurementRecord> ReadMeasurement(const Statement& row) {
  MeasurementRecord measurement;
  measurement.uid = row.Text(0);
  measurement.key = {row.Text(1), row.Text(2), row.Text(3)};
  measurement.emitter = row.Text(4);
  TS_ASSIGN_OR_RETURN(measurement.config, ParseStoredJson(row.Text(5), "config_json"));
  measurement.config_hash = row.Text(6);
  measurement.is_default = row.Int(7) != 0;
  TS_ASSIGN_OR_RETURN(measurement.status, ParseTrialStatus(row.Text(8)));
  measurement.message = row.Text(9);
  if (!row.IsNull(10)) {
    Timing timing{row.Double(10), row.Double(11), row.Double(12),
                  row.Double(13), row.Double(14), {}};
    TS_ASSIGN_OR_RETURN(timing.times_us, ParseStoredTimes(row.Text(15)));
    measurement.timing = std::move(timing);
  }
  TS_ASSIGN_OR_RETURN(measurement.compile_stats, ParseStoredJson(row.Text(16), "compile_stats"));
  measurement.verification_error = row.OptionalDouble(17);
  measurement.measured_at = row.Text(18);
  measurement.job_id = row.Text(19);
  return measurement;
}

namespace {

constexpr std::string_view kDeviceColumns =
    "target, compute_capability, name, cores, clock_mhz, memory_bandwidth_gbps, cache_bytes, "
    "driver_version, toolkit_version";

DeviceRecord ReadDevice(const Statement& row) {
  return DeviceRecord{row.Text(0),   row.Text(1), row.Text(2), row.Int(3), row.Int(4),
                      row.Double(5), row.Int(6),  row.Text(7), row.Text(8)};
}

// Prepared statements of one RecordBatch transaction.
class BatchWriter {
 public:
  static Expected<BatchWriter> Prepare(sqlite::Connection& connection) {
    TS_ASSIGN_OR_RETURN(Statement kernel_exists,
                        connection.Prepare("SELECT 1 FROM kernels WHERE fingerprint = ?"));
    TS_ASSIGN_OR_RETURN(Statement device_exists,
                        connection.Prepare("SELECT 1 FROM devices WHERE device_key = ?"));
    TS_ASSIGN_OR_RETURN(
        Statement insert_config,
        connection.Prepare("INSERT INTO configs (fingerprint, config_hash, emitter, config_json) "
                           "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"));
    TS_ASSIGN_OR_RETURN(Statement config_emitter,
                        connection.Prepare("SELECT emitter FROM configs WHERE fingerprint = ? "
                                           "AND config_hash = ?"));
    TS_ASSIGN_OR_RETURN(
        Statement insert_measurement,
        connection.Prepare("INSERT INTO measurements (uid, fingerprint, config_hash, device_key, "
                           "compiler_version, is_default, status, message, median_us, p20_us, "
                           "p80_us, min_us, max_us, times_us, compile_stats, verification_error, "
                           "measured_at, job_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                           "?, ?, ?, ?, ?) ON CONFLICT (uid) DO NOTHING"));
    return BatchWriter(connection, std::move(kernel_exists), std::move(device_exists),
                       std::move(insert_config), std::move(config_emitter),
                       std::move(insert_measurement));
  }

  // Writes one prepared measurement (uid, hash and time filled); counts it when new.
  Status Write(const MeasurementRecord& m, const std::string& config_json, int64_t* inserted) {
    TS_RETURN_IF_ERROR(RequireRow(kernel_exists_, m.key.fingerprint, kernels_seen_,
                                  "kernel " + m.key.fingerprint +
                                      " is not in the store "
                                      "(put the kernel before its measurements)"));
    TS_RETURN_IF_ERROR(RequireRow(device_exists_, m.key.device_key, devices_seen_,
                                  "device '" + m.key.device_key +
                                      "' is not in the store "
                                      "(put the device before its measurements)"));
    TS_RETURN_IF_ERROR(WriteConfig(m, config_json));
    Statement& insert = insert_measurement_;
    insert.Reset();
    const std::optional<Timing>& timing = m.timing;
    auto time = [&](double Timing::*field) -> std::optional<double> {
      if (!timing) return std::nullopt;
      return (*timing).*field;
    };
    insert.BindAll(m.uid, m.key.fingerprint, m.config_hash, m.key.device_key,
                   m.key.compiler_version, m.is_default ? 1 : 0, TrialStatusName(m.status),
                   m.message, time(&Timing::median_us), time(&Timing::p20_us),
                   time(&Timing::p80_us), time(&Timing::min_us), time(&Timing::max_us),
                   nlohmann::json(timing ? timing->times_us : std::vector<double>{}).dump(),
                   m.compile_stats.dump(), m.verification_error, m.measured_at);
    if (m.job_id.empty()) {
      insert.Bind(18, std::nullopt);
    } else {
      insert.Bind(18, m.job_id);
    }
    TS_RETURN_IF_ERROR(insert.Run());
    *inserted += sqlite3_changes(connection_->handle());
    return OkStatus();
  }

 private:
  BatchWriter(sqlite::Connection& connection, Statement kernel_exists, Statement device_exists,
              Statement insert_config, Statement config_emitter, Statement insert_measurement)
      : connection_(&connection),
        kernel_exists_(std::move(kernel_exists)),
        device_exists_(std::move(device_exists)),
        insert_config_(std::move(insert_config)),
        config_emitter_(std::move(config_emitter)),
        insert_measurement_(std::move(insert_measurement)) {}

  // A foreign key failure would only say "FOREIGN KEY constraint failed"; name the row.
  static Status RequireRow(Statement& exists, const std::string& key, std::set<std::string>& seen,
                           const std::string& missing_message) {
    if (seen.contains(key)) return OkStatus();
    exists.Reset();
    exists.Bind(1, key);
    TS_ASSIGN_OR_RETURN(bool found, exists.Step());
    if (!found) return MakeError(ErrorCode::kFailedPrecondition, missing_message);
    seen.insert(key);
    return OkStatus();
  }

  // The config's hash covers its JSON only; the same config under another emitter would be
  // a different kernel, so that is refused rather than merged.
  Status WriteConfig(const MeasurementRecord& m, const std::string& config_json) {
    std::string config_key = m.key.fingerprint + "/" + m.config_hash;
    if (configs_seen_.contains(config_key)) return OkStatus();
    insert_config_.Reset();
    insert_config_.BindAll(m.key.fingerprint, m.config_hash, m.emitter, config_json);
    TS_RETURN_IF_ERROR(insert_config_.Run());
    if (sqlite3_changes(connection_->handle()) == 0) {
      config_emitter_.Reset();
      config_emitter_.BindAll(m.key.fingerprint, m.config_hash);
      TS_ASSIGN_OR_RETURN(bool found, config_emitter_.Step());
      if (found && config_emitter_.Text(0) != m.emitter) {
        return InvalidArgument("config " + config_json + " of kernel " + m.key.fingerprint +
                               " is stored for emitter '" + config_emitter_.Text(0) + "', not '" +
                               m.emitter + "'");
      }
    }
    configs_seen_.insert(config_key);
    return OkStatus();
  }

  sqlite::Connection* connection_;
  Statement kernel_exists_;
  Statement device_exists_;
  Statement insert_config_;
  Statement config_emitter_;
  Statement insert_measurement_;
  std::set<std::string> kernels_seen_;
  std::set<std::string> devices_seen_;
  std::set<std::string> configs_seen_;
};

}  // namespace

Expected<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                         const SqliteOptions& options) {
  TS_ASSIGN_OR_RETURN(auto connection,
                      sqlite::Connection::Open(path, options.mode, options.busy_timeout_ms));
  TS_RETURN_IF_ERROR(Migrate(*connection, Migrations()));
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(connection)));
}

Expected<bool> SqliteStore::PutDevice(const DeviceRecord& device) {
  TS_RETURN_IF_ERROR(ValidateDevice(device));
  std::lock_guard lock(mutex_);
  bool inserted = false;
  TS_RETURN_IF_ERROR(connection_->WriteTransaction("storing a device", [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Statement insert,
        connection_->Prepare("INSERT INTO devices (device_key, " + std::string(kDeviceColumns) +
                             ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                             "ON CONFLICT DO NOTHING"));
    insert.BindAll(device.Key(), device.target, device.compute_capability, device.name,
                   device.cores, device.clock_mhz, device.memory_bandwidth_gbps, device.cache_bytes,
                   device.driver_version, device.toolkit_version);
    TS_RETURN_IF_ERROR(insert.Run());
    inserted = sqlite3_changes(connection_->handle()) > 0;
    return OkStatus();
  }));
  return inserted;
}

Expected<bool> SqliteStore::PutKernel(const KernelRecord& kernel) {
  TS_RETURN_IF_ERROR(ValidateKernel(kernel));
  std::lock_guard lock(mutex_);
  bool inserted = false;
  TS_RETURN_IF_ERROR(connection_->WriteTransaction("storing a kernel", [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Statement insert,
        connection_->Prepare("INSERT INTO kernels (fingerprint, source_format, name, "
                             "canonical_text, created_at) VALUES (?, ?, ?, ?, ?) "
                             "ON CONFLICT DO NOTHING"));
    insert.BindAll(kernel.fingerprint, kernel.source_format, kernel.name, kernel.canonical_text,
                   UtcNow());
    TS_RETURN_IF_ERROR(insert.Run());
    inserted = sqlite3_changes(connection_->handle()) > 0;
    return OkStatus();
  }));
  return inserted;
}

Expected<BatchResult> SqliteStore::RecordBatch(std::span<const MeasurementRecord> batch) {
  return WriteBatch(batch, "recording " + std::to_string(batch.size()) + " measurements",
                    []() -> Expected<bool> { return true; });
}

Expected<BatchResult> SqliteStore::WriteBatch(std::span<const MeasurementRecord> batch,
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
  TS_RETURN_IF_ERROR(connection_->WriteTransaction(what, [&]() -> Status {
    result.inserted = 0;  // a retried transaction starts over
    TS_ASSIGN_OR_RETURN(bool write_rows, first());
    if (!write_rows) return OkStatus();
    TS_ASSIGN_OR_RETURN(BatchWriter writer, BatchWriter::Prepare(*connection_));
    for (size_t i = 0; i < rows.size(); ++i) {
      Status written = writer.Write(rows[i], config_jsons[i], &result.inserted);
      if (!written)
        return std::unexpected(written.error().WithContext("measurement " + std::to_string(i)));
    }
    return OkStatus();
  }));
  return result;
}

Expected<std::optional<DeviceRecord>> SqliteStore::GetDevice(std::string_view key) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query,
                      connection_->Prepare("SELECT " + std::string(kDeviceColumns) +
                                           " FROM devices WHERE device_key = ?"));
  query.Bind(1, key);
  TS_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return std::optional<DeviceRecord>();
  return ReadDevice(query);
}

Expected<std::vector<DeviceRecord>> SqliteStore::ListDevices() {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query,
                      connection_->Prepare("SELECT " + std::string(kDeviceColumns) +
                                           " FROM devices ORDER BY device_key"));
  std::vector<DeviceRecord> devices;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return devices;
    devices.push_back(ReadDevice(query));
  }
}

Expected<std::optional<KernelRecord>> SqliteStore::GetKernel(std::string_view fingerprint) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query,
                      connection_->Prepare("SELECT fingerprint, source_format, name, "
                                           "canonical_text FROM kernels WHERE fingerprint = ?"));
  query.Bind(1, fingerprint);
  TS_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return std::optional<KernelRecord>();
  return KernelRecord{query.Text(0), query.Text(1), query.Text(2), query.Text(3)};
}

Expected<std::vector<KernelSummary>> SqliteStore::ListKernels(const ResultFilter& filter) {
  // Device and compiler version narrow the joined measurements; with either set, kernels
  // without a measurement under them are left out.
  ResultFilter measured = filter;
  measured.fingerprint.reset();
  Conditions on = FilterConditions(measured, "m.");
  std::string sql =
      "SELECT k.fingerprint, k.name, k.source_format, count(m.id), "
      "coalesce(sum(m.status = 'ok'), 0), coalesce(sum(m.status <> 'ok'), 0), "
      "min(CASE WHEN m.status = 'ok' THEN m.median_us END) "
      "FROM kernels AS k LEFT JOIN measurements AS m ON m.fingerprint = k.fingerprint";
  if (!on.sql.empty()) sql += " AND " + on.sql;
  if (filter.fingerprint) sql += " WHERE k.fingerprint = ?";
  sql += " GROUP BY k.fingerprint";
  if (!on.sql.empty()) sql += " HAVING count(m.id) > 0";
  sql += " ORDER BY k.name, k.fingerprint";
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query, connection_->Prepare(sql));
  BindValues(query, on.values);
  if (filter.fingerprint) query.Bind(static_cast<int>(on.values.size()) + 1, *filter.fingerprint);
  std::vector<KernelSummary> kernels;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return kernels;
    kernels.push_back({query.Text(0), query.Text(1), query.Text(2), query.Int(3), query.Int(4),
                       query.Int(5), query.OptionalDouble(6)});
  }
}

Expected<std::vector<BestResult>> SqliteStore::QueryBest(const std::string& where,
                                                         const std::vector<std::string>& values) {
  std::string sql = "SELECT " + std::string(kMeasurementColumns) +
                    ", kernel_name, default_median_us FROM (" + BestResultsQuery(where) + ")";
  sql += " ORDER BY kernel_name, fingerprint, device_key, compiler_version";
  std::lock_guard lock(mutex_);
  // The same few lookups run per request (Best by key): reuse their compiled statements.
  TS_ASSIGN_OR_RETURN(Statement query, connection_->PrepareCached(sql));
  BindValues(query, values);
  std::vector<BestResult> results;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return results;
    TS_ASSIGN_OR_RETURN(MeasurementRecord measurement, ReadMeasurement(query));
    results.push_back({std::move(measurement), query.Text(kMeasurementColumnCount),
                       query.OptionalDouble(kMeasurementColumnCount + 1)});
  }
}

Expected<std::optional<BestResult>> SqliteStore::Best(const ResultKey& key) {
  TS_ASSIGN_OR_RETURN(std::vector<BestResult> results,
                      QueryBest("m.fingerprint = ? AND m.device_key = ? AND m.compiler_version = ?",
                                {key.fingerprint, key.device_key, key.compiler_version}));
  if (results.empty()) return std::optional<BestResult>();
  return std::move(results.front());
}

Expected<std::vector<BestResult>> SqliteStore::ListBest(const ResultFilter& filter) {
  Conditions where = FilterConditions(filter, "m.");
  return QueryBest(where.sql, where.values);
}

Expected<std::vector<MeasurementRecord>> SqliteStore::Measurements(const ResultFilter& filter) {
  Conditions where = FilterConditions(filter, "");
  std::string sql = "SELECT " + std::string(kMeasurementColumns) +
                    " FROM measurements JOIN configs USING (fingerprint, config_hash)";
  if (!where.sql.empty()) sql += " WHERE " + where.sql;
  sql += " ORDER BY id";
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query, connection_->Prepare(sql));
  BindValues(query, where.values);
  std::vector<MeasurementRecord> measurements;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return measurements;
    TS_ASSIGN_OR_RETURN(MeasurementRecord measurement, ReadMeasurement(query));
    measurements.push_back(std::move(measurement));
  }
}

Expected<std::vector<MeasuredConfig>> SqliteStore::MeasuredConfigs(const ResultKey& key) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      Statement query,
      connection_->Prepare("SELECT config_hash, config_json, count(*), max(status = 'ok') "
                           "FROM measurements JOIN configs USING (fingerprint, config_hash) "
                           "WHERE fingerprint = ? AND device_key = ? AND compiler_version = ? "
                           "GROUP BY config_hash ORDER BY config_hash"));
  query.BindAll(key.fingerprint, key.device_key, key.compiler_version);
  std::vector<MeasuredConfig> configs;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return configs;
    configs.push_back({query.Text(0), query.Text(1), query.Int(2), query.Int(3) != 0});
  }
}

namespace {

// The pages in use and free, and the write-ahead log's file.
Expected<std::pair<int64_t, int64_t>> StorageParts(sqlite::Connection& db) {
  TS_ASSIGN_OR_RETURN(int64_t pages, db.QueryInt("PRAGMA page_count"));
  TS_ASSIGN_OR_RETURN(int64_t page_size, db.QueryInt("PRAGMA page_size"));
  std::error_code error;
  auto wal_bytes = std::filesystem::file_size(db.path() + "-wal", error);
  return std::pair<int64_t, int64_t>(pages * page_size,
                                     error ? 0 : static_cast<int64_t>(wal_bytes));
}

}  // namespace

Expected<int64_t> SqliteStore::StorageBytes() {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(auto parts, StorageParts(*connection_));
  return parts.first + parts.second;
}

Expected<StoreStats> SqliteStore::Stats() {
  std::lock_guard lock(mutex_);
  StoreStats stats;
  sqlite::Connection& db = *connection_;
  TS_ASSIGN_OR_RETURN(stats.schema_version, ReadSchemaVersion(db));
  TS_ASSIGN_OR_RETURN(stats.devices, db.QueryInt("SELECT count(*) FROM devices"));
  TS_ASSIGN_OR_RETURN(stats.kernels, db.QueryInt("SELECT count(*) FROM kernels"));
  TS_ASSIGN_OR_RETURN(stats.configs, db.QueryInt("SELECT count(*) FROM configs"));
  TS_ASSIGN_OR_RETURN(stats.measurements, db.QueryInt("SELECT count(*) FROM measurements"));
  TS_ASSIGN_OR_RETURN(stats.predictions, db.QueryInt("SELECT count(*) FROM predictions"));
  TS_ASSIGN_OR_RETURN(stats.calibrations, db.QueryInt("SELECT count(*) FROM calibrations"));
  TS_ASSIGN_OR_RETURN(std::tie(stats.database_bytes, stats.wal_bytes), StorageParts(db));
  for (TrialStatus status : AllTrialStatuses())
    stats.by_status[std::string(TrialStatusName(status))];
  TS_ASSIGN_OR_RETURN(Statement by_status,
                      db.Prepare("SELECT status, count(*) FROM measurements GROUP BY status"));
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, by_status.Step());
    if (!row) break;
    stats.by_status[by_status.Text(0)] = by_status.Int(1);
  }
  TS_ASSIGN_OR_RETURN(Statement versions,
                      db.Prepare("SELECT DISTINCT compiler_version FROM measurements "
                                 "ORDER BY compiler_version"));
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, versions.Step());
    if (!row) return stats;
    stats.compiler_versions.push_back(versions.Text(0));
  }
}

Status SqliteStore::Vacuum() {
  std::lock_guard lock(mutex_);
  Status vacuumed = connection_->Execute("VACUUM");
  if (!vacuumed) return std::unexpected(vacuumed.error().WithContext("vacuum"));
  return connection_->Execute("PRAGMA wal_checkpoint(TRUNCATE)");
}

}  // namespace tilesmith::db
