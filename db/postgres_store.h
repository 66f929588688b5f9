// The shared results store: one PostgreSQL database (its current schema), for a fleet of
// hosts that share their results. The same tables, view, versions and rules as the SQLite
// store (db/sqlite_store.h), in PostgreSQL's types (db/postgres_schema.cc).
//
// Concurrency: any number of processes and hosts may use one database at once; every write
// is one transaction, and one that loses a race (a serialization failure or deadlock) is run
// again. Within a process one PostgresStore may be shared by threads: it owns one connection
// and serialises calls on a mutex; threads that want to work side by side open a
// PostgresStore each (the service's store pool does). Never carry one across fork().
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "db/postgres_connection.h"
#include "db/store.h"

namespace tilesmith::db {

/// Every role (db/store.h) over one PostgreSQL database.
class PostgresStore final : public Store {
 public:
  /// Connects with `url` (`postgresql://user@host:port/dbname?sslmode=…`, given to libpq
  /// as it is) and migrates the schema to kSchemaVersion unless `read_only`, which refuses a
  /// schema that would need it and makes the session's transactions read-only. Errors name
  /// the server (host, port, database), never the password.
  static Expected<std::unique_ptr<PostgresStore>> Open(const std::string& url,
                                                       bool read_only = false);

  // ResultStore (db/postgres_store.cc)
  Expected<bool> PutDevice(const DeviceRecord& device) override;
  Expected<bool> PutKernel(const KernelRecord& kernel) override;
  Expected<BatchResult> RecordBatch(std::span<const MeasurementRecord> batch) override;

  Expected<std::optional<DeviceRecord>> GetDevice(std::string_view key) override;
  Expected<std::vector<DeviceRecord>> ListDevices() override;
  Expected<std::optional<KernelRecord>> GetKernel(std::string_view fingerprint) override;
  Expected<std::vector<KernelSummary>> ListKernels(const ResultFilter& filter) override;

  Expected<std::optional<BestResult>> Best(const ResultKey& key) override;
  Expected<std::vector<std::optional<BestResult>>> BestMany(
      std::span<const ResultKey> keys) override;
  Expected<std::vector<BestResult>> ListBest(const ResultFilter& filter) override;
  Expected<std::vector<MeasurementRecord>> Measurements(const ResultFilter& filter) override;
  Expected<std::vector<MeasuredConfig>> MeasuredConfigs(const ResultKey& key) override;
  // (db/postgres_verdicts.cc)
  Expected<int64_t> RecordVerdict(const VerdictRecord& verdict) override;
  Expected<std::vector<std::optional<VerdictRecord>>> Verdicts(
      std::span<const ResultKey> keys) override;

  // JobStore (db/postgres_jobs.cc)
  Status PutJob(const JobRecord& job) override;
  Expected<bool> UpdateActiveJob(const JobRecord& job) override;
  Expected<std::optional<JobRecord>> GetJob(std::string_view id) override;
  Expected<std::vector<JobRecord>> ListJobs(std::span<const JobState> states) override;
  Expected<std::map<std::string, int64_t>> CountJobs() override;

  // ModelStore (db/postgres_models.cc)
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

  // WorkQueue (db/postgres_work_queue.cc)
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

  // AdminStore (db/postgres_store.cc)
  Expected<StoreStats> Stats() override;
  Expected<int64_t> StorageBytes() override;
  Status Vacuum() override;

  /// host:port/dbname, for messages.
  const std::string& where() const { return connection_->where(); }

 private:
  // RecordBatch's transaction with `first` run inside it before the rows, which are written
  // only when it answers true (a work unit's completion checks its lease there).
  Expected<BatchResult> WriteBatch(std::span<const MeasurementRecord> batch, std::string_view what,
                                   const std::function<Expected<bool>()>& first);
  explicit PostgresStore(std::unique_ptr<postgres::Connection> connection)
      : connection_(std::move(connection)) {}
  Expected<std::vector<BestResult>> QueryBest(const std::string& where,
                                              const postgres::Params& params);

  std::mutex mutex_;
  std::unique_ptr<postgres::Connection> connection_;
};

}  // namespace tilesmith::db
