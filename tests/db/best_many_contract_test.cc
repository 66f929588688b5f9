// BestMany answers a batch of keys with what Best answers for each, on every store
// (store_factories.h): the same winner under the noise and resource rules, the same default
// time and kernel name, and none where Best has none (no trial, only failures, another device
// or compiler version), in the order asked, repeats included.
#include <gtest/gtest.h>

#include <random>

#include "tests/db/store_factories.h"

namespace tilesmith::db::testing {
namespace {

// Expects BestMany(keys) to equal Best(key) for every key, in order.
void ExpectSameAsBest(Store& store, const std::vector<ResultKey>& keys) {
  auto many = store.BestMany(keys);
  ASSERT_TRUE(many.has_value()) << many.error().message;
  ASSERT_EQ(many->size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    auto one = store.Best(keys[i]);
    ASSERT_TRUE(one.has_value()) << one.error().message;
    const std::optional<BestResult>& got = (*many)[i];
    ASSERT_EQ(got.has_value(), one->has_value()) << "key " << i << ": " << keys[i].fingerprint;
    if (!got) continue;
    EXPECT_EQ(got->measurement, (*one)->measurement) << "key " << i;
    EXPECT_EQ(got->measurement.key, keys[i]) << "key " << i;
    EXPECT_EQ(got->kernel_name, (*one)->kernel_name) << "key " << i;
    EXPECT_EQ(got->default_median_us, (*one)->default_median_us) << "key " << i;
  }
}

class BestManyContract : public StoreContractTest {};

TEST_P(BestManyContract, EveryKeyAnswersAsBestDoes) {
  Store* store = NewStore();
  ASSERT_TRUE(store->PutDevice(H100()) && store->PutDevice(Host()));
  std::mt19937 random(7);
  std::vector<KernelRecord> kernels;
  std::vector<MeasurementRecord> trials;
  for (int k = 0; k < 60; ++k) {
    kernels.push_back(Kernel("k" + std::to_string(k)));
    ASSERT_TRUE(store->PutKernel(kernels.back()).has_value());
    for (const DeviceRecord& device : {H100(), Host()}) {
      for (const char* version : {"tilesmith-test-1", "tilesmith-test-2"}) {
        int configs = static_cast<int>(random() % 6);  // some keys have no trial at all
        for (int c = 0; c < configs; ++c) {
          // Medians close enough to tie on many keys, so the noise band and the resource
          // rule both decide winners; some exactly equal, to reach the last tie-breakers.
          double median = 10.0 + static_cast<double>(random() % 8) * 0.05;
          MeasurementRecord trial = Trial(kernels.back(), device, {{"v", c}}, median, version);
          if (random() % 3 == 0) trial.timing->p80_us = median * (1 + (random() % 20) * 0.01);
          trial.compile_stats["registers"] = 16 + (random() % 4) * 8;
          int shape = static_cast<int>(random() % 5);
          if (shape == 0) trial.compile_stats.erase("registers");  // unknown registers
          if (shape == 1) trial.compile_stats["threads_per_block"] = 64 << (random() % 3);
          if (shape == 2) trial.compile_stats["shared_bytes"] = 1024 * (random() % 3);
          trial.is_default = random() % 4 == 0;
          if (k % 7 == 3) {  // keys whose every trial failed
            trials.push_back(
                Failure(kernels.back(), device, {{"v", c}}, TrialStatus::kCrash, "boom"));
            trials.back().key.compiler_version = version;
          } else {
            trials.push_back(trial);
          }
          if (random() % 5 == 0) {  // a failed trial beside the verified ones
            MeasurementRecord failed =
                Failure(kernels.back(), device, {{"v", c + 100}}, TrialStatus::kWrongResult, "x");
            failed.key.compiler_version = version;
            trials.push_back(failed);
          }
        }
      }
    }
  }
  ASSERT_TRUE(store->RecordBatch(trials).has_value());

  std::vector<ResultKey> keys;
  for (const KernelRecord& kernel : kernels) {
    for (const DeviceRecord& device : {H100(), Host()}) {
      for (const char* version : {"tilesmith-test-1", "tilesmith-test-2", "tilesmith-test-3"}) {
        keys.push_back({kernel.fingerprint, device.Key(), version});
      }
    }
  }
  keys.push_back({std::string(64, 'a'), Host().Key(), "tilesmith-test-1"});  // no kernel
  keys.push_back({kernels[0].fingerprint, "nowhere", "tilesmith-test-1"});   // no device
  keys.push_back({"not \"a\" fingerprint", Host().Key(), "tilesmith-test-1"});
  std::shuffle(keys.begin(), keys.end(), random);
  // Repeats, including one right after itself.
  keys.push_back(keys[3]);
  keys.push_back(keys[3]);
  ResultKey repeated = keys[20];
  keys.insert(keys.begin() + 10, repeated);
  ExpectSameAsBest(*store, keys);

  auto all = store->ListBest({});
  ASSERT_TRUE(all.has_value());
  EXPECT_GT(all->size(), 100u) << "the data should give many keys a winner";
}

TEST_P(BestManyContract, ExactTiesGoToTheViewsTieBreakers) {
  Store* store = NewStore();
  ASSERT_TRUE(store->PutDevice(Host()).has_value());
  KernelRecord kernel = Kernel("tied");
  ASSERT_TRUE(store->PutKernel(kernel).has_value());
  std::vector<MeasurementRecord> trials;
  for (int c = 0; c < 6; ++c) {
    // Equal medians and resources: only the config hash (then time, uid) decides. The
    // fastest's own band differs per trial, so the one picked as fastest matters too.
    MeasurementRecord trial = Trial(kernel, Host(), {{"v", c}}, 20.0);
    trial.timing->p20_us = 20.0 - c * 0.3;
    trial.timing->p80_us = 20.0 + c * 0.3;
    trials.push_back(trial);
  }
  MeasurementRecord slower = Trial(kernel, Host(), {{"v", 9}}, 20.5);  // in some bands only
  slower.compile_stats["registers"] = 8;
  trials.push_back(slower);
  ASSERT_TRUE(store->RecordBatch(trials).has_value());
  ExpectSameAsBest(*store, {{kernel.fingerprint, Host().Key(), "tilesmith-test-1"}});
}

TEST_P(BestManyContract, NoKeysNoAnswers) {
  Store* store = NewStore();
  auto many = store->BestMany({});
  ASSERT_TRUE(many.has_value()) << many.error().message;
  EXPECT_TRUE(many->empty());
}

TEST_P(BestManyContract, ManyDistinctKeysAreEachAnswered) {
  // A batch as the service sends it: hundreds of fusions with one trial each.
  Store* store = NewStore();
  ASSERT_TRUE(store->PutDevice(Host()).has_value());
  std::vector<MeasurementRecord> trials;
  std::vector<ResultKey> keys;
  for (int k = 0; k < 300; ++k) {
    KernelRecord kernel = Kernel("fusion " + std::to_string(k));
    ASSERT_TRUE(store->PutKernel(kernel).has_value());
    trials.push_back(Trial(kernel, Host(), {{"v", k % 3}}, 5.0 + k % 7));
    keys.push_back({kernel.fingerprint, Host().Key(), "tilesmith-test-1"});
  }
  ASSERT_TRUE(store->RecordBatch(trials).has_value());
  auto many = store->BestMany(keys);
  ASSERT_TRUE(many.has_value()) << many.error().message;
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE((*many)[i].has_value()) << i;
    EXPECT_EQ((*many)[i]->measurement.key, keys[i]);
  }
  ExpectSameAsBest(*store, keys);
}

INSTANTIATE_TEST_SUITE_P(Stores, BestManyContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db::testing
