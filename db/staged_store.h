// A store that holds a work unit's measurements back: every role is answered by the store
// below, but RecordBatch keeps the measurements here (validated, with uid, hash and time
// filled as the store would) instead of writing them, and the reads a tune makes of its own
// key (Measurements, MeasuredConfigs) see them as written. The agent then commits them with
// the unit's completion in one transaction (WorkQueue::CompleteUnit), or drops them when its
// lease was lost. Best results and listings see committed rows only. Verdicts are kept back
// the same way and written after the unit completes.
#pragma once

#include <mutex>
#include <vector>

#include "db/store.h"

namespace tilesmith::db {

class StagedStore final : public Store {
 public:
  /// Reads from and forwards to `below`, which must outlive this.
  explicit StagedStore(Store& below) : below_(below) {}

  /// The measurements kept back so far, in the order they were recorded.
  std::vector<MeasurementRecord> staged() const;
  /// The verdicts kept back so far.
  std::vector<VerdictRecord> staged_verdicts() const;

  // ResultStore
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
  Expected<int64_t> RecordVerdict(const VerdictRecord& verdict) override;
  Expected<std::vector<std::optional<VerdictRecord>>> Verdicts(
      std::span<const ResultKey> keys) override;

  // JobStore
  Status PutJob(const JobRecord& job) override;
  Expected<bool> UpdateActiveJob(const JobRecord& job) override;
  Expected<std::optional<JobRecord>> GetJob(std::string_view id) override;
  Expected<std::vector<JobRecord>> ListJobs(std::span<const JobState> states) override;
  Expected<std::map<std::string, int64_t>> CountJobs() override;

  // ModelStore
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

  // WorkQueue
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

 private:
  Store& below_;
  mutable std::mutex mutex_;
  std::vector<MeasurementRecord> staged_;
  std::vector<VerdictRecord> verdicts_;
};

}  // namespace tilesmith::db
