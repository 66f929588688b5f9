// One key's best result is read without scanning every trial (the service answers queries
// with it), and names the same winner as the unfiltered best_results view.
#include <gtest/gtest.h>

#include "db/schema.h"
#include "db_test_util.h"

namespace tilesmith::db::testing {
namespace {

TEST(BestLookupTest, OneKeyMatchesTheViewForEveryKey) {
  TempDir dir;
  auto store = OpenStore(dir.File("best.db"));
  ASSERT_TRUE(store->PutDevice(H100()) && store->PutDevice(Host()));
  std::vector<KernelRecord> kernels;
  std::vector<MeasurementRecord> trials;
  for (int k = 0; k < 40; ++k) {
    kernels.push_back(Kernel("k" + std::to_string(k)));
    ASSERT_TRUE(store->PutKernel(kernels.back()).has_value());
    for (const DeviceRecord& device : {H100(), Host()}) {
      for (int c = 0; c < 5; ++c) {
        // Medians close enough to tie on some keys, so the resource rule matters too.
        MeasurementRecord trial =
            Trial(kernels.back(), device, {{"v", c}}, 10.0 + ((k * 7 + c * 3) % 11) * 0.05);
        trial.compile_stats["registers"] = 16 + ((k + c) % 4) * 8;
        trial.is_default = c == 0;
        trials.push_back(trial);
      }
    }
  }
  trials.push_back(Failure(kernels[0], Host(), {{"v", 9}}, TrialStatus::kCrash, "boom"));
  ASSERT_TRUE(store->RecordBatch(trials).has_value());
  auto all = store->ListBest({});
  ASSERT_TRUE(all.has_value()) << all.error().message;
  ASSERT_EQ(all->size(), 80u);
  for (const BestResult& expected : *all) {
    auto best = store->Best(expected.measurement.key);
    ASSERT_TRUE(best.has_value() && best->has_value());
    EXPECT_EQ((*best)->measurement, expected.measurement);
    EXPECT_EQ((*best)->default_median_us, expected.default_median_us);
    EXPECT_EQ((*best)->kernel_name, expected.kernel_name);
    auto listed = store->ListBest({expected.measurement.key.fingerprint});
    ASSERT_TRUE(listed.has_value());
    EXPECT_EQ(listed->size(), 2u);
  }
  EXPECT_FALSE(store->Best({kernels[0].fingerprint, "nowhere", "tilesmith-test-1"})->has_value());
}

TEST(BestLookupTest, AKeyFilterReadsThatKeysTrialsThroughTheIndex) {
  TempDir dir;
  OpenStore(dir.File("plan.db"));
  auto connection = sqlite::Connection::Open(dir.File("plan.db"), sqlite::OpenMode::kReadOnly, 100);
  ASSERT_TRUE(connection.has_value());
  auto plan = (*connection)
                  ->Prepare("EXPLAIN QUERY PLAN SELECT * FROM (" +
                            BestResultsQuery("m.fingerprint = ? AND m.device_key = ? AND "
                                             "m.compiler_version = ?") +
                            ")");
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  std::string steps;
  while (*plan->Step()) steps += plan->Text(3) + "\n";
  EXPECT_NE(steps.find("SEARCH m USING INDEX measurements_by_key"), std::string::npos) << steps;
  EXPECT_EQ(steps.find("SCAN m"), std::string::npos) << steps;
}

}  // namespace
}  // namespace tilesmith::db::testing
