// Query helpers the PostgresStore's source files share. Private to db/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "db/postgres_connection.h"
#include "db/store.h"

namespace tilesmith::db::postgres {

/// Conditions for the set fields of a filter, `column = $n` joined by AND, numbered from
/// `params.size() + 1`; their values are appended to `params`. `prefix` qualifies the
/// columns ("m.").
std::string FilterConditions(const ResultFilter& filter, std::string_view prefix, Params& params);

/// A JSON column read back; a corrupt one is an error naming the column.
Expected<nlohmann::json> ParseStoredJson(const std::string& text, std::string_view column);

/// The columns every measurement query selects, in ReadMeasurement's order (the names of
/// `measurements JOIN configs` and of the best_results query).
inline constexpr std::string_view kMeasurementColumns =
    "uid, fingerprint, device_key, compiler_version, emitter, config_json, config_hash, "
    "is_default, status, message, median_us, p20_us, p80_us, min_us, max_us, times_us, "
    "compile_stats, verification_error, measured_at, job_id";
inline constexpr int kMeasurementColumnCount = 20;

/// Row `row` of a result selected with kMeasurementColumns first.
Expected<MeasurementRecord> ReadMeasurement(const Result& result, int row);

}  // namespace tilesmith::db::postgres
