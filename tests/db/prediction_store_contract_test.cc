// Predictions and host calibrations on every store (store_factories.h): predictions
// round-trip, replace an earlier prediction of the same config and model, and never reach
// measurements or best results; calibrations answer newest first per device.
#include <gtest/gtest.h>

#include "tests/db/store_factories.h"

namespace tilesmith::db::testing {
namespace {

PredictionRecord Predicted(const KernelRecord& kernel, nlohmann::json config, double us,
                           const std::string& model = "analytic-gpu") {
  PredictionRecord p;
  p.key = {kernel.fingerprint, H100().Key(), "tilesmith-test-1"};
  p.emitter = "loop";
  p.config = std::move(config);
  p.model = model;
  p.model_description = model + " (test)";
  p.predicted_us = us;
  p.breakdown = {{"memory_us", us}};
  p.compile_stats = {{"registers", 24}, {"shared_bytes", 0}, {"spill_bytes", 0}};
  return p;
}

class PredictionStoreContract : public StoreContractTest {
 protected:
  // A fresh store holding the H100 and `kernel`, as a compile-only tune leaves it.
  Store* StoreWith(const KernelRecord& kernel) {
    Store* store = NewStore();
    EXPECT_TRUE(store->PutDevice(H100()).has_value());
    EXPECT_TRUE(store->PutKernel(kernel).has_value());
    return store;
  }
};

TEST_P(PredictionStoreContract, PredictionsRoundTripAndStayOutOfMeasurements) {
  KernelRecord gelu = Kernel("gelu");
  Store* store = StoreWith(gelu);
  PredictionRecord slow = Predicted(gelu, {{"threads", 128}}, 9.5);
  slow.is_default = true;
  PredictionRecord fast = Predicted(gelu, {{"threads", 256}}, 4.25);
  PredictionRecord rejected = Predicted(gelu, {{"threads", 1024}}, 0);
  rejected.status = TrialStatus::kCompile;
  rejected.message = "ptxas: too many resources";
  rejected.predicted_us.reset();
  std::vector<PredictionRecord> batch = {slow, fast, rejected};
  auto written = store->RecordPredictions(batch);
  ASSERT_TRUE(written.has_value()) << written.error().message;
  EXPECT_EQ(*written, 3);

  auto read = store->Predictions({gelu.fingerprint});
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_EQ(read->size(), 3u);
  // Fastest first, failures last.
  EXPECT_EQ((*read)[0].config, fast.config);
  EXPECT_EQ((*read)[0].predicted_us, 4.25);
  EXPECT_EQ((*read)[1].config, slow.config);
  EXPECT_TRUE((*read)[1].is_default);
  EXPECT_EQ((*read)[1].compile_stats["registers"], 24);
  EXPECT_EQ((*read)[1].breakdown["memory_us"], 9.5);
  EXPECT_EQ((*read)[2].status, TrialStatus::kCompile);
  EXPECT_EQ((*read)[2].message, "ptxas: too many resources");
  EXPECT_FALSE((*read)[2].predicted_us.has_value());
  EXPECT_EQ((*read)[0].config_hash, *ConfigHash(fast.config));
  EXPECT_FALSE((*read)[0].predicted_at.empty());

  // Nothing predicted passes for measured.
  EXPECT_TRUE(store->Measurements({})->empty());
  EXPECT_TRUE(store->ListBest({})->empty());
  auto stats = store->Stats();
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->predictions, 3);
  EXPECT_EQ(stats->measurements, 0);
  EXPECT_EQ(stats->configs, 3);
}

TEST_P(PredictionStoreContract, PredictingAgainReplacesTheSameModelsRowAndKeepsOtherModels) {
  KernelRecord gelu = Kernel("gelu");
  Store* store = StoreWith(gelu);
  std::vector<PredictionRecord> first = {Predicted(gelu, {{"threads", 128}}, 9.5)};
  std::vector<PredictionRecord> again = {Predicted(gelu, {{"threads", 128}}, 7.0)};
  std::vector<PredictionRecord> learned = {
      Predicted(gelu, {{"threads", 128}}, 6.0, "learned-xgboost")};
  ASSERT_TRUE(store->RecordPredictions(first).has_value());
  ASSERT_TRUE(store->RecordPredictions(again).has_value());
  ASSERT_TRUE(store->RecordPredictions(learned).has_value());
  auto read = store->Predictions({gelu.fingerprint});
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].model, "learned-xgboost");
  EXPECT_EQ((*read)[1].model, "analytic-gpu");
  EXPECT_EQ((*read)[1].predicted_us, 7.0);
}

TEST_P(PredictionStoreContract, BadPredictionsAreRefusedAndNothingOfTheBatchIsWritten) {
  KernelRecord gelu = Kernel("gelu");
  Store* store = StoreWith(gelu);
  PredictionRecord no_time = Predicted(gelu, {{"threads", 64}}, 1);
  no_time.predicted_us.reset();
  std::vector<PredictionRecord> batch = {Predicted(gelu, {{"threads", 32}}, 1), no_time};
  auto refused = store->RecordPredictions(batch);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("needs a time"), std::string::npos);
  PredictionRecord timed_status = Predicted(gelu, {{"threads", 64}}, 1);
  timed_status.status = TrialStatus::kWrongResult;
  std::vector<PredictionRecord> wrong = {timed_status};
  EXPECT_FALSE(store->RecordPredictions(wrong).has_value());
  KernelRecord unknown = Kernel("unknown");
  std::vector<PredictionRecord> orphan = {Predicted(unknown, {{"threads", 64}}, 1)};
  auto missing = store->RecordPredictions(orphan);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("is not in the store"), std::string::npos);
  EXPECT_TRUE(store->Predictions({})->empty());
}

TEST_P(PredictionStoreContract, TheNewestCalibrationOfADeviceAnswers) {
  Store* store = NewStore();
  EXPECT_FALSE(store->LatestCalibration(Host().Key())->has_value());
  CalibrationRecord old{0, Host().Key(), {{"memory_gbs", 10.0}}, "2026-01-01T00:00:00.000Z"};
  CalibrationRecord fresh{0, Host().Key(), {{"memory_gbs", 12.5}}, ""};
  CalibrationRecord other{0, "host, another machine", {{"memory_gbs", 99.0}}, ""};
  ASSERT_TRUE(store->PutCalibration(old).has_value());
  auto id = store->PutCalibration(fresh);
  ASSERT_TRUE(id.has_value());
  ASSERT_TRUE(store->PutCalibration(other).has_value());
  auto latest = store->LatestCalibration(Host().Key());
  ASSERT_TRUE(latest.has_value() && latest->has_value());
  EXPECT_EQ((*latest)->id, *id);
  EXPECT_EQ((*latest)->figures["memory_gbs"], 12.5);
  EXPECT_FALSE((*latest)->measured_at.empty());
  EXPECT_EQ(store->Stats()->calibrations, 3);
  CalibrationRecord empty{0, Host().Key(), nlohmann::json::object(), ""};
  EXPECT_FALSE(store->PutCalibration(empty).has_value());
}

INSTANTIATE_TEST_SUITE_P(Stores, PredictionStoreContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db::testing
