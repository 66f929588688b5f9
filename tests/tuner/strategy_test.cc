// Search strategies: each proposes only unseen candidates, respects its budget, is
// deterministic for a seed, and the guided ones follow their guide.
#include "tuner/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "db/records.h"
#include "tuner/session.h"

namespace tilesmith::tuner {
namespace {

// A 6 x 4 grid of configs {"tile": t, "vector": v}.
Space GridSpace() {
  Space space;
  space.emitter = "grid";
  for (int64_t tile : {32, 64, 128, 256, 512, 1024}) {
    for (int64_t vector : {1, 2, 4, 8}) {
      nlohmann::json config = {{"tile", tile}, {"vector", vector}};
      space.candidates.push_back({config, *db::ConfigHash(config), false});
    }
  }
  space.candidates[5].is_default = true;
  space.default_index = 5;
  return space;
}

// A synthetic landscape: fastest at tile 256, vector 4.
double CostOf(const Space& space, int64_t candidate) {
  const nlohmann::json& config = space.candidates[candidate].config;
  double tile = config["tile"].get<double>();
  double vector = config["vector"].get<double>();
  return std::abs(std::log2(tile / 256)) + std::abs(std::log2(vector / 4)) + 1;
}

// Asks in batches of `batch`, telling each batch's synthetic times; returns every proposal.
std::vector<int64_t> Drive(Strategy& strategy, const Space& space, int64_t batch) {
  std::vector<int64_t> proposed;
  for (std::vector<int64_t> next = strategy.Ask(batch); !next.empty(); next = strategy.Ask(batch)) {
    std::vector<TrialOutcome> outcomes;
    for (int64_t candidate : next) {
      proposed.push_back(candidate);
      outcomes.push_back({candidate, true, CostOf(space, candidate)});
    }
    strategy.Tell(outcomes);
  }
  return proposed;
}

// A ranking that knows the landscape exactly.
struct LandscapeRanking : Ranking {
  std::vector<double> PredictUs(const Space& space) const override {
    std::vector<double> predicted;
    for (size_t i = 0; i < space.candidates.size(); ++i) predicted.push_back(CostOf(space, i));
    return predicted;
  }
};

class StrategyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StrategyTest, NoDuplicatesAndTheBudgetHolds) {
  Space space = GridSpace();
  LandscapeRanking ranking;
  for (int64_t budget : {0, 1, 7, 24, 100}) {
    auto strategy =
        MakeStrategy(GetParam(), space, {.budget = budget, .seed = 3, .ranking = &ranking});
    ASSERT_TRUE(strategy.has_value()) << strategy.error().message;
    std::vector<int64_t> proposed = Drive(**strategy, space, 5);
    std::set<int64_t> unique(proposed.begin(), proposed.end());
    EXPECT_EQ(unique.size(), proposed.size()) << GetParam() << " budget " << budget;
    int64_t expected = budget == 0 ? 24 : std::min<int64_t>(budget, 24);
    // The model strategy may stop before the budget once nothing is predicted to win.
    bool may_stop_early = !(*strategy)->stop_reason().empty();
    if (may_stop_early) {
      EXPECT_LT(static_cast<int64_t>(proposed.size()), expected) << "budget " << budget;
      EXPECT_GE(proposed.size(), 8u) << "stopped before its minimum measurements";
    } else {
      EXPECT_EQ(static_cast<int64_t>(proposed.size()), expected)
          << GetParam() << " budget " << budget;
    }
    for (int64_t candidate : proposed) {
      EXPECT_GE(candidate, 0);
      EXPECT_LT(candidate, 24);
    }
  }
}

TEST_P(StrategyTest, TheSameSeedGivesTheSameBatches) {
  Space space = GridSpace();
  struct Flat : Ranking {
    std::vector<double> PredictUs(const Space& space) const override {
      return std::vector<double>(space.candidates.size(), 1.0);
    }
  } flat;
  auto first = MakeStrategy(GetParam(), space, {.budget = 12, .seed = 42, .ranking = &flat});
  auto second = MakeStrategy(GetParam(), space, {.budget = 12, .seed = 42, .ranking = &flat});
  EXPECT_EQ(Drive(**first, space, 4), Drive(**second, space, 4));
}

TEST_P(StrategyTest, ToldCandidatesAreNeverProposedAndCountAgainstTheBudget) {
  Space space = GridSpace();
  struct Flat : Ranking {
    std::vector<double> PredictUs(const Space& space) const override {
      return std::vector<double>(space.candidates.size(), 1.0);
    }
  } flat;
  auto strategy = MakeStrategy(GetParam(), space, {.budget = 10, .seed = 1, .ranking = &flat});
  // A resumed tune: three configs were measured by an earlier run.
  std::vector<TrialOutcome> earlier = {{0, true, 5}, {7, false, 0}, {13, true, 2}};
  (*strategy)->Tell(earlier);
  std::vector<int64_t> proposed = Drive(**strategy, space, 4);
  EXPECT_EQ(proposed.size(), (*strategy)->stop_reason().empty() ? 7u : proposed.size());
  EXPECT_LE(proposed.size(), 7u);
  for (int64_t candidate : proposed) {
    EXPECT_NE(candidate, 0);
    EXPECT_NE(candidate, 7);
    EXPECT_NE(candidate, 13);
  }
}

INSTANTIATE_TEST_SUITE_P(All, StrategyTest,
                         ::testing::Values("model", "exhaustive", "random", "best-first",
                                           "evolutionary"));

TEST(StrategyTest, ExhaustiveFollowsConfigOrder) {
  Space space = GridSpace();
  auto strategy = MakeStrategy("exhaustive", space, {});
  std::vector<int64_t> proposed = Drive(**strategy, space, 5);
  for (size_t i = 0; i < proposed.size(); ++i) EXPECT_EQ(proposed[i], static_cast<int64_t>(i));
}

TEST(StrategyTest, APlannedOrderIsWhatTheTuneWouldMeasureDefaultFirst) {
  Space space = GridSpace();
  for (std::string name : {"exhaustive", "random"}) {
    auto order = PlannedOrder(name, space, 10, 7);
    ASSERT_TRUE(order.has_value()) << order.error().message;
    ASSERT_EQ(order->size(), 10u) << name;
    EXPECT_EQ(order->front(), space.default_index) << name;
    // The same as driving the strategy after telling it the default, as Tune does.
    auto strategy = MakeStrategy(name, space, {.budget = 10, .seed = 7});
    std::vector<TrialOutcome> told = {{space.default_index, true, 1}};
    (*strategy)->Tell(told);
    std::vector<int64_t> driven = Drive(**strategy, space, 3);
    EXPECT_EQ(std::vector<int64_t>(order->begin() + 1, order->end()), driven) << name;
  }
  auto whole = PlannedOrder("exhaustive", space, 0, 0);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->size(), space.candidates.size());
  auto adaptive = PlannedOrder("model", space, 10, 0);
  ASSERT_FALSE(adaptive.has_value());
  EXPECT_NE(adaptive.error().message.find("cannot be planned ahead"), std::string::npos);
}

