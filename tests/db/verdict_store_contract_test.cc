// Verdicts on every store (store_factories.h): a verdict round-trips with every round's
// timings, the newest of a key answers, keys without one answer none, a verdict changes no
// trial or best result, and a verdict for an unknown kernel or device is refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/db/store_factories.h"

namespace tilesmith::db::testing {
namespace {

VerdictRecord Judged(const KernelRecord& kernel, bool significant) {
  VerdictRecord v;
  v.key = {kernel.fingerprint, H100().Key(), "tilesmith-test-1"};
  v.best_config = {{"threads", 256}};
  v.chosen_config = significant ? v.best_config : nlohmann::json{{"threads", 128}};
  v.chosen_is_default = !significant;
  v.chosen_median_us = significant ? 2.0 : 2.35;
  v.default_median_us = 2.35;
  v.speedup = significant ? 1.175 : 1.0;
  v.speedup_low = significant ? 1.1 : 0.98;
  v.speedup_high = significant ? 1.25 : 1.04;
  v.confidence = 0.95;
  v.significant = significant;
  v.rounds = 12;
  v.method = "paired t on log ratios";
  v.reason = significant ? "faster" : "not significantly faster";
  v.details = {
      {"rounds", {{{"order", {1, 0}}, {"timings", {{{"index", 1}, {"times_us", {2.0, 2.1}}}}}}}}};
  v.job_id = "job-1";
  return v;
}

class VerdictStoreContract : public StoreContractTest {
 protected:
  Store* StoreWith(const KernelRecord& kernel) {
    Store* store = NewStore();
    EXPECT_TRUE(store->PutDevice(H100()).has_value());
    EXPECT_TRUE(store->PutKernel(kernel).has_value());
    return store;
  }
};

TEST_P(VerdictStoreContract, TheNewestVerdictOfAKeyAnswersWithEveryRound) {
  KernelRecord gelu = Kernel("gelu");
  KernelRecord softmax = Kernel("softmax");
  Store* store = StoreWith(gelu);
  ASSERT_TRUE(store->PutKernel(softmax).has_value());
  VerdictRecord first = Judged(gelu, true);
  VerdictRecord second = Judged(gelu, false);
  auto first_id = store->RecordVerdict(first);
  ASSERT_TRUE(first_id.has_value()) << first_id.error().message;
  auto second_id = store->RecordVerdict(second);
  ASSERT_TRUE(second_id.has_value()) << second_id.error().message;
  EXPECT_GT(*second_id, *first_id);

  std::vector<ResultKey> keys = {second.key, Judged(softmax, true).key, second.key};
  auto verdicts = store->Verdicts(keys);
  ASSERT_TRUE(verdicts.has_value()) << verdicts.error().message;
  ASSERT_EQ(verdicts->size(), 3u);
  ASSERT_TRUE((*verdicts)[0].has_value());
  EXPECT_FALSE((*verdicts)[1].has_value());
  ASSERT_TRUE((*verdicts)[2].has_value());
  const VerdictRecord& read = *(*verdicts)[0];
  EXPECT_EQ(read.id, *second_id);
  EXPECT_FALSE(read.significant);
  EXPECT_TRUE(read.chosen_is_default);
  EXPECT_EQ(read.chosen_config, second.chosen_config);
  EXPECT_EQ(read.best_config, second.best_config);
  EXPECT_EQ(read.best_config_hash, *ConfigHash(second.best_config));
  EXPECT_EQ(read.chosen_config_hash, *ConfigHash(second.chosen_config));
  EXPECT_EQ(read.speedup, 1.0);
  EXPECT_EQ(read.speedup_low, 0.98);
  EXPECT_EQ(read.speedup_high, 1.04);
  EXPECT_EQ(read.rounds, 12);
  EXPECT_EQ(read.reason, second.reason);
  EXPECT_EQ(read.details, second.details);
  EXPECT_EQ(read.job_id, "job-1");
  EXPECT_FALSE(read.decided_at.empty());
}

TEST_P(VerdictStoreContract, AnUnboundedIntervalRoundTripsAndShowsAsNull) {
  KernelRecord gelu = Kernel("gelu");
  Store* store = StoreWith(gelu);
  VerdictRecord v = Judged(gelu, false);
  v.rounds = 1;
  v.speedup_low = 0;
  v.speedup_high = std::numeric_limits<double>::infinity();
  ASSERT_TRUE(store->RecordVerdict(v).has_value());
  auto read = store->Verdicts(std::vector<ResultKey>{v.key});
  ASSERT_TRUE(read.has_value() && (*read)[0].has_value());
  EXPECT_TRUE(std::isinf((*read)[0]->speedup_high));
  EXPECT_TRUE(VerdictJson(*(*read)[0])["speedup_high"].is_null());
}

TEST_P(VerdictStoreContract, AVerdictChangesNoTrialAndNoBestResult) {
  KernelRecord gelu = Kernel("gelu");
  Store* store = StoreWith(gelu);
  ASSERT_TRUE(store->RecordVerdict(Judged(gelu, false)).has_value());
  auto measurements = store->Measurements({gelu.fingerprint});
  ASSERT_TRUE(measurements.has_value());
  EXPECT_TRUE(measurements->empty());
  auto best = store->Best(Judged(gelu, false).key);
  ASSERT_TRUE(best.has_value());
  EXPECT_FALSE(best->has_value());
}

TEST_P(VerdictStoreContract, UnknownKernelsDevicesAndBadVerdictsAreRefusedByName) {
  KernelRecord gelu = Kernel("gelu");
  Store* store = NewStore();
  ASSERT_TRUE(store->PutDevice(H100()).has_value());
  auto no_kernel = store->RecordVerdict(Judged(gelu, true));
  ASSERT_FALSE(no_kernel.has_value());
  EXPECT_NE(no_kernel.error().message.find(gelu.fingerprint), std::string::npos);
  ASSERT_TRUE(store->PutKernel(gelu).has_value());
  VerdictRecord elsewhere = Judged(gelu, true);
  elsewhere.key.device_key = "cuda:sm_00, nowhere";
  auto no_device = store->RecordVerdict(elsewhere);
  ASSERT_FALSE(no_device.has_value());
  EXPECT_NE(no_device.error().message.find("nowhere"), std::string::npos);
  VerdictRecord bad = Judged(gelu, true);
  bad.confidence = 1.5;
  auto refused = store->RecordVerdict(bad);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("confidence"), std::string::npos);
  bad = Judged(gelu, true);
  bad.speedup_low = 2;
  EXPECT_FALSE(store->RecordVerdict(bad).has_value());
}

INSTANTIATE_TEST_SUITE_P(Stores, VerdictStoreContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db::testing
