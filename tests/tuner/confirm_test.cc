// The confirmation's statistics on synthetic paired samples, and its loop driven by a
// synthetic timer (the real worker is exercised in session_test.cc and the CLI tests).
#include "tuner/confirm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

namespace tilesmith::tuner {
namespace {

// Paired rounds: a shared drift per round, times of a and b multiplied by it, with
// independent log-normal noise of `sigma` on each.
struct Pairs {
  std::vector<double> a, b;
};
Pairs MakePairs(double a_us, double b_us, double sigma, int rounds, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> noise(0, sigma);
  std::uniform_real_distribution<double> drift(0.7, 1.5);
  Pairs pairs;
  for (int r = 0; r < rounds; ++r) {
    double d = drift(random);
    pairs.a.push_back(a_us * d * std::exp(noise(random)));
    pairs.b.push_back(b_us * d * std::exp(noise(random)));
  }
  return pairs;
}

TEST(StudentTQuantileTest, MatchesTables) {
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 4), 2.776, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 11), 2.201, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.995, 30), 2.750, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 1e6), 1.960, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.025, 4), -2.776, 1e-3);
}

TEST(PairedRatioTest, AClearLeadIsSignificantDespiteDrift) {
  // 10% apart, 2% noise, drift of ±40% shared by both: unpaired it would be lost.
  Pairs pairs = MakePairs(2.2, 2.0, 0.02, 12, 1);
  RatioInterval interval = PairedRatio(pairs.a, pairs.b, 0.95);
  EXPECT_TRUE(interval.significant());
  EXPECT_NEAR(interval.ratio, 1.1, 0.03);
  EXPECT_LT(interval.low, interval.ratio);
  EXPECT_GT(interval.high, interval.ratio);
  EXPECT_EQ(interval.rounds, 12);
}

TEST(PairedRatioTest, IdenticalDistributionsAreNotSignificant) {
  // Same true time: at 95% about 1 in 40 seeds would say "faster" by chance; count them.
  int significant = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Pairs pairs = MakePairs(2.0, 2.0, 0.05, 10, seed);
    significant += PairedRatio(pairs.a, pairs.b, 0.95).significant();
  }
  EXPECT_LT(significant, 20);  // one-sided error rate 2.5%: about 10 of 400
}

TEST(PairedRatioTest, IntervalCoversTheTrueRatioAtItsConfidence) {
  int covered = 0;
  const int trials = 400;
  for (uint64_t seed = 0; seed < trials; ++seed) {
    Pairs pairs = MakePairs(3.0, 2.5, 0.04, 8, 1000 + seed);
    RatioInterval interval = PairedRatio(pairs.a, pairs.b, 0.90);
    covered += interval.low <= 1.2 && 1.2 <= interval.high;
  }
  // 90% nominal: 360 of 400 expected; binomial sd is 6.
  EXPECT_GT(covered, 340);
  EXPECT_LT(covered, 380);
}

TEST(PairedRatioTest, TooFewRoundsSayNothing) {
  std::vector<double> one = {2.0};
  std::vector<double> other = {1.0};
  RatioInterval interval = PairedRatio(one, other, 0.95);
  EXPECT_FALSE(interval.significant());
  EXPECT_EQ(interval.low, 0);
  EXPECT_TRUE(std::isinf(interval.high));
}

// A timer whose candidate i takes `means[i]` times a drift shared within a round.
struct SyntheticTimer {
  std::vector<double> means;
  double sigma = 0.02;
  std::mt19937_64 random{7};
  int calls = 0;
  double drift = 1;
  RoundTiming operator()(size_t index) {
    if (calls++ % means.size() == 0)
      drift = std::uniform_real_distribution<double>(0.8, 1.3)(random);
    double t = means[index] * drift * std::exp(std::normal_distribution<double>(0, sigma)(random));
    return {true, t, {t}, "", false};
  }
};

std::vector<ConfirmCandidate> Candidates(size_t n) {
  std::vector<ConfirmCandidate> candidates(n);
  for (size_t i = 0; i < n; ++i) candidates[i].config = {{"i", i}};
  candidates[0].is_default = true;
  return candidates;
}

