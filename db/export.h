// Moving results between databases as one versioned JSON document:
//
//   {"format": "tilesmith-results", "schema_version": 1, "exported_at": "…",
//    "compiler_versions": ["tilesmith-0.5.0"],
//    "devices": [{"key", "target", "compute_capability", "name", "cores", "clock_mhz",
//                 "memory_bandwidth_gbps", "cache_bytes", "driver_version", "toolkit_version"}],
//    "kernels": [{"fingerprint", "source_format", "name", "canonical_text"}],
//    "configs": [{"fingerprint", "config_hash", "emitter", "config": {…}}],
//    "measurements": [{"uid", "fingerprint", "config_hash", "device_key", "compiler_version",
//                      "is_default", "status", "message", "median_us", "p20_us", "p80_us",
//                      "min_us", "max_us", "times_us", "compile_stats", "verification_error",
//                      "measured_at", "job_id"}],
//    "verdicts": [{"fingerprint", "device_key", "compiler_version", "best_config",
//                  "chosen_config", "chosen_is_default", "chosen_median_us",
//                  "default_median_us", "speedup", "speedup_low", "speedup_high",
//                  "confidence", "significant", "rounds", "method", "reason", "details",
//                  "decided_at", "job_id"}]}
//
// `verdicts` holds the newest noise-aware verdict of every key exported (db/verdicts.h), so
// an answer's `significant` survives a move between databases; an export without it (from
// before verdicts) imports as before.
//
// Timing fields are absent for a trial that was not timed; verification_error and job_id
// are null when unknown. Works over any store's results role (ResultStore).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "db/result_store.h"

namespace tilesmith::db {

/// The value of "format" in every export.
inline constexpr std::string_view kExportFormat = "tilesmith-results";

/// A timing's summary as every JSON answer writes it: median_us, p20_us, p80_us, min_us and
/// max_us (not the repetitions).
nlohmann::json TimingSummaryJson(const Timing& timing);

/// One measurement as the export writes it (its config referenced by `config_hash`).
nlohmann::json MeasurementToJson(const MeasurementRecord& measurement);

/// Everything the filter admits: its measurements with their configs, kernels and devices.
/// With an empty filter, every device and kernel as well, measured or not.
Expected<nlohmann::json> ExportResults(ResultStore& store, const ResultFilter& filter = {});

/// What an import added; what was already there is counted, not duplicated.
struct ImportSummary {
  int64_t devices_added = 0;
  int64_t kernels_added = 0;
  int64_t measurements_added = 0;
  int64_t measurements_present = 0;  ///< Same uid already stored.
  int64_t verdicts_added = 0;
  int64_t verdicts_present = 0;  ///< The key already had a verdict as new.
};

/// Merges an export into `store`. The whole document is checked before anything is written
/// (format, schema version — a mismatch names both versions —, every hash and reference), so
/// a bad document changes nothing; importing the same document twice adds nothing.
Expected<ImportSummary> ImportResults(ResultStore& store, const nlohmann::json& document);

}  // namespace tilesmith::db
