// Noise-aware winners in real host tunes: the top contenders and the default re-timed in
// paired rounds through the tune's own worker, the verdict in the result and in the SQLite
// store (read back from the file), a winner within noise reported as the default.
#include "tuner/confirm_winner.h"

#include <gtest/gtest.h>

#include "db/sqlite_store.h"
#include "tests/tuner/tuner_test_util.h"

namespace tilesmith::tuner {
namespace {

constexpr char kCompilerVersion[] = "tilesmith-test";

TuneOptions ConfirmingOptions(int64_t budget, int64_t top_k) {
  TuneOptions options;
  options.budget = budget;
  options.strategy = "exhaustive";
  options.batch_size = 4;
  options.measure.warmup_ms = 1;
  options.measure.budget_ms = 3;
  options.measure.flush_bytes = -1;
  options.worker_argv = testing::WorkerArgv(testing::GeluPath());
  options.confirm.top_k = top_k;
  options.confirm.time_s = 1.5;
  return options;
}

std::optional<db::VerdictRecord> StoredVerdict(const std::string& path, const TuneResult& result) {
  auto store = db::SqliteStore::Open(path, {.mode = db::sqlite::OpenMode::kReadOnly});
  EXPECT_TRUE(store.has_value()) << store.error().message;
  std::vector<db::ResultKey> keys = {
      {result.fingerprint, result.device_key, result.compiler_version}};
  auto verdicts = (*store)->Verdicts(keys);
  EXPECT_TRUE(verdicts.has_value());
  return (*verdicts)[0];
}

TEST(ConfirmWinnerTest, AHostTuneCarriesAVerdictThatTheStoreKeepsWithEveryRound) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/results.db";
  auto store = *db::SqliteStore::Open(path);
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  auto module = testing::LoadModule(testing::GeluPath());
  auto result = Tune(*module, host, store.get(), kCompilerVersion, ConfirmingOptions(6, 3));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_TRUE(result->verdict.has_value());
  const TuneVerdict& verdict = *result->verdict;
  EXPECT_EQ(verdict.contenders, 3);
  EXPECT_GE(verdict.rounds, 2);
  EXPECT_EQ(verdict.confidence, 0.95);
  EXPECT_LE(verdict.speedup_low, verdict.speedup_high);
  ASSERT_TRUE(result->speedup.has_value());
  EXPECT_EQ(*result->speedup, verdict.speedup);
  EXPECT_FALSE(verdict.reason.empty());
  if (verdict.significant) {
    EXPECT_GT(verdict.speedup_low, 1);
    EXPECT_FALSE(verdict.reported_as_default);
    EXPECT_NE(result->best->config, result->default_config->config);
  } else {
    // Reported as the default, the speedup 1, inside the contender's interval.
    EXPECT_TRUE(verdict.reported_as_default);
    EXPECT_EQ(verdict.speedup, 1.0);
    EXPECT_LE(verdict.speedup_low, 1.0);
    EXPECT_GE(verdict.speedup_high, 1.0);
    EXPECT_EQ(result->best->config, result->default_config->config);
    EXPECT_NE(verdict.reason.find("95%"), std::string::npos) << verdict.reason;
  }

  // The verdict read back from the file, with every round's timings.
  store.reset();
  std::optional<db::VerdictRecord> stored = StoredVerdict(path, *result);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->significant, verdict.significant);
  EXPECT_EQ(stored->speedup, verdict.speedup);
  EXPECT_EQ(stored->speedup_low, verdict.speedup_low);
  EXPECT_EQ(stored->rounds, verdict.rounds);
  EXPECT_EQ(stored->reason, verdict.reason);
  EXPECT_EQ(stored->chosen_config, result->best->config);
  EXPECT_EQ(stored->chosen_is_default, verdict.reported_as_default);
  const nlohmann::json& rounds = stored->details["rounds"];
  ASSERT_GE(static_cast<int64_t>(rounds.size()), verdict.rounds);
  for (const nlohmann::json& round : rounds) {
    EXPECT_EQ(round["order"].size(), 4u) << "the default and three contenders, every round";
    for (const nlohmann::json& timing : round["timings"]) {
      if (timing["ok"] == true) {
        EXPECT_GE(timing["times_us"].size(), 3u);
      }
    }
  }
  EXPECT_EQ(stored->details["candidates"].size(), 4u);
  EXPECT_TRUE(stored->details["candidates"][0]["is_default"].get<bool>());
  // Confirmation adds no trial: the search measured six configs, once each.
  auto reopened = *db::SqliteStore::Open(path);
  auto trials = reopened->Measurements({result->fingerprint});
  ASSERT_TRUE(trials.has_value());
  EXPECT_EQ(trials->size(), 6u);
}

TEST(ConfirmWinnerTest, TheDefaultAsTheOnlyWinnerIsReportedAsTheDefaultWithSpeedupOne) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/results.db";
  auto store = *db::SqliteStore::Open(path);
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  auto module = testing::LoadModule(testing::GeluPath());
  auto result = Tune(*module, host, store.get(), kCompilerVersion, ConfirmingOptions(1, 5));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_TRUE(result->verdict.has_value());
  EXPECT_EQ(result->best->config, result->default_config->config);
  EXPECT_FALSE(result->search_best.has_value());
  EXPECT_EQ(result->verdict->speedup, 1.0);
  EXPECT_EQ(*result->speedup, 1.0);
  EXPECT_FALSE(result->verdict->significant);
  EXPECT_TRUE(result->verdict->reported_as_default);
  EXPECT_EQ(result->verdict->contenders, 0);
  store.reset();
  std::optional<db::VerdictRecord> stored = StoredVerdict(path, *result);
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(stored->chosen_is_default);
  EXPECT_FALSE(stored->significant);
  EXPECT_EQ(stored->speedup, 1.0);
}

TEST(ConfirmWinnerTest, ConfirmTopZeroLeavesTheVerdictUnknown) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/results.db";
  auto store = *db::SqliteStore::Open(path);
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  auto module = testing::LoadModule(testing::GeluPath());
  auto result = Tune(*module, host, store.get(), kCompilerVersion, ConfirmingOptions(3, 0));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_FALSE(result->verdict.has_value());
  store.reset();
  EXPECT_FALSE(StoredVerdict(path, *result).has_value());
}

TEST(ConfirmWinnerTest, TheDefaultTimeIsATenthOfTheSearchWithinBounds) {
  EXPECT_EQ(ConfirmTime(0), 3.0);
  EXPECT_EQ(ConfirmTime(100), 10.0);
  EXPECT_EQ(ConfirmTime(3600), 30.0);
}

}  // namespace
}  // namespace tilesmith::tuner