TEST(StrategyTest, AListedStrategyProposesExactlyItsCandidatesInOrder) {
  Space space = GridSpace();
  std::unique_ptr<Strategy> listed = MakeListedStrategy(space, {7, 3, 11, 0});
  EXPECT_EQ(listed->budget(), 4);
  std::vector<TrialOutcome> resumed = {{11, true, 2}};
  listed->Tell(resumed);
  EXPECT_EQ(Drive(*listed, space, 2), (std::vector<int64_t>{7, 3, 0}));
}

TEST(StrategyTest, RandomSeedsDiffer) {
  Space space = GridSpace();
  auto a = MakeStrategy("random", space, {.budget = 8, .seed = 1});
  auto b = MakeStrategy("random", space, {.budget = 8, .seed = 2});
  EXPECT_NE(Drive(**a, space, 8), Drive(**b, space, 8));
}

TEST(StrategyTest, BestFirstMeasuresThePredictedFastestFirst) {
  Space space = GridSpace();
  struct Reverse : Ranking {
    std::vector<double> PredictUs(const Space& space) const override {
      std::vector<double> predicted;
      for (size_t i = 0; i < space.candidates.size(); ++i) predicted.push_back(-double(i));
      return predicted;
    }
  } reverse;
  auto strategy = MakeStrategy("best-first", space, {.budget = 3, .ranking = &reverse});
  EXPECT_EQ(Drive(**strategy, space, 2), (std::vector<int64_t>{23, 22, 21}));
  EXPECT_FALSE(MakeStrategy("best-first", space, {}).has_value());  // needs a ranking
}

// How many proposals `strategy` makes up to and including `candidate`; the space size when
// it never proposes it.
int64_t ProposalsUntil(Strategy& strategy, const Space& space, int64_t candidate) {
  std::vector<int64_t> proposed = Drive(strategy, space, 4);
  auto at = std::find(proposed.begin(), proposed.end(), candidate);
  return at == proposed.end() ? static_cast<int64_t>(space.candidates.size())
                              : at - proposed.begin() + 1;
}

TEST(ModelStrategyTest, AnExactModelMeasuresTheOptimumFirstAndStopsEarly) {
  Space space = GridSpace();
  LandscapeRanking exact;
  auto strategy = MakeStrategy("model", space, {.ranking = &exact});
  ASSERT_TRUE(strategy.has_value());
  std::vector<int64_t> proposed = Drive(**strategy, space, 4);
  ASSERT_FALSE(proposed.empty());
  EXPECT_EQ(proposed.front(), 3 * 4 + 2);  // tile 256, vector 4
  EXPECT_LT(proposed.size(), space.candidates.size());
  EXPECT_NE((*strategy)->stop_reason().find("converged"), std::string::npos);
}

