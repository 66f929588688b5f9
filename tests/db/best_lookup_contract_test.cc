// One key's best result (Best) names the same winner as the listing of every key (ListBest),
// on every store (store_factories.h). That SQLite reads it through an index is
// tests/db/sqlite_store_test.cc.
#include <gtest/gtest.h>

#include "tests/db/store_factories.h"

namespace tilesmith::db::testing {
namespace {

class BestLookupContract : public StoreContractTest {};

TEST_P(BestLookupContract, OneKeyMatchesTheViewForEveryKey) {
  Store* store = NewStore();
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

INSTANTIATE_TEST_SUITE_P(Stores, BestLookupContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db::testing
