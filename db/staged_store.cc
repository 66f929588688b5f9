#include "db/staged_store.h"

#include <algorithm>
#include <map>

namespace tilesmith::db {
namespace {

bool Admits(const ResultFilter& filter, const ResultKey& key) {
  return (!filter.fingerprint || *filter.fingerprint == key.fingerprint) &&
         (!filter.device_key || *filter.device_key == key.device_key) &&
         (!filter.compiler_version || *filter.compiler_version == key.compiler_version);
}

}  // namespace

std::vector<MeasurementRecord> StagedStore::staged() const {
  std::lock_guard lock(mutex_);
  return staged_;
}

std::vector<VerdictRecord> StagedStore::staged_verdicts() const {
  std::lock_guard lock(mutex_);
  return verdicts_;
}

Expected<BatchResult> StagedStore::RecordBatch(std::span<const MeasurementRecord> batch) {
  std::vector<MeasurementRecord> rows;
  BatchResult result;
  for (size_t i = 0; i < batch.size(); ++i) {
    MeasurementRecord row = batch[i];
    auto prepared = PrepareMeasurement(row, "measurement " + std::to_string(i));
    if (!prepared) return std::unexpected(prepared.error());
    result.uids.push_back(row.uid);
    rows.push_back(std::move(row));
  }
  std::lock_guard lock(mutex_);
  for (MeasurementRecord& row : rows) {
    bool known = std::any_of(staged_.begin(), staged_.end(),
                             [&](const MeasurementRecord& m) { return m.uid == row.uid; });
    if (known) continue;
    staged_.push_back(std::move(row));
    ++result.inserted;
  }
  return result;
}

Expected<std::vector<MeasurementRecord>> StagedStore::Measurements(const ResultFilter& filter) {
  TS_ASSIGN_OR_RETURN(std::vector<MeasurementRecord> rows, below_.Measurements(filter));
  std::lock_guard lock(mutex_);
  for (const MeasurementRecord& row : staged_) {
    if (Admits(filter, row.key)) rows.push_back(row);
  }
  return rows;
}

Expected<std::vector<MeasuredConfig>> StagedStore::MeasuredConfigs(const ResultKey& key) {
  TS_ASSIGN_OR_RETURN(std::vector<MeasuredConfig> below, below_.MeasuredConfigs(key));
  std::map<std::string, MeasuredConfig> by_hash;
  for (MeasuredConfig& config : below) by_hash[config.config_hash] = std::move(config);
  std::lock_guard lock(mutex_);
  for (const MeasurementRecord& row : staged_) {
    if (!(row.key == key)) continue;
    MeasuredConfig& config = by_hash[row.config_hash];
    if (config.config_hash.empty()) {
      config.config_hash = row.config_hash;
      TS_ASSIGN_OR_RETURN(config.config_json, CanonicalConfig(row.config));
    }
    ++config.trials;
    config.any_ok = config.any_ok || row.status == TrialStatus::kOk;
  }
  std::vector<MeasuredConfig> merged;
  for (auto& [hash, config] : by_hash) merged.push_back(std::move(config));
  return merged;
}

Expected<int64_t> StagedStore::RecordVerdict(const VerdictRecord& verdict) {
  std::lock_guard lock(mutex_);
  verdicts_.push_back(verdict);
  return static_cast<int64_t>(verdicts_.size());
}

// Everything else is the store below's.
Expected<bool> StagedStore::PutDevice(const DeviceRecord& device) {
  return below_.PutDevice(device);
}
Expected<bool> StagedStore::PutKernel(const KernelRecord& kernel) {
  return below_.PutKernel(kernel);
}
Expected<std::optional<DeviceRecord>> StagedStore::GetDevice(std::string_view key) {
  return below_.GetDevice(key);
}
Expected<std::vector<DeviceRecord>> StagedStore::ListDevices() { return below_.ListDevices(); }
Expected<std::optional<KernelRecord>> StagedStore::GetKernel(std::string_view fingerprint) {
  return below_.GetKernel(fingerprint);
}
Expected<std::vector<KernelSummary>> StagedStore::ListKernels(const ResultFilter& filter) {
  return below_.ListKernels(filter);
}
Expected<std::optional<BestResult>> StagedStore::Best(const ResultKey& key) {
  return below_.Best(key);
}
Expected<std::vector<std::optional<BestResult>>> StagedStore::BestMany(
    std::span<const ResultKey> keys) {
  return below_.BestMany(keys);
}
Expected<std::vector<BestResult>> StagedStore::ListBest(const ResultFilter& filter) {
  return below_.ListBest(filter);
}
Expected<std::vector<std::optional<VerdictRecord>>> StagedStore::Verdicts(
    std::span<const ResultKey> keys) {
  return below_.Verdicts(keys);
}
Status StagedStore::PutJob(const JobRecord& job) { return below_.PutJob(job); }
Expected<bool> StagedStore::UpdateActiveJob(const JobRecord& job) {
  return below_.UpdateActiveJob(job);
}
Expected<std::optional<JobRecord>> StagedStore::GetJob(std::string_view id) {
  return below_.GetJob(id);
}
Expected<std::vector<JobRecord>> StagedStore::ListJobs(std::span<const JobState> states) {
  return below_.ListJobs(states);
}
Expected<std::map<std::string, int64_t>> StagedStore::CountJobs() { return below_.CountJobs(); }
Expected<int64_t> StagedStore::PutModel(const ModelRecord& model) { return below_.PutModel(model); }
Expected<std::optional<ModelRecord>> StagedStore::LatestModel(std::string_view name,
                                                              std::string_view device_key,
                                                              std::string_view compiler_version,
                                                              int64_t feature_schema) {
  return below_.LatestModel(name, device_key, compiler_version, feature_schema);
}
Expected<int64_t> StagedStore::RecordPredictions(std::span<const PredictionRecord> batch) {
  return below_.RecordPredictions(batch);
}
Expected<std::vector<PredictionRecord>> StagedStore::Predictions(const ResultFilter& filter) {
  return below_.Predictions(filter);
}
Expected<int64_t> StagedStore::PutCalibration(const CalibrationRecord& calibration) {
  return below_.PutCalibration(calibration);
}
Expected<std::optional<CalibrationRecord>> StagedStore::LatestCalibration(
    std::string_view device_key) {
  return below_.LatestCalibration(device_key);
}
Expected<int64_t> StagedStore::EnqueueUnits(std::span<const WorkUnit> units) {
  return below_.EnqueueUnits(units);
}
Expected<std::optional<WorkUnit>> StagedStore::ClaimUnit(std::string_view owner,
                                                         std::span<const std::string> device_keys,
                                                         int64_t lease_ms) {
  return below_.ClaimUnit(owner, device_keys, lease_ms);
}
Status StagedStore::RenewLease(const Lease& lease, int64_t lease_ms) {
  return below_.RenewLease(lease, lease_ms);
}
Status StagedStore::CompleteUnit(const Lease& lease,
                                 std::span<const MeasurementRecord> measurements,
                                 const nlohmann::json& result) {
  return below_.CompleteUnit(lease, measurements, result);
}
Expected<UnitState> StagedStore::FailUnit(const Lease& lease, std::string_view reason) {
  return below_.FailUnit(lease, reason);
}
Status StagedStore::ReleaseUnit(const Lease& lease) { return below_.ReleaseUnit(lease); }
Expected<int64_t> StagedStore::CancelUnits(std::string_view job_id, std::string_view reason) {
  return below_.CancelUnits(job_id, reason);
}
Expected<std::vector<WorkUnit>> StagedStore::ListUnits(std::string_view job_id) {
  return below_.ListUnits(job_id);
}
Expected<UnitCounts> StagedStore::CountUnits(std::string_view job_id) {
  return below_.CountUnits(job_id);
}
Status StagedStore::PutAgent(const AgentRecord& agent) { return below_.PutAgent(agent); }
Expected<std::vector<AgentRecord>> StagedStore::ListAgents(int64_t within_ms) {
  return below_.ListAgents(within_ms);
}
Expected<StoreStats> StagedStore::Stats() { return below_.Stats(); }
Expected<int64_t> StagedStore::StorageBytes() { return below_.StorageBytes(); }
Status StagedStore::Vacuum() { return below_.Vacuum(); }

}  // namespace tilesmith::db