TEST(ModelStrategyTest, MeasurementsCorrectAModelThatIsWrongAboutOneField) {
  // The model believes the best tile is 32 (the truth: 256) and is right about the vector
  // width. Best-first follows the wrong belief; the model strategy learns from the slow
  // small tiles it measures that larger tiles are faster than predicted.
  Space space = GridSpace();
  struct Misled : Ranking {
    std::vector<double> PredictUs(const Space& space) const override {
      std::vector<double> predicted;
      for (const Candidate& candidate : space.candidates) {
        double tile = candidate.config["tile"].get<double>();
        double vector = candidate.config["vector"].get<double>();
        predicted.push_back(std::abs(std::log2(tile / 32)) + std::abs(std::log2(vector / 4)) + 1);
      }
      return predicted;
    }
  } misled;
  int64_t optimum = 3 * 4 + 2;
  auto model = MakeStrategy("model", space, {.ranking = &misled});
  auto best_first = MakeStrategy("best-first", space, {.ranking = &misled});
  int64_t by_model = ProposalsUntil(**model, space, optimum);
  int64_t by_best_first = ProposalsUntil(**best_first, space, optimum);
  EXPECT_LT(by_model, by_best_first);
  EXPECT_LE(by_model, 12) << "the corrected model should find the optimum in half the space";
}

TEST(ModelStrategyTest, AModelThatCannotPredictWhatItMeasuredIsNotTrustedToStop) {
  // Predictions unrelated to the landscape: whatever the correction fits, the next batch's
  // times are off, so the strategy never declares convergence and reaches the optimum.
  Space space = GridSpace();
  struct Scrambled : Ranking {
    std::vector<double> PredictUs(const Space& space) const override {
      std::vector<double> predicted;
      for (size_t i = 0; i < space.candidates.size(); ++i) {
        predicted.push_back(1.0 + static_cast<double>((i * 7) % 24) / 4);
      }
      return predicted;
    }
  } scrambled;
  auto strategy = MakeStrategy("model", space, {.ranking = &scrambled});
  ASSERT_TRUE(strategy.has_value());
  std::vector<int64_t> proposed = Drive(**strategy, space, 4);
  int64_t optimum = 3 * 4 + 2;
  EXPECT_NE(std::find(proposed.begin(), proposed.end(), optimum), proposed.end())
      << "stopped first: " << (*strategy)->stop_reason();
}

TEST(StrategyTest, EvolutionaryFindsTheOptimumOfASmoothLandscapeWithinHalfTheSpace) {
  Space space = GridSpace();
  int64_t optimum = 3 * 4 + 2;  // tile 256, vector 4
  int found = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto strategy = MakeStrategy("evolutionary", space, {.budget = 12, .seed = seed});
    std::vector<int64_t> proposed = Drive(**strategy, space, 4);
    found += std::find(proposed.begin(), proposed.end(), optimum) != proposed.end();
  }
  // Random search finds it with probability 12/24 per seed; children of good parents
  // should do clearly better.
  EXPECT_GE(found, 7);
}

TEST(StrategyTest, UnknownNamesListTheKnownOnes) {
  Space space = GridSpace();
  auto strategy = MakeStrategy("annealing", space, {});
  ASSERT_FALSE(strategy.has_value());
  EXPECT_NE(strategy.error().message.find("evolutionary"), std::string::npos);
}

TEST(PickBestTest, TiesWithinNoiseGoToFewerResourcesThenConfigOrder) {
  // 100 us (spread 1 us, so the 1% floor: 1 us) ties with 101 us; 110 us does not.
  std::vector<Contender> contenders = {
      {.order = 4, .median_us = 100, .p20_us = 99.5, .p80_us = 100.5, .resources = {0, 0, 256}},
      {.order = 2, .median_us = 101, .p20_us = 100, .p80_us = 102, .resources = {0, 0, 128}},
      {.order = 1, .median_us = 110, .p20_us = 109, .p80_us = 111, .resources = {0, 0, 32}},
      {.order = 0, .median_us = 100.8, .p20_us = 100.5, .p80_us = 102, .resources = {0, 0, 128}}};
  EXPECT_EQ(PickBest(contenders), 3);  // 128 threads like #1, earlier in config order
  contenders[3].median_us = 101.5;     // now outside the noise
  EXPECT_EQ(PickBest(contenders), 1);
  // A noisy fastest widens the window only up to 5%.
  contenders[0].p20_us = 60;
  contenders[0].p80_us = 140;
  EXPECT_EQ(PickBest(contenders), 3);  // 101.5 is within 5 us
  contenders[3].median_us = 106;
  contenders[1].median_us = 106;
  EXPECT_EQ(PickBest(contenders), 0);
  // Clearly faster beats fewer resources.
  contenders[0].median_us = 50;
  contenders[0].p20_us = 49.9;
  contenders[0].p80_us = 50.1;
  EXPECT_EQ(PickBest(contenders), 0);
  EXPECT_EQ(PickBest({}), -1);
}

}  // namespace
}  // namespace tilesmith::tuner
