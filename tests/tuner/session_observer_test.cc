// The session's seams: observers hear of every committed batch and of the end, and a tune
// for a target that cannot be timed here runs the predicting runner, whose predictions reach
// a real SQLite store's predictions table and never its measurements.
#include <gtest/gtest.h>

#include "db/sqlite_store.h"
#include "tests/tuner/tuner_test_util.h"
#include "tuner/session.h"

namespace tilesmith::tuner {
namespace {

constexpr char kCompilerVersion[] = "tilesmith-test";

// Counts what it is told and checks each batch is already in the store when told.
class CountingObserver : public SessionObserver {
 public:
  explicit CountingObserver(db::Store* store) : store_(store) {}
  Status OnBatchCommitted(const CommittedBatch& batch) override {
    ++batches;
    measurements += static_cast<int64_t>(batch.measurements.size());
    predictions += static_cast<int64_t>(batch.predictions.size());
    EXPECT_EQ(batch.candidates.size(), batch.measurements.size() + batch.predictions.size());
    if (store_ != nullptr && !batch.measurements.empty()) {
      auto stored = store_->Measurements(
          {batch.key.fingerprint, batch.key.device_key, batch.key.compiler_version});
      EXPECT_TRUE(stored.has_value());
      if (stored) committed_when_told = static_cast<int64_t>(stored->size());
      EXPECT_EQ(committed_when_told, measurements);
    }
    return OkStatus();
  }
  void OnFinished(TuneResult& result) override {
    ++finished;
    finished_measured_now = result.measured_now;
  }

  int64_t batches = 0;
  int64_t measurements = 0;
  int64_t predictions = 0;
  int64_t committed_when_told = 0;
  int64_t finished = 0;
  int64_t finished_measured_now = -1;

 private:
  db::Store* store_;
};

TEST(SessionObserverTest, SeesEveryCommittedBatchAndTheEnd) {
  testing::TempDir dir;
  auto store = *db::SqliteStore::Open(dir.path() + "/results.db");
  auto module = testing::LoadModule(testing::GeluPath());
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  CountingObserver observer(store.get());
  TuneOptions options;
  options.budget = 5;
  options.strategy = "exhaustive";
  options.batch_size = 2;
  options.measure.warmup_ms = 1;
  options.measure.budget_ms = 3;
  options.measure.flush_bytes = -1;
  options.worker_argv = testing::WorkerArgv(testing::GeluPath());
  options.observers = {&observer};
  auto result = Tune(*module, host, store.get(), kCompilerVersion, options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  // The default alone, then batches of two: 1 + 2 + 2.
  EXPECT_EQ(observer.batches, 3);
  EXPECT_EQ(observer.measurements, 5);
  EXPECT_EQ(observer.measurements, result->measured_now);
  EXPECT_EQ(observer.predictions, 0);
  EXPECT_EQ(observer.finished, 1);
  EXPECT_EQ(observer.finished_measured_now, 5);
}

TEST(PredictingRunnerTest, StoresPredictionsAndNoMeasurements) {
  testing::TempDir dir;
  auto store = *db::SqliteStore::Open(dir.path() + "/results.db");
  auto module = testing::LoadModule(testing::GeluPath());
  Device h100 = *ResolveDevice("cuda:sm_90", "", DefaultDevicesDir());
  CountingObserver observer(nullptr);
  TuneOptions options;
  options.budget = 3;
  options.strategy = "exhaustive";
  options.observers = {&observer};
  auto result = Tune(*module, h100, store.get(), kCompilerVersion, options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_FALSE(result->timed);
  db::ResultFilter filter{result->fingerprint, result->device_key, result->compiler_version};
  auto measured = store->Measurements(filter);
  ASSERT_TRUE(measured.has_value());
  EXPECT_TRUE(measured->empty());
  auto predicted = store->Predictions(filter);
  ASSERT_TRUE(predicted.has_value()) << predicted.error().message;
  ASSERT_EQ(static_cast<int64_t>(predicted->size()), result->compiled + result->compile_failed);
  EXPECT_EQ(observer.predictions, static_cast<int64_t>(predicted->size()));
  EXPECT_EQ(observer.measurements, 0);
  for (const db::PredictionRecord& prediction : *predicted) {
    if (prediction.status != db::TrialStatus::kOk) continue;
    ASSERT_TRUE(prediction.predicted_us.has_value());
    EXPECT_GT(*prediction.predicted_us, 0);
    // Predicted with what the compiler assigned: the cubin's registers are stored with it.
    EXPECT_GT(prediction.compile_stats["registers"].get<int64_t>(), 0);
    EXPECT_EQ(prediction.model, "analytic-gpu");
  }
}

}  // namespace
}  // namespace tilesmith::tuner
