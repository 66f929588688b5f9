// The features' ceiling on one fusion (costmodel::FitWithinFusion): trees fitted to the
// fusion's other configs find an effect the analytic model misses, and never see the
// measured time of the config they predict.
#include <gtest/gtest.h>

#include "costmodel/gpu_model.h"
#include "costmodel/learned_model.h"
#include "costmodel/model_eval.h"
#include "costmodel/ranking_metrics.h"
#include "tests/costmodel/kernel_test_util.h"

namespace tilesmith::costmodel {
namespace {

DeviceFigures H100() { return {testing::Device("cuda:sm_90"), 50 << 20}; }

// One loop fusion's configs, measured with a block-size effect the analytic model misses.
std::vector<TrainingRow> OneFusion() {
  GpuModel analytic;
  std::vector<TrainingRow> rows;
  for (int threads : {64, 128, 256, 512, 1024}) {
    for (int vector : {1, 2, 4, 8}) {
      auto kernel = testing::Emit(testing::kElementwise,
                                  {{"threads_per_block", threads}, {"vector", vector}});
      double factor = threads == 256 ? 0.3 : threads == 512 ? 0.6 : threads == 128 ? 1.5 : 3.0;
      auto predicted = analytic.Predict(kernel.kernel, H100(), nullptr);
      EXPECT_TRUE(predicted.has_value());
      auto row = MakeTrainingRow("loop", kernel.kernel, H100(), nullptr, analytic,
                                 predicted->microseconds * factor);
      EXPECT_TRUE(row.has_value());
      rows.push_back(std::move(*row));
    }
  }
  return rows;
}

std::unique_ptr<CostModel> Analytic() { return std::make_unique<GpuModel>(); }

TEST(WithinFusionTest, FindsWhatTheAnalyticModelMisses) {
  std::vector<TrainingRow> rows = OneFusion();
  auto fitted = FitWithinFusion(rows, Analytic);
  ASSERT_TRUE(fitted.has_value()) << fitted.error().message;
  ASSERT_EQ(fitted->size(), rows.size());
  std::vector<double> measured, analytic;
  for (const TrainingRow& row : rows) {
    measured.push_back(row.measured_us);
    analytic.push_back(row.analytic_us);
  }
  double fitted_rho = Spearman(*fitted, measured);
  EXPECT_GT(fitted_rho, 0.8);
  EXPECT_GT(fitted_rho, Spearman(analytic, measured) + 0.2);
}

TEST(WithinFusionTest, NeverSeesTheTimeItPredicts) {
  std::vector<TrainingRow> rows = OneFusion();
  auto before = FitWithinFusion(rows, Analytic);
  ASSERT_TRUE(before.has_value()) << before.error().message;
  rows[5].measured_us *= 100;
  auto after = FitWithinFusion(rows, Analytic);
  ASSERT_TRUE(after.has_value()) << after.error().message;
  EXPECT_DOUBLE_EQ((*before)[5], (*after)[5]);
  // Other folds trained on it: some prediction moves, or the check above proves nothing.
  EXPECT_NE(*before, *after);
}

TEST(WithinFusionTest, RefusesOtherFusionsAndTooFewConfigs) {
  std::vector<TrainingRow> rows = OneFusion();
  rows.back().fusion = "another";
  auto mixed = FitWithinFusion(rows, Analytic);
  ASSERT_FALSE(mixed.has_value());
  EXPECT_NE(mixed.error().message.find("'another'"), std::string::npos) << mixed.error().message;
  auto one = FitWithinFusion({rows.front()}, Analytic);
  ASSERT_FALSE(one.has_value());
  EXPECT_NE(one.error().message.find("two configs"), std::string::npos) << one.error().message;
}

}  // namespace
}  // namespace tilesmith::costmodel
