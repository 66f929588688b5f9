// Query helpers the SqliteStore's source files share. Private to db/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "db/sqlite_connection.h"
#include "db/store.h"

namespace tilesmith::db {

/// Conditions for the set fields of a filter, as `column = ?` joined by AND, with the values
/// to bind in order.
struct Conditions {
  std::string sql;
  std::vector<std::string> values;
};

/// `prefix` qualifies the columns ("m.").
Conditions FilterConditions(const ResultFilter& filter, std::string_view prefix);
void BindValues(sqlite::Statement& statement, const std::vector<std::string>& values,
                int first = 1);
/// A JSON column read back; a corrupt one is an error naming the column.
Expected<nlohmann::json> ParseStoredJson(const std::string& text, std::string_view column);

/// The columns every measurement query selects, in ReadMeasurement's order. The same names
/// exist in `measurements JOIN configs` and in the best_results view.
inline constexpr std::string_view kMeasurementColumns =
    "uid, fingerprint, device_key, compiler_version, emitter, config_json, config_hash, "
    "is_default, status, message, median_us, p20_us, p80_us, min_us, max_us, times_us, "
    "compile_stats, verification_error, measured_at, job_id";
inline constexpr int kMeasurementColumnCount = 20;

/// A row selected with kMeasurementColumns first.
Expected<MeasurementRecord> ReadMeasurement(const sqlite::Statement& row);

}  // namespace tilesmith::db