TEST(ConfirmTest, AClearWinnerIsChosenAndSignificant) {
  SyntheticTimer timer{{3.0, 2.0, 2.6, 2.9}};
  auto candidates = Candidates(4);
  ConfirmVerdict verdict = Confirm(
      candidates, [&](size_t i) { return timer(i); }, {.time_s = 5}, nullptr);
  EXPECT_EQ(verdict.chosen, 1);
  EXPECT_TRUE(verdict.significant);
  EXPECT_TRUE(verdict.leader_clear);
  EXPECT_GT(verdict.over_default.low, 1.3);
  EXPECT_LT(verdict.over_default.high, 1.7);
  EXPECT_EQ(verdict.runner_up, 2);
  EXPECT_GE(verdict.rounds, 5);
  EXPECT_LT(verdict.rounds, 20);  // decided early, not at the time limit
  EXPECT_EQ(static_cast<int64_t>(verdict.round_log.size()), verdict.rounds);
  EXPECT_NE(verdict.reason.find("significantly faster"), std::string::npos) << verdict.reason;
}

TEST(ConfirmTest, AWinnerWithinNoiseIsReportedAsTheDefault) {
  SyntheticTimer timer{{2.0, 2.0, 2.0}, 0.05};
  auto candidates = Candidates(3);
  ConfirmVerdict verdict = Confirm(
      candidates, [&](size_t i) { return timer(i); }, {.time_s = 0.05, .max_rounds = 12}, nullptr);
  EXPECT_EQ(verdict.chosen, 0);
  EXPECT_FALSE(verdict.significant);
  EXPECT_EQ(verdict.rounds, 12);
  EXPECT_LE(verdict.over_default.low, 1.0);
  EXPECT_GE(verdict.over_default.high, 1.0);
  EXPECT_TRUE(verdict.reason.find("not significantly faster") != std::string::npos ||
              verdict.reason.find("the default") == 0 ||
              verdict.reason.find("was the fastest") != std::string::npos)
      << verdict.reason;
}

TEST(ConfirmTest, TheDefaultLeadingGivesSpeedupOne) {
  SyntheticTimer timer{{2.0, 2.5, 3.0}};
  auto candidates = Candidates(3);
  ConfirmVerdict verdict = Confirm(
      candidates, [&](size_t i) { return timer(i); }, {.time_s = 5}, nullptr);
  EXPECT_EQ(verdict.leader, 0);
  EXPECT_EQ(verdict.chosen, 0);
  EXPECT_FALSE(verdict.significant);
  EXPECT_EQ(verdict.over_default.ratio, 1.0);
  EXPECT_TRUE(verdict.leader_clear);
  EXPECT_NE(verdict.reason.find("the default"), std::string::npos) << verdict.reason;
}

TEST(ConfirmTest, AFailingContenderIsDroppedAndKeptInTheLog) {
  SyntheticTimer timer{{3.0, 2.0, 2.5}};
  auto candidates = Candidates(3);
  int calls = 0;
  ConfirmVerdict verdict = Confirm(
      candidates,
      [&](size_t i) {
        if (i == 1 && ++calls == 2) return RoundTiming{false, 0, {}, "crash", false};
        return timer(i);
      },
      {.time_s = 5}, nullptr);
  EXPECT_EQ(verdict.chosen, 2);
  EXPECT_NE(verdict.candidates[1]["dropped"].get<std::string>().find("crash"), std::string::npos);
  bool logged = false;
  for (const auto& round : verdict.round_log) {
    for (const auto& timing : round["timings"]) logged |= timing["ok"] == false;
  }
  EXPECT_TRUE(logged);
}

TEST(ConfirmTest, TwoRoundsAreRunWhateverTheTimeSoThatThereIsAnInterval) {
  SyntheticTimer timer{{2.0, 1.0}};
  auto candidates = Candidates(2);
  ConfirmVerdict verdict = Confirm(
      candidates, [&](size_t i) { return timer(i); }, {.time_s = 0}, nullptr);
  EXPECT_EQ(verdict.rounds, 2);
  EXPECT_GT(verdict.over_default.low, 0);
  EXPECT_TRUE(std::isfinite(verdict.over_default.high));
  EXPECT_NE(verdict.reason.find("time ran out"), std::string::npos) << verdict.reason;
}

TEST(ConfirmTest, EveryRoundTimesEveryCandidateOnceInAShuffledOrder) {
  SyntheticTimer timer{{2.0, 2.0, 2.0, 2.0}};
  auto candidates = Candidates(4);
  ConfirmVerdict verdict = Confirm(
      candidates, [&](size_t i) { return timer(i); }, {.time_s = 5, .max_rounds = 10}, nullptr);
  std::set<std::vector<size_t>> orders;
  for (const auto& round : verdict.round_log) {
    auto order = round["order"].get<std::vector<size_t>>();
    EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), 4u);
    orders.insert(order);
  }
  EXPECT_GT(orders.size(), 1u);
}

}  // namespace
}  // namespace tilesmith::tuner
