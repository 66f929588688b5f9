// Real tunes on the host: small corpus fusions tuned end to end through the worker, every
// trial committed, the best no slower than the default, failures recorded while tuning goes
// on, and a rerun resuming without measuring anything twice.
#include "tuner/session.h"

#include <gtest/gtest.h>

#include <map>

#include "costmodel/cost_model.h"
#include "db/sqlite_store.h"
#include "tests/tuner/tuner_test_util.h"
#include "tuner/strategy.h"

namespace tilesmith::tuner {
namespace {

constexpr char kCompilerVersion[] = "tilesmith-test";

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<db::SqliteStore> store = *db::SqliteStore::Open(dir.path() + "/results.db");
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
};

TuneOptions QuickOptions(const std::string& path, int64_t budget) {
  TuneOptions options;
  options.budget = budget;
  options.strategy = "exhaustive";  // counts below are of a search that never stops early
  options.batch_size = 4;
  options.measure.warmup_ms = 1;
  options.measure.budget_ms = 3;
  options.measure.flush_bytes = -1;
  options.worker_argv = testing::WorkerArgv(path);
  // These tests are of the search; the confirmation after it has its own
  // (confirm_winner_test.cc).
  options.confirm.top_k = 0;
  return options;
}

std::vector<db::MeasurementRecord> Trials(db::Store& store, const TuneResult& result) {
  return *store.Measurements({result.fingerprint, result.device_key, result.compiler_version});
}

class CorpusTuneTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTuneTest, FindsAVerifiedBestNoSlowerThanTheDefault) {
  if (GetParam() != "gelu") {
    TS_SKIP_WITHOUT_CORPUS();
  }
  std::string path = GetParam() == "gelu"        ? testing::GeluPath()
                     : GetParam() == "transpose" ? testing::TransposePath()
                     : GetParam() == "row"       ? testing::RowReductionPath()
                     : GetParam() == "column"    ? testing::ColumnReductionPath()
                                                 : testing::InPlaceUpdatePath();
  Fixture fixture;
  auto module = testing::LoadModule(path);
  ASSERT_NE(module, nullptr);
  TuneOptions options = QuickOptions(path, 6);
  options.strategy = "best-first";
  auto result = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion, options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_TRUE(result->best.has_value());
  ASSERT_TRUE(result->default_config.has_value());
  // The winner is within the fastest's noise (at most 5%), and the fastest is no slower
  // than the default, which is always measured.
  EXPECT_LE(result->best->median_us, 1.05 * result->default_config->median_us + 1e-9);
  EXPECT_EQ(result->measured, std::min<int64_t>(6, result->candidates));
  EXPECT_EQ(result->failed, 0);
  std::vector<db::MeasurementRecord> trials = Trials(*fixture.store, *result);
  ASSERT_EQ(static_cast<int64_t>(trials.size()), result->measured);
  int64_t defaults = 0;
  for (const db::MeasurementRecord& trial : trials) {
    EXPECT_EQ(trial.status, db::TrialStatus::kOk) << trial.message;
    EXPECT_TRUE(trial.verification_error.has_value());
    ASSERT_TRUE(trial.timing.has_value());
    EXPECT_GE(trial.timing->times_us.size(), 3u);
    // What each block of the optimised code executes, counted once (by the ranking, or by
    // the builder for what the ranking did not compile), kept for the host model.
    EXPECT_TRUE(costmodel::ResourceUsageFromStats(trial.compile_stats).has_host_code())
        << trial.compile_stats.dump();
    defaults += trial.is_default;
  }
  EXPECT_EQ(defaults, 1);
  // The database's best_results view names the same winner as the tune.
  auto stored =
      fixture.store->Best({result->fingerprint, result->device_key, result->compiler_version});
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  EXPECT_EQ((*stored)->measurement.config_hash, *db::ConfigHash(result->best->config));
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTuneTest,
                         ::testing::Values("gelu", "transpose", "row", "column", "in_place"));

TEST(TuneTest, ARerunResumesWithoutMeasuringAnyConfigTwice) {
  Fixture fixture;
  auto module = testing::LoadModule(testing::GeluPath());
  auto first = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion,
                    QuickOptions(testing::GeluPath(), 4));
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_EQ(first->measured_now, 4);
  auto second = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion,
                     QuickOptions(testing::GeluPath(), 9));
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_EQ(second->resumed, 4);
  EXPECT_EQ(second->measured_now, 5);
  EXPECT_EQ(second->measured, 9);
  std::map<std::string, int> trials_per_config;
  for (const db::MeasurementRecord& trial : Trials(*fixture.store, *second)) {
    EXPECT_EQ(++trials_per_config[*db::ConfigHash(trial.config)], 1) << trial.config.dump();
  }
  // Another compiler version is another key: nothing to resume from.
  auto other = Tune(*module, fixture.host, fixture.store.get(), "tilesmith-other",
                    QuickOptions(testing::GeluPath(), 2));
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->resumed, 0);
  EXPECT_EQ(other->measured_now, 2);
}

