// The outcome of a sweep: one row per (fusion, target), printed as a table with a
// geometric-mean speedup line, or as JSON. Rows are plain data, so finished ones can be kept
// in the sweep state and shown again by `sweep --resume`.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <string>

namespace tilesmith::tools {

/// One (fusion, target) of a sweep and how its tune went.
struct SweepRow {
  std::string fusion;  ///< The name shown (sweep_file.h's SweepFusion::name).
  std::string path;
  std::string target;
  std::string device;  ///< The device key results are stored under.
  /// `done`, `resumed` (finished by an earlier run), `interrupted`, `not run`, `error`,
  /// `failed` (finished, but no config verified), or `compiled` (a CUDA target with no GPU
  /// here: compiled and predicted, not timed).
  std::string status = "not run";
  std::string error;  ///< Why, for `error`.
  std::string fingerprint;
  std::string emitter;
  int64_t planned = 0;       ///< Configs the budget allows.
  int64_t measured = 0;      ///< Configs with a committed trial under the key.
  int64_t measured_now = 0;  ///< Trials this run committed.
  int64_t failed = 0;
  int64_t compiled = 0;
  int64_t compile_failed = 0;
  /// `compiled` pairs: configs the cost model predicted, stored in the predictions table
  /// (never as measurements), the fastest predicted and which model predicted.
  int64_t predicted = 0;
  std::optional<double> predicted_us;
  nlohmann::json predicted_config;
  std::string model;
  std::optional<double> default_us;
  std::optional<double> best_us;
  /// default / best: the tune's noise-aware verdict (paired rounds) where it has one, else
  /// the ratio of the search's medians.
  std::optional<double> speedup;
  /// The verdict's interval for the best contender's lead over the default and whether it
  /// clears 1 at its confidence; absent when the tune reached no verdict.
  std::optional<double> speedup_low;
  std::optional<double> speedup_high;
  std::optional<bool> significant;
  nlohmann::json best_config;  ///< null when nothing verified.
  /// Failed trials by status: `{"compile": {"count": 8, "example": "…"}}`.
  nlohmann::json failures = nlohmann::json::object();
  double seconds = 0;  ///< Wall time of this run's tune.

  nlohmann::json ToJson() const;
  /// The row `ToJson` wrote; nullopt when `json` is not one (a damaged state file).
  static std::optional<SweepRow> FromJson(const nlohmann::json& json);
};

/// The geometric mean of the rows' speedups, and how many rows had one.
struct Geomean {
  std::optional<double> speedup;
  int64_t rows = 0;
};
Geomean GeomeanSpeedup(std::span<const SweepRow> rows);

/// The table: fusion, target, default and best median (µs), speedup, configs measured,
/// failures, status; then the geometric-mean line, the errors and the failure classes.
void PrintTable(std::ostream& out, std::span<const SweepRow> rows);

/// `{sweep, database, compiler_version, complete, interrupted, pairs, done, errors,
/// geomean_speedup, geomean_rows, rows: [SweepRow::ToJson()]}`.
nlohmann::json TableJson(std::span<const SweepRow> rows, const std::string& sweep,
                         const std::string& database, const std::string& compiler_version,
                         bool interrupted);

}  // namespace tilesmith::tools
