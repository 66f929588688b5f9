// Ranking by a cost model: the host and GPU analytic models predict every candidate of a
// real space, compiled candidates get their cubin's resources or their host code's counts,
// errors become +infinity, and best-first follows whatever model it is given.
#include "tuner/model_ranking.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/analysis/fusion_analysis.h"
#include "tests/tuner/tuner_test_util.h"
#include "tuner/strategy.h"

namespace tilesmith::tuner {
namespace {

struct Fixture {
  std::unique_ptr<hlo::HloModule> module;
  Device device;
  Space space;
};

Fixture Load(const std::string& path, const std::string& target) {
  Fixture fixture;
  fixture.module = testing::LoadModule(path);
  auto device = ResolveDevice(target, "", DefaultDevicesDir());
  EXPECT_TRUE(device.has_value());
  fixture.device = *device;
  auto space = BuildSpace(*fixture.module, fixture.device.info, {});
  EXPECT_TRUE(space.has_value()) << space.error().message;
  fixture.space = std::move(*space);
  return fixture;
}

TEST(ModelRankingTest, HostModelPredictsEveryCandidate) {
  Fixture f = Load(testing::GeluPath(), "host");
  ModelRanking ranking(f.device, nullptr, {.max_compiled = 0});
  EXPECT_EQ(ranking.model_name(), "analytic-host");
  std::vector<CandidatePrediction> predictions = ranking.PredictAll(f.space);
  ASSERT_EQ(predictions.size(), f.space.candidates.size());
  for (const CandidatePrediction& p : predictions) {
    EXPECT_TRUE(p.ok) << p.error;
    EXPECT_TRUE(std::isfinite(p.microseconds));
    EXPECT_GT(p.microseconds, 0);
    EXPECT_FALSE(p.cubin);
    EXPECT_FALSE(p.host_code);
    EXPECT_EQ(p.breakdown["model"], "analytic-host");
    EXPECT_EQ(p.breakdown["work"], "estimated");
  }
}

TEST(ModelRankingTest, HostCandidatesGetTheirExecutedCode) {
  Fixture f = Load(testing::GeluPath(), "host");
  ASSERT_GT(f.space.candidates.size(), 3u);
  ModelRanking ranking(f.device, nullptr, {.max_compiled = 3, .threads = 2});
  std::vector<CandidatePrediction> predictions = ranking.PredictAll(f.space);
  int64_t counted = 0;
  for (const CandidatePrediction& p : predictions) {
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_FALSE(p.cubin);
    if (!p.host_code) {
      EXPECT_EQ(p.breakdown["work"], "estimated");
      continue;
    }
    ++counted;
    EXPECT_GT(p.resources["executed_instructions"].get<double>(), 0);
    EXPECT_EQ(p.breakdown["work"], "executed code");
    EXPECT_GT(p.breakdown["code_us"].get<double>(), 0);
  }
  EXPECT_EQ(counted, 3);
  // The compiled candidates' builds are kept for a tune to reuse; of this space only.
  int64_t kept = 0;
  for (const CandidatePrediction& p : predictions) {
    const BuildResult* built = ranking.BuiltCandidate(f.space, p.candidate);
    EXPECT_EQ(built != nullptr, p.host_code);
    if (built == nullptr) continue;
    ++kept;
    EXPECT_TRUE(built->ok);
    EXPECT_EQ(built->stats.usage.executed_instructions,
              p.resources["executed_instructions"].get<double>());
  }
  EXPECT_EQ(kept, 3);
  Space copy = f.space;
  for (const CandidatePrediction& p : predictions) {
    EXPECT_EQ(ranking.BuiltCandidate(copy, p.candidate), nullptr);
  }
}

TEST(ModelRankingTest, CudaCandidatesGetTheirCubinResources) {
  TS_SKIP_WITHOUT_CORPUS();
  Fixture f = Load(testing::TransposePath(), "cuda:sm_90");
  ASSERT_GT(f.space.candidates.size(), 3u);
  ModelRanking ranking(f.device, nullptr, {.max_compiled = 3, .threads = 2});
  EXPECT_EQ(ranking.model_name(), "analytic-gpu");
  std::vector<CandidatePrediction> predictions = ranking.PredictAll(f.space);
  int64_t with_cubin = 0;
  for (const CandidatePrediction& p : predictions) {
    ASSERT_TRUE(p.ok) << p.error;
    if (!p.cubin) {
      EXPECT_EQ(p.breakdown["resources"]["source"], "estimate");
      continue;
    }
    ++with_cubin;
    EXPECT_GT(p.resources["registers"].get<int64_t>(), 0);
    EXPECT_EQ(p.breakdown["resources"]["source"], "cubin");
    EXPECT_EQ(p.breakdown["resources"]["registers"], p.resources["registers"]);
  }
  EXPECT_EQ(with_cubin, 3);
}

// Time = threads per block (so best-first must propose fewest threads first); configs
// with 512 threads cannot be predicted.
class ThreadsModel : public costmodel::CostModel {
 public:
  std::string_view name() const override { return "threads"; }
  Expected<costmodel::Prediction> Predict(const emitters::KernelIR& kernel,
                                          const costmodel::DeviceFigures&,
                                          const costmodel::ResourceUsage*) const override {
    int64_t threads = kernel.launch.threads_per_block();
    if (threads == 512) return InvalidArgument("512 is not predicted");
    return costmodel::Prediction{static_cast<double>(threads), {}};
  }
};

TEST(ModelRankingTest, BestFirstFollowsTheModel) {
  Fixture f = Load(testing::GeluPath(), "host");
  ModelRanking ranking(f.device, std::make_unique<ThreadsModel>());
  EXPECT_EQ(ranking.model_name(), "threads");
  std::vector<double> times = ranking.PredictUs(f.space);
  auto strategy = MakeStrategy("best-first", f.space, {.ranking = &ranking});
  ASSERT_TRUE(strategy.has_value());
  std::vector<int64_t> order = (*strategy)->Ask(static_cast<int64_t>(f.space.candidates.size()));
  ASSERT_EQ(order.size(), f.space.candidates.size());
  bool saw_unpredicted = false;
  for (size_t i = 0; i < order.size(); ++i) {
    int64_t threads = f.space.candidates[order[i]].config.value("threads_per_block", int64_t{0});
    if (threads == 512) {
      saw_unpredicted = true;
      EXPECT_TRUE(std::isinf(times[order[i]]));
    }
    if (i > 0) {
      EXPECT_LE(times[order[i - 1]], times[order[i]]);
    }
  }
  EXPECT_TRUE(saw_unpredicted);
}

}  // namespace
}  // namespace tilesmith::tuner
