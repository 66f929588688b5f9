// The embedded results store: one SQLite file, readable with the `sqlite3` shell.
//
// Concurrency: several processes may write the same file at once (WAL mode; writers queue on
// the busy timeout, and a transaction that still finds the lock taken is retried). Within a
// process one SqliteStore may be shared by threads: it owns one connection and serialises
// calls on a mutex. Threads that want to read in parallel open a SqliteStore each (WAL lets
// readers run beside the writer). Never carry a SqliteStore across fork(): open a new one in
// the child.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "db/sqlite_connection.h"
#include "db/store.h"

namespace tilesmith::db {

/// How SqliteStore::Open treats the file.
struct SqliteOptions {
  /// kCreate makes a missing file; kReadWrite wants it to exist; kReadOnly never writes
  /// (and refuses a file that would need migrating).
  sqlite::OpenMode mode = sqlite::OpenMode::kCreate;
  /// How long a writer waits for another process's transaction before retrying.
  int busy_timeout_ms = 5000;
};

/// Every role (db/store.h) over one SQLite file.
class SqliteStore final : public Store {
 public:
  /// Opens (or creates) the database at `path` and migrates it to kSchemaVersion. A file
  /// from a newer tilesmith, or not a tilesmith database, is an error naming the path.
  static Expected<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                     const SqliteOptions& options = {});

  // ResultStore
  Expected<bool> PutDevice(const DeviceRecord& device) override;
  Expected<bool> PutKernel(const KernelRecord& kernel) override;
  Expected<BatchResult> RecordBatch(std::span<const MeasurementRecord> batch) override;

  Expected<std::optional<DeviceRecord>> GetDevice(std::string_view key) override;
  Expected<std::vector<DeviceRecord>> ListDevices() override;
  Expected<std::optional<KernelRecord>> GetKernel(std::string_view fingerprint) override;
  Expected<std::vector<KernelSummary>> ListKernels(const ResultFilter& filter) override;

  Expected<std::optional<BestResult>> Best(const ResultKey& key) override;
  // db/sqlite_best_many.cc
  Expected<std::vector<std::optional<BestResult>>> BestMany(
      std::span<const ResultKey> keys) override;
  Expected<std::vector<BestResult>> ListBest(const ResultFilter& filter) override;
  Expected<std::vector<MeasurementRecord>> Measurements(const ResultFilter& filter) override;
  Expected<std::vector<MeasuredConfig>> MeasuredConfigs(const ResultKey& key) override;
  // db/sqlite_verdicts.cc
  Expected<int64_t> RecordVerdict(const VerdictRecord& verdict) override;
  Expected<std::vector<std::optional<VerdictRecord>>> Verdicts(
      std::span<const ResultKey> keys) override;

  // JobStore (db/sqlite_jobs.cc)
  Status PutJob(const JobRecord& job) override;
  Expected<bool> UpdateActiveJob(const JobRecord& job) override;
  Expected<std::optional<JobRecord>> GetJob(std::string_view id) override;
  Expected<std::vector<JobRecord>> ListJobs(std::span<const JobState> states) override;
  Expected<std::map<std::string, int64_t>> CountJobs() override;

  // ModelStore (db/sqlite_models.cc; predictions and calibrations db/sqlite_predictions.cc)
  Expected<int64_t> PutModel(const ModelRecord& model) override;
  Expected<std::optional<ModelRecord>> LatestModel(std::string_view name,
                                                   std::string_view device_key,
                                                   std::string_view compiler_version,
                                                   int64_t feature_schema) override;

  Expected<int64_t> RecordPredictions(std::span<const PredictionRecord> batch) override;
  Expected<std::vector<PredictionRecord>> Predictions(const ResultFilter& filter) override;
  Expected<int64_t> PutCalibration(const CalibrationRecord& calibration) override;
  Expected<std::optional<CalibrationRecord>> LatestCalibration(
      std::string_view device_key) override;

  // WorkQueue (db/sqlite_work_queue.cc)
  Expected<int64_t> EnqueueUnits(std::span<const WorkUnit> units) override;
  Expected<std::optional<WorkUnit>> ClaimUnit(std::string_view owner,
                                              std::span<const std::string> device_keys,
                                              int64_t lease_ms) override;
  Status RenewLease(const Lease& lease, int64_t lease_ms) override;
  Status CompleteUnit(const Lease& lease, std::span<const MeasurementRecord> measurements,
                      const nlohmann::json& result) override;
  Expected<UnitState> FailUnit(const Lease& lease, std::string_view reason) override;
  Status ReleaseUnit(const Lease& lease) override;
  Expected<int64_t> CancelUnits(std::string_view job_id, std::string_view reason) override;
  Expected<std::vector<WorkUnit>> ListUnits(std::string_view job_id) override;
  Expected<UnitCounts> CountUnits(std::string_view job_id) override;
  Status PutAgent(const AgentRecord& agent) override;
  Expected<std::vector<AgentRecord>> ListAgents(int64_t within_ms) override;

  // AdminStore
  Expected<StoreStats> Stats() override;
  Expected<int64_t> StorageBytes() override;
  Status Vacuum() override;

  const std::string& path() const { return connection_->path(); }

 private:
  // RecordBatch's transaction with `first` run inside it before the rows, which are written
  // only when it answers true (a work unit's completion checks its lease there).
  Expected<BatchResult> WriteBatch(std::span<const MeasurementRecord> batch, std::string_view what,
                                   const std::function<Expected<bool>()>& first);
  explicit SqliteStore(std::unique_ptr<sqlite::Connection> connection)
      : connection_(std::move(connection)) {}
  Expected<std::vector<BestResult>> QueryBest(const std::string& where,
                                              const std::vector<std::string>& values);

  std::mutex mutex_;
  std::unique_ptr<sqlite::Connection> connection_;
};

}  // namespace tilesmith::db
