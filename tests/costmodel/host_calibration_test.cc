// The host model's calibration lives in the results database: the first process measures
// and stores it, later ones predict from the stored figures (not the load of the moment),
// and a stored calibration that cannot be read is reported while a measurement answers.
#include <gtest/gtest.h>

#include "costmodel/host_model.h"
#include "costmodel/model_selection.h"
#include "tests/costmodel/kernel_test_util.h"
#include "tests/costmodel/store_test_util.h"

namespace tilesmith::costmodel {
namespace {

class HostCalibrationTest : public testing::StoreTest {};

constexpr char kDevice[] = "host, test machine";

TEST_F(HostCalibrationTest, FiguresRoundTripThroughJson) {
  HostCalibration measured;
  measured.threads = 4;
  measured.memory_bytes_per_us = 12000;
  measured.thread_memory_bytes_per_us = 8000;
  measured.cache_bytes_per_us = 40000;
  measured.thread_flops_per_us = 30000;
  measured.dispatch_us = 0.5;
  auto read = HostCalibration::FromJson(measured.ToJson());
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_EQ(read->threads, 4);
  EXPECT_DOUBLE_EQ(read->memory_bytes_per_us, 12000);
  EXPECT_DOUBLE_EQ(read->thread_flops_per_us, 30000);
  nlohmann::json broken = measured.ToJson();
  broken["cache_gbs"] = -1;
  auto refused = HostCalibration::FromJson(broken);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("cache_gbs"), std::string::npos);
}

TEST_F(HostCalibrationTest, TheFirstUseMeasuresAndStoresLaterOnesReadTheStoredFigures) {
  HostCalibrationChoice first = HostCalibrationFor(store_.get(), kDevice, 8 << 20);
  EXPECT_EQ(first.source, "measured now, stored");
  auto stored = store_->LatestCalibration(kDevice);
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  EXPECT_EQ((*stored)->figures, first.calibration.ToJson());

  // A slower machine's figures, stored later, answer from then on: the model predicts
  // from them, not from a fresh measurement.
  nlohmann::json slow = first.calibration.ToJson();
  slow["memory_gbs"] = 0.5;
  slow["thread_memory_gbs"] = 0.5;
  slow["cache_gbs"] = 0.5;
  ASSERT_TRUE(store_->PutCalibration({0, kDevice, slow, ""}).has_value());
  HostCalibrationChoice second = HostCalibrationFor(store_.get(), kDevice, 8 << 20);
  EXPECT_TRUE(second.source.starts_with("stored ")) << second.source;
  EXPECT_DOUBLE_EQ(second.calibration.memory_bytes_per_us, 500);

  auto target = emitters::Target::Parse("host");
  ASSERT_TRUE(target.has_value());
  ModelChoice choice = BestModelFor(*target, 8 << 20, store_.get(), kDevice, "v1");
  EXPECT_TRUE(choice.calibration.starts_with("stored ")) << choice.calibration;
  testing::TestKernel kernel = testing::Emit(testing::kElementwise, nullptr, "host");
  emitters::DeviceInfo info = testing::Device("host");
  auto on_slow = choice.model->Predict(kernel.kernel, {info, 8 << 20}, nullptr);
  auto on_measured = HostModel(first.calibration).Predict(kernel.kernel, {info, 8 << 20}, nullptr);
  ASSERT_TRUE(on_slow.has_value() && on_measured.has_value());
  EXPECT_EQ(on_slow->breakdown["calibration"]["memory_gbs"], 0.5);
  EXPECT_GT(on_slow->microseconds, on_measured->microseconds);
}

TEST_F(HostCalibrationTest, AnUnusableStoredCalibrationIsReportedAndReplaced) {
  ASSERT_TRUE(store_->PutCalibration({0, kDevice, {{"threads", 2}}, ""}).has_value());
  HostCalibrationChoice choice = HostCalibrationFor(store_.get(), kDevice, 8 << 20);
  EXPECT_NE(choice.source.find("measured now, stored; the stored one is unusable"),
            std::string::npos)
      << choice.source;
  EXPECT_GT(choice.calibration.memory_bytes_per_us, 0);
  EXPECT_TRUE(HostCalibrationFor(store_.get(), kDevice, 8 << 20).source.starts_with("stored "));
  EXPECT_EQ(HostCalibrationFor(nullptr, kDevice, 8 << 20).source,
            "measured now (no results database to store it in)");
}

}  // namespace
}  // namespace tilesmith::costmodel
