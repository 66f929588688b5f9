// The records of the results database: devices, kernels, configs and measurements. Plain
// structs; configs and compile statistics are JSON because db/ knows nothing of the compiler.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace tilesmith::db {

/// The schema version this code writes and understands (see db/schema.h for migrations).
inline constexpr int kSchemaVersion = 7;

/// What became of one trial. Everything but `kOk` is a failure class; a failed candidate is
/// stored as failed, never as fast (DESIGN.md, "Correctness first").
enum class TrialStatus {
  kOk,           ///< Compiled, ran, verified; its timings count.
  kCompile,      ///< The compiler rejected or crashed on the candidate.
  kLaunch,       ///< The kernel would not launch (resources, bad grid).
  kTimeout,      ///< Execution ran past its budget.
  kCrash,        ///< The worker process died running it.
  kWrongResult,  ///< Output differed from the reference beyond tolerance.
  kConstraint,   ///< Rejected before compiling by a hard constraint of the space.
  kRedZone,      ///< Wrote outside its output buffers.
};

/// The database spelling: "ok", "compile", "launch", "timeout", "crash", "wrong_result",
/// "constraint", "red_zone".
std::string_view TrialStatusName(TrialStatus status);
Expected<TrialStatus> ParseTrialStatus(std::string_view name);
/// Every status, in declaration order (for stats and help text).
const std::vector<TrialStatus>& AllTrialStatuses();

/// A device results are keyed by. Every field goes into `Key()`, so results never load on a
/// different GPU, clock or driver (the complaint about XLA's early cache keys).
struct DeviceRecord {
  std::string target;              ///< "cuda", "host", …
  std::string compute_capability;  ///< "sm_90"; for the host target "host".
  std::string name;                ///< "NVIDIA H100 80GB HBM3", or the CPU model.
  int64_t cores = 0;               ///< SMs, or CPU cores.
  int64_t clock_mhz = 0;
  double memory_bandwidth_gbps = 0;
  int64_t cache_bytes = 0;  ///< L2 (GPU) or last-level cache (CPU).
  std::string driver_version;
  std::string toolkit_version;  ///< CUDA toolkit, or LLVM for the host.

  /// Canonical key in XLA's style, e.g. `cuda:sm_90, NVIDIA H100 80GB HBM3, 132 cores,
  /// 1980 MHz, 3352 GB/s, 52428800 B cache, driver 580.159.04, toolkit CUDA 13.0`. The first part
  /// is the target as the command line spells it (`cuda:sm_90`, `host`).
  std::string Key() const;
  bool operator==(const DeviceRecord&) const = default;
};

/// One fusion, identified by the SHA-256 of its canonical text.
struct KernelRecord {
  std::string fingerprint;     ///< 64 lowercase hex digits; SHA-256 of `canonical_text`.
  std::string source_format;   ///< "hlo" or "ascgraph".
  std::string name;            ///< Short human name (the fusion's), not part of the key.
  std::string canonical_text;  ///< What was fingerprinted.
  bool operator==(const KernelRecord&) const = default;
};

/// Identifies one best result: fusion, device, compiler version (DESIGN.md, "Keys").
struct ResultKey {
  std::string fingerprint;
  std::string device_key;
  std::string compiler_version;
  bool operator==(const ResultKey&) const = default;
};

/// Narrows a query; an unset field matches everything.
struct ResultFilter {
  std::optional<std::string> fingerprint = std::nullopt;
  std::optional<std::string> device_key = std::nullopt;
  std::optional<std::string> compiler_version = std::nullopt;
};

/// Timing summary of a trial, in microseconds.
struct Timing {
  double median_us = 0;
  double p20_us = 0;
  double p80_us = 0;
  double min_us = 0;
  double max_us = 0;
  std::vector<double> times_us;  ///< Every timed repetition, in order.
  bool operator==(const Timing&) const = default;
};

/// One trial of one config: every trial is recorded, failures included.
struct MeasurementRecord {
  std::string uid;  ///< Globally unique; assigned when empty. Import merges on it.
  ResultKey key;
  std::string emitter;
  nlohmann::json config = nlohmann::json::object();  ///< The emitter's config.
  std::string config_hash;  ///< SHA-256 of the canonical config; filled by the store.
  bool is_default = false;  ///< The config the emitter picks untuned (for speedups).
  TrialStatus status = TrialStatus::kOk;
  std::string message;           ///< Why it failed; empty when ok.
  std::optional<Timing> timing;  ///< Required when ok; optional for failures.
  /// Compiler facts: compile_ms, registers, shared_bytes, spill_bytes (any subset).
  nlohmann::json compile_stats = nlohmann::json::object();
  std::optional<double> verification_error;  ///< Largest error against the reference.
  std::string measured_at;                   ///< ISO 8601 UTC with milliseconds; now when empty.
  std::string job_id;                        ///< The tuning job, or empty.
  bool operator==(const MeasurementRecord&) const = default;
};

/// The config in canonical form: keys sorted, no spaces. Fails unless it is a JSON object.
Expected<std::string> CanonicalConfig(const nlohmann::json& config);
/// SHA-256 of `CanonicalConfig(config)`: configs are compared and skipped by this.
Expected<std::string> ConfigHash(const nlohmann::json& config);

/// Checks a record before it is written; messages name the field.
Status ValidateDevice(const DeviceRecord& device);
Status ValidateKernel(const KernelRecord& kernel);
Status ValidateMeasurement(const MeasurementRecord& measurement);

/// Makes a measurement ready to write, as every store does before its transaction: checks
/// it, fills its config hash (refusing one that is not its config's), uid and time when
/// empty. Errors start with `context` (`measurement 3`). Returns the canonical config JSON.
Expected<std::string> PrepareMeasurement(MeasurementRecord& measurement,
                                         const std::string& context);

/// Now, as ISO 8601 UTC with milliseconds: `2024-05-01T12:34:56.789Z`.
std::string UtcNow();
/// 32 random hex digits, for measurement uids.
std::string NewUid();

}  // namespace tilesmith::db
