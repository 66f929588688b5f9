// The results store: what the tuner writes every trial into and what the service and
// `tilesmith db` read best results from. SQLite is the embedded implementation
// (db/sqlite_store.h); a shared PostgreSQL one can sit behind the same interface.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/jobs.h"
#include "db/models.h"
#include "db/predictions.h"
#include "db/records.h"
#include "support/status.h"

namespace tilesmith::db {

/// Narrows a query; an unset field matches everything.
struct ResultFilter {
  std::optional<std::string> fingerprint = std::nullopt;
  std::optional<std::string> device_key = std::nullopt;
  std::optional<std::string> compiler_version = std::nullopt;
};

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

/// Sizes and counts, for `tilesmith db stats`.
struct StoreStats {
  int schema_version = 0;
  int64_t devices = 0;
  int64_t kernels = 0;
  int64_t configs = 0;
  int64_t measurements = 0;
  int64_t predictions = 0;   ///< Rows of the predictions table (never measurements).
  int64_t calibrations = 0;  ///< Host calibrations stored.
  std::map<std::string, int64_t> by_status;  ///< Every status name, zero counts included.
  std::vector<std::string> compiler_versions;
  int64_t database_bytes = 0;  ///< The main file (pages in use and free).
  int64_t wal_bytes = 0;       ///< The write-ahead log beside it, 0 when absent.
};

/// What one RecordBatch did.
struct BatchResult {
  std::vector<std::string> uids;  ///< One per input measurement, in order.
  int64_t inserted = 0;           ///< Rows added; a uid already present adds nothing.
};

/// The results database. Writes are durable when they return: callers report a measurement
/// only after the batch holding it came back ok (DESIGN.md, "Durability").
class Store {
 public:
  virtual ~Store() = default;

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

  /// Inserts or replaces the job with `job.id` (created_at kept from the first write,
  /// updated_at set now). Durable when it returns.
  virtual Status PutJob(const JobRecord& job) = 0;
  virtual Expected<std::optional<JobRecord>> GetJob(std::string_view id) = 0;
  /// Jobs in one of `states` (every job when empty), oldest first.
  virtual Expected<std::vector<JobRecord>> ListJobs(std::span<const JobState> states) = 0;
  /// Jobs per state name, every state included (zero counts too).
  virtual Expected<std::map<std::string, int64_t>> CountJobs() = 0;

  /// Stores a trained cost model as a new row (older ones are kept); returns its id.
  /// Durable when it returns.
  virtual Expected<int64_t> PutModel(const ModelRecord& model) = 0;
  /// The newest model called `name` for exactly this device, compiler version and feature
  /// schema; none when nothing was trained for them.
  virtual Expected<std::optional<ModelRecord>> LatestModel(std::string_view name,
                                                           std::string_view device_key,
                                                           std::string_view compiler_version,
                                                           int64_t feature_schema) = 0;

  /// Writes predictions (and their config rows) in one transaction, replacing an earlier
  /// prediction of the same config, key and model; returns the rows written. Kernel and
  /// device must have been put first.
  virtual Expected<int64_t> RecordPredictions(std::span<const PredictionRecord> batch) = 0;
  /// Every prediction the filter admits, by fingerprint, device, compiler version, then
  /// fastest first (failed ones last).
  virtual Expected<std::vector<PredictionRecord>> Predictions(const ResultFilter& filter) = 0;

  /// Stores a host calibration as a new row; returns its id. Durable when it returns.
  virtual Expected<int64_t> PutCalibration(const CalibrationRecord& calibration) = 0;
  /// The newest calibration of the device, if any.
  virtual Expected<std::optional<CalibrationRecord>> LatestCalibration(
      std::string_view device_key) = 0;

  virtual Expected<StoreStats> Stats() = 0;
  /// Reclaims free pages and truncates the write-ahead log.
  virtual Status Vacuum() = 0;
};

/// Finds a device by its exact key, else by a unique key prefix (`cuda:sm_90`, `host`) or
/// exact name; an ambiguous or unknown text is an error listing what exists.
Expected<std::string> ResolveDeviceKey(Store& store, std::string_view text);

/// Finds a kernel by its fingerprint or a unique prefix of at least 6 hex digits.
Expected<std::string> ResolveFingerprint(Store& store, std::string_view text);

}  // namespace tilesmith::db
