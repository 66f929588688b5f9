// Rank correlations and regret on orders worked out by hand.
#include "costmodel/ranking_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tilesmith::costmodel {
namespace {

TEST(RankingMetricsTest, RanksAverageTies) {
  std::vector<double> values = {10, 30, 20, 30};
  EXPECT_EQ(Ranks(values), (std::vector<double>{1, 3.5, 2, 3.5}));
}

TEST(RankingMetricsTest, SpearmanAndKendallOnKnownOrders) {
  std::vector<double> measured = {1, 2, 3, 4, 5};
  std::vector<double> same = {10, 20, 30, 40, 50};
  std::vector<double> reversed = {5, 4, 3, 2, 1};
  std::vector<double> one_swap = {1, 2, 3, 5, 4};
  EXPECT_DOUBLE_EQ(Spearman(same, measured), 1);
  EXPECT_DOUBLE_EQ(Spearman(reversed, measured), -1);
  EXPECT_DOUBLE_EQ(Spearman(one_swap, measured), 0.9);  // 1 - 6 * 2 / (5 * 24)
  EXPECT_DOUBLE_EQ(KendallTau(same, measured), 1);
  EXPECT_DOUBLE_EQ(KendallTau(reversed, measured), -1);
  EXPECT_DOUBLE_EQ(KendallTau(one_swap, measured), 0.8);  // (9 - 1) / 10
  std::vector<double> constant = {7, 7, 7, 7, 7};
  EXPECT_EQ(Spearman(constant, measured), 0) << "no order to correlate";
  EXPECT_EQ(KendallTau(constant, measured), 0);
  // tau-b with a tie on one side: 5 concordant, 0 discordant, 1 tie in a.
  std::vector<double> tied = {1, 1, 2, 3};
  EXPECT_NEAR(KendallTau(tied, std::vector<double>{1, 2, 3, 4}), 5 / std::sqrt(5.0 * 6.0), 1e-12);
}

TEST(RankingMetricsTest, RegretIsHowMuchSlowerThePredictedBestIs) {
  std::vector<double> measured = {10, 12, 8, 20, 9, 30};
  std::vector<double> predicted = {1, 2, 3, 4, 5, 6};  // picks 10 first; best is 8 (third)
  EXPECT_DOUBLE_EQ(TopKRegret(predicted, measured, 1), 0.25);
  EXPECT_DOUBLE_EQ(TopKRegret(predicted, measured, 2), 0.25);
  EXPECT_DOUBLE_EQ(TopKRegret(predicted, measured, 3), 0);
  EXPECT_DOUBLE_EQ(TopKRegret(predicted, measured, 5), 0);
  EXPECT_DOUBLE_EQ(TopKRegret(measured, measured, 1), 0) << "a perfect model has no regret";
}

}  // namespace
}  // namespace tilesmith::costmodel
