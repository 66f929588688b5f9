// The results role of a store: devices, kernels, configs and every trial measured, and the
// best result of a key. The tuner writes every trial into it; the service, reports, exports
// and cost-model training read from it. Nothing here names a database engine: SQLite
// (db/sqlite_store.h) and the shared PostgreSQL store (db/postgres_store.h) implement it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.h"
#include "db/verdicts.h"
#include "support/status.h"

namespace tilesmith::db {

/// The best verified result of one key (the `best_results` view).
struct BestResult {
  MeasurementRecord measurement;  ///< The winning trial; its key is the result key.
  std::string kernel_name;
  /// Fastest verified time of a trial marked `is_default` under the same key, if any.
  std::optional<double> default_median_us;
};

/// A config already measured under a key, so a resumed tune can skip it.
struct MeasuredConfig {
  std::string config_hash;
  std::string config_json;  ///< Canonical form.
  int64_t trials = 0;
  bool any_ok = false;
};

/// One kernel and how much is known about it (under the filter it was listed with).
struct KernelSummary {
  std::string fingerprint;
  std::string name;
  std::string source_format;
  int64_t measurements = 0;
  int64_t ok = 0;
  int64_t failed = 0;
  std::optional<double> best_median_us;  ///< Fastest verified median, if any.
};

/// What one RecordBatch did.
struct BatchResult {
  std::vector<std::string> uids;  ///< One per input measurement, in order.
  int64_t inserted = 0;           ///< Rows added; a uid already present adds nothing.
};

/// Results: what was measured and what won. Writes are durable when they return: callers
/// report a measurement only after the batch holding it came back ok (DESIGN.md,
/// "Durability").
class ResultStore {
 public:
  virtual ~ResultStore() = default;

  /// Adds a device (keyed by `device.Key()`); returns false when it was already there.
  virtual Expected<bool> PutDevice(const DeviceRecord& device) = 0;
  /// Adds a kernel; returns false when its fingerprint was already there (the name kept).
  virtual Expected<bool> PutKernel(const KernelRecord& kernel) = 0;
  /// Commits every measurement (and its config row) in one transaction, or none of them.
  /// Kernel and device must have been put first. Idempotent per uid, so an import or a
  /// retried batch never duplicates a trial.
  virtual Expected<BatchResult> RecordBatch(std::span<const MeasurementRecord> batch) = 0;

  virtual Expected<std::optional<DeviceRecord>> GetDevice(std::string_view key) = 0;
  virtual Expected<std::vector<DeviceRecord>> ListDevices() = 0;
  virtual Expected<std::optional<KernelRecord>> GetKernel(std::string_view fingerprint) = 0;
  /// Kernels ordered by name; with a device or compiler version in the filter, only those
  /// measured under it, counted under it.
  virtual Expected<std::vector<KernelSummary>> ListKernels(const ResultFilter& filter) = 0;

  /// The best verified result for a key: lowest median, then fewer registers, then config
  /// hash order, so the same rows always give the same winner.
  virtual Expected<std::optional<BestResult>> Best(const ResultKey& key) = 0;
  /// Best(key) for each of `keys`, in their order (none where Best has none; a repeated key
  /// answered each time). One round trip for a whole batch; this default asks Best per key.
  virtual Expected<std::vector<std::optional<BestResult>>> BestMany(
      std::span<const ResultKey> keys);
  /// Best results of every key the filter admits, by kernel name, device, compiler version.
  virtual Expected<std::vector<BestResult>> ListBest(const ResultFilter& filter) = 0;
  /// Every trial the filter admits, oldest first.
  virtual Expected<std::vector<MeasurementRecord>> Measurements(const ResultFilter& filter) = 0;
  /// Configs with at least one trial (ok or failed) under the key, by config hash.
  virtual Expected<std::vector<MeasuredConfig>> MeasuredConfigs(const ResultKey& key) = 0;

  /// Stores a noise-aware verdict (db/verdicts.h); returns its id. Kernel and device must
  /// have been put first.
  virtual Expected<int64_t> RecordVerdict(const VerdictRecord& verdict) = 0;
  /// The newest verdict of each of `keys`, in their order (none where no tune confirmed it).
  virtual Expected<std::vector<std::optional<VerdictRecord>>> Verdicts(
      std::span<const ResultKey> keys) = 0;
};

/// Finds a device by its exact key, else by a unique key prefix (`cuda:sm_90`, `host`) or
/// exact name; an ambiguous or unknown text is an error listing what exists.
Expected<std::string> ResolveDeviceKey(ResultStore& store, std::string_view text);

/// Finds a kernel by its fingerprint or a unique prefix of at least 6 hex digits.
Expected<std::string> ResolveFingerprint(ResultStore& store, std::string_view text);

}  // namespace tilesmith::db
