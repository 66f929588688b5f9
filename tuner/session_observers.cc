#include "tuner/session_observers.h"

#include <vector>

#include "compiler/emitters/emitter_registry.h"
#include "costmodel/training_data.h"
#include "tuner/backends/build_stats.h"
#include "tuner/layouts.h"

namespace tilesmith::tuner {

Status RetrainingObserver::OnBatchCommitted(const CommittedBatch& batch) {
  key_ = batch.key;
  if (learned_ == nullptr) return OkStatus();
  std::vector<costmodel::TrainingRow> rows;
  costmodel::DeviceFigures figures{device_.info, device_.cache_bytes};
  for (size_t i = 0; i < batch.measurements.size(); ++i) {
    const db::MeasurementRecord& record = batch.measurements[i];
    const Candidate& candidate = batch.space.candidates[batch.candidates[i]];
    // Tuned layouts change the fusion itself; the training set leaves them out too.
    if (record.status != db::TrialStatus::kOk || candidate.config.contains("layouts")) continue;
    auto kernel = emitters::EmitKernel(batch.space.AnalysisOf(candidate),
                                       EmitterConfig(candidate.config), device_.info);
    if (!kernel) continue;
    costmodel::ResourceUsage usage = BuildStats::FromJson(record.compile_stats).usage;
    auto row = costmodel::MakeTrainingRow(batch.key.fingerprint, *kernel, figures,
                                          usage.known() ? &usage : nullptr, learned_->analytic(),
                                          record.timing->median_us);
    if (row) rows.push_back(std::move(*row));
  }
  if (rows.empty()) return OkStatus();
  if (auto retrained = learned_->Retrain(rows); !retrained) {
    failure_ = "retraining failed: " + retrained.error().message;
    learned_ = nullptr;
    return OkStatus();
  }
  rows_ += static_cast<int64_t>(rows.size());
  return OkStatus();
}

void RetrainingObserver::OnFinished(TuneResult& result) {
  if (!failure_.empty()) result.model_update = failure_;
  if (learned_ == nullptr || rows_ == 0) return;
  auto record = learned_->ToRecord(key_.device_key, key_.compiler_version);
  if (record) {
    record->meta["retrained_by_tune"] = {{"fingerprint", key_.fingerprint}, {"rows", rows_}};
  }
  auto id = record ? store_.PutModel(*record) : Expected<int64_t>(std::unexpected(record.error()));
  result.model_update = id ? "retrained on " + std::to_string(rows_) +
                                 " measurements of this fusion, stored as model " +
                                 std::to_string(*id)
                           : "retrained, but storing the model failed: " + id.error().message;
}

}  // namespace tilesmith::tuner
