// Layout-free outputs: the menu of layouts, applying a choice to a fusion, the space that
// multiplies with them, and a real tune whose every layout choice is verified.
#include "tuner/layouts.h"

#include <gtest/gtest.h>

#include <set>

#include "compiler/hlo/parser.h"
#include "db/sqlite_store.h"
#include "tests/tuner/tuner_test_util.h"
#include "tuner/session.h"
#include "tuner/space.h"

namespace tilesmith::tuner {
namespace {

TEST(LayoutMenuTest, OwnLayoutFirstThenPermutationsThenTiles) {
  std::vector<std::string> menu = LayoutMenu(*hlo::ParseShape("f32[100,64,32]{1,2,0}"));
  ASSERT_EQ(menu.size(), 7u);
  EXPECT_EQ(menu[0], "{1,2,0}");
  EXPECT_EQ(std::set<std::string>(menu.begin(), menu.end()).size(), 7u);
  EXPECT_EQ(menu.back(), "{2,1,0:T(8,128)}");
  std::vector<std::string> bf16 = LayoutMenu(*hlo::ParseShape("bf16[16,256]{1,0}"));
  EXPECT_EQ(bf16,
            (std::vector<std::string>{"{1,0}", "{0,1}", "{1,0:T(8,128)}", "{1,0:T(8,128)(2,1)}"}));
}

TEST(LayoutsTest, FreeOutputsNameRealOutputs) {
  TS_SKIP_WITHOUT_CORPUS();
  auto module = testing::LoadModule(testing::TransposePath());
  ASSERT_NE(module, nullptr);
  auto outputs = ParseFreeOutputs("out0", *module->fusion());
  ASSERT_TRUE(outputs.has_value());
  EXPECT_EQ(*outputs, std::vector<int64_t>{0});
  auto bad = ParseFreeOutputs("out0,out3", *module->fusion());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("'out3' is not an output"), std::string::npos);
  EXPECT_TRUE(ParseFreeOutputs("", *module->fusion())->empty());
}

TEST(LayoutsTest, AChoiceChangesTheFusionOutputAndOnlyIt) {
  TS_SKIP_WITHOUT_CORPUS();
  auto module = testing::LoadModule(testing::TransposePath());
  ASSERT_NE(module, nullptr);
  auto changed = WithOutputLayouts(*module, {{"out0", "{0,1,2}"}});
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_EQ(hlo::ShapeToString((*changed)->fusion()->root()->shape()), "f32[100,64,32]{0,1,2}");
  EXPECT_EQ(hlo::ShapeToString((*changed)->fusion()->parameter(0)->shape()),
            hlo::ShapeToString(module->fusion()->parameter(0)->shape()));
  auto invalid = WithOutputLayouts(*module, {{"out0", "{0,0,2}"}});
  EXPECT_FALSE(invalid.has_value());
}

TEST(LayoutsTest, TheSpaceHoldsEveryConfigUnderEveryLayout) {
  auto module = testing::LoadModule(testing::GeluPath());
  ASSERT_NE(module, nullptr);
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  auto fixed = BuildSpace(*module, host.info, {});
  auto free = BuildSpace(*module, host.info, {0});
  ASSERT_TRUE(fixed.has_value() && free.has_value());
  EXPECT_EQ(free->variants.size(), 3u);  // {1,0}, {0,1}, {1,0:T(8,128)}
  EXPECT_EQ(free->candidates.size(), 3 * fixed->candidates.size());
  EXPECT_FALSE(fixed->candidates[0].config.contains(kLayoutsField));
  for (const Candidate& candidate : free->candidates) {
    ASSERT_TRUE(candidate.config.contains(kLayoutsField));
    EXPECT_EQ(EmitterConfig(candidate.config).contains(kLayoutsField), false);
  }
  const Candidate& default_candidate = free->candidates[free->default_index];
  EXPECT_EQ(default_candidate.config[kLayoutsField]["out0"], "{1,0}");
  EXPECT_EQ(default_candidate.variant, 0);
}

TEST(LayoutsTest, ATuneOverLayoutsVerifiesEveryChoice) {
  TS_SKIP_WITHOUT_CORPUS();
  testing::TempDir dir;
  auto store = db::SqliteStore::Open(dir.path() + "/results.db");
  ASSERT_TRUE(store.has_value());
  auto module = testing::LoadModule(testing::TransposePath());
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  TuneOptions options;
  options.strategy = "random";
  options.seed = 7;
  options.budget = 10;
  options.free_outputs = {0};
  options.measure.warmup_ms = 1;
  options.measure.budget_ms = 2;
  options.measure.flush_bytes = -1;
  options.worker_argv = testing::WorkerArgv(testing::TransposePath());
  auto result = Tune(*module, host, store->get(), "tilesmith-test", options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->measured, 10);
  EXPECT_EQ(result->failed, 0);
  std::set<std::string> layouts;
  auto trials = (*store)->Measurements({result->fingerprint, result->device_key, "tilesmith-test"});
  ASSERT_TRUE(trials.has_value());
  for (const db::MeasurementRecord& trial : *trials) {
    EXPECT_EQ(trial.status, db::TrialStatus::kOk) << trial.config.dump() << ": " << trial.message;
    layouts.insert(trial.config[kLayoutsField]["out0"].get<std::string>());
  }
  EXPECT_GE(layouts.size(), 3u);
}

}  // namespace
}  // namespace tilesmith::tuner