TEST(TuneTest, ATuneSplitIntoListedBatchesMeasuresEachPlannedConfigOnce) {
  Fixture fixture;
  auto module = testing::LoadModule(testing::GeluPath());
  auto space = BuildSpace(*module, fixture.host.info, {});
  ASSERT_TRUE(space.has_value());
  auto plan = PlannedOrder("exhaustive", *space, 7, 0);
  ASSERT_TRUE(plan.has_value());
  std::vector<std::string> hashes;
  for (int64_t index : *plan) hashes.push_back(space->candidates[index].config_hash);
  // Two batches, as two agents would run them; the second lists one config the first did.
  TuneOptions first = QuickOptions(testing::GeluPath(), 0);
  first.configs.assign(hashes.begin() + 3, hashes.end());
  auto later = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion, first);
  ASSERT_TRUE(later.has_value()) << later.error().message;
  EXPECT_EQ(later->measured_now, 4) << "the default is measured only when listed";
  TuneOptions second = QuickOptions(testing::GeluPath(), 0);
  second.configs.assign(hashes.begin(), hashes.begin() + 4);
  auto earlier = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion, second);
  ASSERT_TRUE(earlier.has_value()) << earlier.error().message;
  EXPECT_EQ(earlier->measured_now, 3) << "a config the other batch measured was measured again";
  // The concluding tune finds every planned config measured.
  auto concluding = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion,
                         QuickOptions(testing::GeluPath(), 7));
  ASSERT_TRUE(concluding.has_value());
  EXPECT_EQ(concluding->measured_now, 0);
  EXPECT_EQ(concluding->measured, 7);
  ASSERT_TRUE(concluding->default_config.has_value());
  std::map<std::string, int> trials_per_config;
  for (const db::MeasurementRecord& trial : Trials(*fixture.store, *concluding)) {
    EXPECT_EQ(++trials_per_config[*db::ConfigHash(trial.config)], 1) << trial.config.dump();
  }
  TuneOptions stranger = QuickOptions(testing::GeluPath(), 0);
  stranger.configs = {std::string(64, 'f')};
  auto refused = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion, stranger);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("not in this fusion's space"), std::string::npos);
}

TEST(TuneTest, ACrashingCandidateIsRecordedAndTuningGoesOn) {
  setenv("TILESMITH_WORKER_FAULT", R"({"crash": {"threads_per_block": 32, "chunks": 2}})", 1);
  Fixture fixture;
  auto module = testing::LoadModule(testing::GeluPath());
  // Exhaustive order starts 32x1, 32x2 (crashes), 32x4, …
  auto result = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion,
                     QuickOptions(testing::GeluPath(), 5));
  unsetenv("TILESMITH_WORKER_FAULT");
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->measured, 5);
  EXPECT_EQ(result->failed, 1);
  EXPECT_EQ(result->worker_starts, 2);
  ASSERT_TRUE(result->best.has_value());
  EXPECT_NE(result->best->config["chunks"], 2);
  int crashes = 0;
  for (const db::MeasurementRecord& trial : Trials(*fixture.store, *result)) {
    if (trial.status == db::TrialStatus::kCrash) {
      ++crashes;
      EXPECT_EQ(trial.config["chunks"], 2);
      EXPECT_FALSE(trial.timing.has_value());
    }
  }
  EXPECT_EQ(crashes, 1);
}

TEST(TuneTest, ATimeLimitStopsAskingForBatchesButTheDefaultIsAlwaysMeasured) {
  Fixture fixture;
  auto module = testing::LoadModule(testing::GeluPath());
  TuneOptions options = QuickOptions(testing::GeluPath(), 0);
  options.time_limit_s = 1e-9;
  auto result = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion, options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->measured, 1);
  ASSERT_TRUE(result->default_config.has_value());
  EXPECT_EQ(result->best->config, result->default_config->config);
  EXPECT_DOUBLE_EQ(*result->speedup, 1.0);
}

TEST(TuneTest, LargeOutputsAreVerifiedAgainstTheFirstVerifiedCandidate) {
  Fixture fixture;
  auto module = testing::LoadModule(testing::GeluPath());
  TuneOptions options = QuickOptions(testing::GeluPath(), 3);
  options.evaluator_max_elements = 0;  // everything counts as large
  auto result = Tune(*module, fixture.host, fixture.store.get(), kCompilerVersion, options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->failed, 0);
  EXPECT_EQ(result->measured, 3);
}

TEST(TuneTest, CudaTargetsWithoutAGpuCompileAndPredictButTimeNothing) {
  auto module = testing::LoadModule(testing::GeluPath());
  Device h100 = *ResolveDevice("cuda:sm_90", "", DefaultDevicesDir());
  TuneOptions options;
  options.budget = 4;
  options.strategy = "exhaustive";
  auto result = Tune(*module, h100, nullptr, kCompilerVersion, options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_FALSE(result->timed);
  EXPECT_EQ(result->compiled + result->compile_failed, 4);
  EXPECT_EQ(result->measured, 0);
  EXPECT_EQ(result->predicted, result->compiled);
  // The best and default are predictions (all three times the one predicted time).
  ASSERT_TRUE(result->best.has_value());
  ASSERT_TRUE(result->default_config.has_value());
  EXPECT_GT(result->best->median_us, 0);
  EXPECT_EQ(result->best->p20_us, result->best->median_us);
  EXPECT_LE(result->best->median_us, result->default_config->median_us);
  EXPECT_EQ(result->model.rfind("analytic-gpu", 0), 0u) << result->model;
}

}  // namespace
}  // namespace tilesmith::tuner
