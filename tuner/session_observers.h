// The session's own observers (session.h): what happens with a committed batch besides the
// tune itself. A stored learned model is retrained on every measured batch and stored again
// at the end, so the next tune starts from what this one measured; a predicting tune's
// predictions go to the store's predictions table, never to its measurements.
#pragma once

#include <cstdint>

#include "costmodel/learned_model.h"
#include "db/model_store.h"
#include "tuner/device.h"
#include "tuner/session.h"

namespace tilesmith::tuner {

/// Boosts `learned` on each batch's verified measurements (a bounded number of trees, with a
/// replay of older rows: learned_model.h) and stores it as the device's newest model at the
/// end, saying so in TuneResult::model_update. A failure stops retraining for this tune and
/// is reported there; it never fails the tune.
class RetrainingObserver : public SessionObserver {
 public:
  /// `learned`, `device` and `store` are borrowed.
  RetrainingObserver(costmodel::LearnedModel& learned, const Device& device, db::ModelStore& store)
      : learned_(&learned), device_(device), store_(store) {}
  Status OnBatchCommitted(const CommittedBatch& batch) override;
  void OnFinished(TuneResult& result) override;

 private:
  costmodel::LearnedModel* learned_;  // null once retraining failed
  const Device& device_;
  db::ModelStore& store_;
  db::ResultKey key_;
  int64_t rows_ = 0;
  std::string failure_;
};

/// Writes every batch's predictions to `store` (borrowed).
class PredictionRecorder : public SessionObserver {
 public:
  explicit PredictionRecorder(db::ModelStore& store) : store_(store) {}
  Status OnBatchCommitted(const CommittedBatch& batch) override {
    auto recorded = store_.RecordPredictions(batch.predictions);
    if (!recorded) return std::unexpected(recorded.error());
    return OkStatus();
  }

 private:
  db::ModelStore& store_;
};

}  // namespace tilesmith::tuner
