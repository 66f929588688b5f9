// The results role (and the admin role's stats) on every store (store_factories.h): round
// trips of every record, and the queries the tuner and the service ask: best result, resume,
// listings, stats.
#include <gtest/gtest.h>

#include "db/schema.h"
#include "tests/db/store_factories.h"

namespace tilesmith::db {
namespace {

using nlohmann::json;
using testing::Failure;
using testing::H100;
using testing::Host;
using testing::Kernel;
using testing::StoreFactories;
using testing::StoreFactoryName;
using testing::Trial;

class ResultStoreContract : public testing::StoreContractTest {
 protected:
  void SetUp() override {
    StoreContractTest::SetUp();
    if (IsSkipped()) return;
    store_ = NewStore();
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->PutDevice(H100()).has_value());
    ASSERT_TRUE(store_->PutDevice(Host()).has_value());
    ASSERT_TRUE(store_->PutKernel(gelu_).has_value());
    ASSERT_TRUE(store_->PutKernel(softmax_).has_value());
  }

  // Records `batch`, failing the test on error; returns the records as stored.
  std::vector<MeasurementRecord> Record(std::vector<MeasurementRecord> batch) {
    auto result = store_->RecordBatch(batch);
    EXPECT_TRUE(result.has_value()) << result.error().message;
    if (!result) return {};
    for (size_t i = 0; i < batch.size(); ++i) batch[i].uid = result->uids[i];
    return batch;
  }

  std::optional<BestResult> BestOf(const KernelRecord& kernel, const DeviceRecord& device,
                                   const std::string& version = "tilesmith-test-1") {
    auto best = store_->Best({kernel.fingerprint, device.Key(), version});
    EXPECT_TRUE(best.has_value()) << best.error().message;
    return best ? *best : std::nullopt;
  }

  Store* store_ = nullptr;
  KernelRecord gelu_ = Kernel("gelu");
  KernelRecord softmax_ = Kernel("softmax");
};

TEST_P(ResultStoreContract, DevicesRoundTripUnderTheirKey) {
  EXPECT_EQ(H100().Key(),
            "cuda:sm_90, NVIDIA H100 80GB HBM3, 132 cores, 1980 MHz, 3352.5 GB/s, 52428800 B "
            "cache, driver 550.54, toolkit 12.4");
  EXPECT_EQ(Host().Key(),
            "host, AMD EPYC 7B13, 16 cores, 2450 MHz, 40 GB/s, 33554432 B cache, driver none, "
            "toolkit llvm-16");
  auto again = store_->PutDevice(H100());
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(*again) << "the device was stored already";
  auto stored = store_->GetDevice(H100().Key());
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  EXPECT_EQ(**stored, H100());
  auto devices = store_->ListDevices();
  ASSERT_TRUE(devices.has_value());
  EXPECT_EQ(*devices, (std::vector<DeviceRecord>{H100(), Host()}));
  auto missing = store_->GetDevice("cuda:sm_80, nothing");
  ASSERT_TRUE(missing.has_value());
  EXPECT_FALSE(missing->has_value());

  DeviceRecord other_driver = H100();
  other_driver.driver_version = "555.42";
  EXPECT_NE(other_driver.Key(), H100().Key()) << "a driver change is a different device";
}

TEST_P(ResultStoreContract, KernelsRoundTripAndAreChecked) {
  auto stored = store_->GetKernel(gelu_.fingerprint);
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  EXPECT_EQ(**stored, gelu_);

  KernelRecord renamed = gelu_;
  renamed.name = "gelu_again";
  auto added = store_->PutKernel(renamed);
  ASSERT_TRUE(added.has_value());
  EXPECT_FALSE(*added);
  EXPECT_EQ((*store_->GetKernel(gelu_.fingerprint))->name, "gelu") << "the first name is kept";

  KernelRecord tampered = Kernel("x");
  tampered.canonical_text += " ";
  auto rejected = store_->PutKernel(tampered);
  ASSERT_FALSE(rejected.has_value());
  EXPECT_NE(rejected.error().message.find("not the SHA-256 of its canonical text"),
            std::string::npos)
      << rejected.error().message;

  KernelRecord bad_format = Kernel("y");
  bad_format.source_format = "onnx";
  EXPECT_FALSE(store_->PutKernel(bad_format).has_value());
  KernelRecord bad_fingerprint = Kernel("z");
  bad_fingerprint.fingerprint = "ABC";
  EXPECT_FALSE(store_->PutKernel(bad_fingerprint).has_value());
}

TEST_P(ResultStoreContract, EveryMeasurementFieldRoundTrips) {
  MeasurementRecord ok = Trial(gelu_, H100(), {{"threads_per_block", 256}, {"vector", 4}}, 12.25);
  ok.is_default = true;
  ok.job_id = "job-7";
  ok.verification_error = 1.5e-7;
  ok.compile_stats["registers"] = 40;
  std::vector<MeasurementRecord> batch = {ok};
  for (TrialStatus status : AllTrialStatuses()) {
    if (status == TrialStatus::kOk) continue;
    batch.push_back(Failure(gelu_, H100(), {{"threads_per_block", batch.size() * 32}}, status,
                            "failed as " + std::string(TrialStatusName(status))));
  }
  batch.back().timing = Timing{1, 1, 1, 1, 1, {1}};  // a failure may still carry timings
  std::vector<MeasurementRecord> written = Record(batch);
  ASSERT_EQ(written.size(), batch.size());

  auto read = store_->Measurements({.fingerprint = gelu_.fingerprint});
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_EQ(read->size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    MeasurementRecord expected = written[i];
    expected.config_hash = *ConfigHash(expected.config);
    expected.measured_at = (*read)[i].measured_at;  // filled in by the store
    EXPECT_EQ((*read)[i], expected)
        << "measurement " << i << ": " << TrialStatusName(expected.status);
    EXPECT_EQ((*read)[i].measured_at.size(), 24u) << (*read)[i].measured_at;
  }
  auto other = store_->Measurements({.fingerprint = softmax_.fingerprint});
  ASSERT_TRUE(other.has_value());
  EXPECT_TRUE(other->empty());
}

TEST_P(ResultStoreContract, ConfigsAreStoredOnceInCanonicalForm) {
  json config = json::parse(R"({ "vector": 2, "chunks": 1, "blocks_y": {"a": 1, "B": [3, 2]} })");
  EXPECT_EQ(*CanonicalConfig(config), R"({"blocks_y":{"B":[3,2],"a":1},"chunks":1,"vector":2})");
  EXPECT_EQ(*ConfigHash(config), *ConfigHash(json::parse(R"({"chunks":1,"vector":2,
      "blocks_y":{"B":[3,2],"a":1}})")));
  EXPECT_FALSE(CanonicalConfig(json::array({1, 2})).has_value());
  Record({Trial(gelu_, H100(), config, 5), Trial(gelu_, H100(), config, 6),
          Trial(gelu_, Host(), config, 50)});
  auto configs = store_->MeasuredConfigs({gelu_.fingerprint, H100().Key(), "tilesmith-test-1"});
  ASSERT_TRUE(configs.has_value());
  ASSERT_EQ(configs->size(), 1u);
  EXPECT_EQ((*configs)[0].config_json, *CanonicalConfig(config));
  EXPECT_EQ((*configs)[0].trials, 2);
  auto stats = store_->Stats();
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->configs, 1) << "one row per fusion and config, whatever the device";
}

TEST_P(ResultStoreContract, ABatchIsAllOrNothing) {
  KernelRecord unknown = Kernel("never_put");
  auto result = store_->RecordBatch(std::vector<MeasurementRecord>{
      Trial(gelu_, H100(), {{"v", 1}}, 3), Trial(gelu_, H100(), {{"v", 2}}, 4),
      Trial(unknown, H100(), {{"v", 3}}, 5)});
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("measurement 2: kernel " + unknown.fingerprint +
                                        " is not in the store"),
            std::string::npos)
      << result.error().message;
  auto stored = store_->Measurements({});
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(stored->empty()) << "the first two trials must have been rolled back";

  MeasurementRecord untimed = Trial(gelu_, H100(), {{"v", 1}}, 3);
  untimed.timing.reset();
  result = store_->RecordBatch(std::vector<MeasurementRecord>{untimed});
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("status ok must carry its timing"), std::string::npos);

  MeasurementRecord unknown_device = Trial(gelu_, H100(), {{"v", 1}}, 3);
  unknown_device.key.device_key = "cuda:sm_80, somewhere";
  result = store_->RecordBatch(std::vector<MeasurementRecord>{unknown_device});
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("device 'cuda:sm_80, somewhere' is not in the store"),
            std::string::npos)
      << result.error().message;
}

TEST_P(ResultStoreContract, RecordingTheSameUidTwiceAddsNothing) {
  std::vector<MeasurementRecord> batch = {Trial(gelu_, H100(), {{"v", 1}}, 3),
                                          Trial(gelu_, H100(), {{"v", 2}}, 4)};
  batch[0].uid = "fixed-uid-0";
  auto first = store_->RecordBatch(batch);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->inserted, 2);
  EXPECT_EQ(first->uids[0], "fixed-uid-0");
  batch[1].uid = first->uids[1];
  auto second = store_->RecordBatch(batch);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->inserted, 0);
  EXPECT_EQ(store_->Measurements({})->size(), 2u);
}

TEST_P(ResultStoreContract, TheSameConfigUnderAnotherEmitterIsRefused) {
  Record({Trial(gelu_, H100(), {{"v", 1}}, 3)});
  MeasurementRecord other = Trial(gelu_, H100(), {{"v", 1}}, 3);
  other.emitter = "transpose";
  auto result = store_->RecordBatch(std::vector<MeasurementRecord>{other});
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("stored for emitter 'loop', not 'transpose'"),
            std::string::npos)
      << result.error().message;
}

TEST_P(ResultStoreContract, BestIsTheFastestVerifiedTrial) {
  MeasurementRecord wrong = Trial(gelu_, H100(), {{"v", 9}}, 0.5);
  wrong.status = TrialStatus::kWrongResult;  // fastest of all, and wrong
  MeasurementRecord red_zone = Trial(gelu_, H100(), {{"v", 10}}, 0.7);
  red_zone.status = TrialStatus::kRedZone;
  Record({Trial(gelu_, H100(), {{"v", 1}}, 8), Trial(gelu_, H100(), {{"v", 2}}, 4), wrong, red_zone,
          Failure(gelu_, H100(), {{"v", 3}}, TrialStatus::kCrash, "SIGSEGV"),
          Trial(gelu_, H100(), {{"v", 4}}, 6)});
  std::optional<BestResult> best = BestOf(gelu_, H100());
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->measurement.config, json({{"v", 2}}));
  EXPECT_EQ(best->measurement.timing->median_us, 4);
  EXPECT_EQ(best->kernel_name, "gelu");
  EXPECT_FALSE(best->default_median_us.has_value());

  EXPECT_FALSE(BestOf(softmax_, H100()).has_value()) << "nothing measured";
  Record({Failure(softmax_, H100(), {{"v", 1}}, TrialStatus::kTimeout, "10 s")});
  EXPECT_FALSE(BestOf(softmax_, H100()).has_value()) << "nothing verified";
}

TEST_P(ResultStoreContract, TiesGoToFewerRegistersThenConfigHash) {
  auto with_registers = [&](json config, std::optional<int> registers) {
    MeasurementRecord m = Trial(gelu_, H100(), std::move(config), 7);
    if (registers) {
      m.compile_stats["registers"] = *registers;
    } else {
      m.compile_stats.erase("registers");
    }
    return m;
  };
  std::vector<MeasurementRecord> tied = {
      with_registers({{"v", 1}}, 64), with_registers({{"v", 2}}, 32),
      with_registers({{"v", 3}}, 32), with_registers({{"v", 4}}, std::nullopt)};
  std::string low_hash = std::min(*ConfigHash(tied[1].config), *ConfigHash(tied[2].config));
  // Insertion order must not matter: record the ties in reverse.
  Record({tied[3], tied[2], tied[1], tied[0]});
  std::optional<BestResult> best = BestOf(gelu_, H100());
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->measurement.config_hash, low_hash);
  EXPECT_EQ(best->measurement.compile_stats["registers"], 32);

  // The same rows in another store in the other order give the same winner.
  Store* other = NewStore();
  ASSERT_TRUE(other->PutDevice(H100()) && other->PutKernel(gelu_));
  ASSERT_TRUE(other->RecordBatch(tied).has_value());
  auto other_best = other->Best({gelu_.fingerprint, H100().Key(), "tilesmith-test-1"});
  ASSERT_TRUE(other_best.has_value() && other_best->has_value());
  EXPECT_EQ((*other_best)->measurement.config_hash, low_hash);
}

TEST_P(ResultStoreContract, BestIsKeyedByDeviceAndCompilerVersion) {
  Record({Trial(gelu_, H100(), {{"v", 1}}, 5, "tilesmith-old"),
          Trial(gelu_, H100(), {{"v", 2}}, 9, "tilesmith-new"),
          Trial(gelu_, Host(), {{"v", 3}}, 90, "tilesmith-new"),
          Trial(softmax_, Host(), {{"v", 1}}, 70, "tilesmith-new")});
  auto best_new = BestOf(gelu_, H100(), "tilesmith-new");
  ASSERT_TRUE(best_new.has_value());
  EXPECT_EQ(best_new->measurement.config, json({{"v", 2}})) << "the old compiler's win is stale";
  EXPECT_EQ(BestOf(gelu_, H100(), "tilesmith-old")->measurement.config, json({{"v", 1}}));
  EXPECT_EQ(BestOf(gelu_, Host(), "tilesmith-new")->measurement.config, json({{"v", 3}}));

  auto all = store_->ListBest({});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 4u);
  auto host_new =
      store_->ListBest({.device_key = Host().Key(), .compiler_version = "tilesmith-new"});
  ASSERT_TRUE(host_new.has_value());
  ASSERT_EQ(host_new->size(), 2u);
  EXPECT_EQ((*host_new)[0].kernel_name, "gelu") << "ordered by kernel name";
  EXPECT_EQ((*host_new)[1].kernel_name, "softmax");
}

TEST_P(ResultStoreContract, BestCarriesTheDefaultConfigsTime) {
  MeasurementRecord default_trial = Trial(gelu_, H100(), {{"v", 4}}, 10);
  default_trial.is_default = true;
  Record({default_trial, Trial(gelu_, H100(), {{"v", 8}}, 4)});
  std::optional<BestResult> best = BestOf(gelu_, H100());
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->measurement.timing->median_us, 4);
  ASSERT_TRUE(best->default_median_us.has_value());
  EXPECT_EQ(*best->default_median_us, 10);
}

TEST_P(ResultStoreContract, MeasuredConfigsTellAResumedTuneWhatToSkip) {
  Record({Trial(gelu_, H100(), {{"v", 1}}, 5),
          Failure(gelu_, H100(), {{"v", 2}}, TrialStatus::kCompile, "ptxas: too many registers"),
          Trial(gelu_, H100(), {{"v", 1}}, 5.5), Trial(gelu_, Host(), {{"v", 3}}, 50),
          Trial(gelu_, H100(), {{"v", 4}}, 5, "tilesmith-other")});
  auto measured = store_->MeasuredConfigs({gelu_.fingerprint, H100().Key(), "tilesmith-test-1"});
  ASSERT_TRUE(measured.has_value()) << measured.error().message;
  ASSERT_EQ(measured->size(), 2u) << "failed configs are measured too; other keys are not";
  std::map<std::string, MeasuredConfig> by_json;
  for (const MeasuredConfig& config : *measured) by_json[config.config_json] = config;
  EXPECT_EQ(by_json[R"({"v":1})"].trials, 2);
  EXPECT_TRUE(by_json[R"({"v":1})"].any_ok);
  EXPECT_FALSE(by_json[R"({"v":2})"].any_ok);
  EXPECT_EQ(by_json[R"({"v":2})"].config_hash, *ConfigHash({{"v", 2}}));
}

TEST_P(ResultStoreContract, KernelsAreListedByDevice) {
  Record({Trial(gelu_, H100(), {{"v", 1}}, 5), Trial(gelu_, H100(), {{"v", 2}}, 4),
          Failure(gelu_, H100(), {{"v", 3}}, TrialStatus::kLaunch, "too many resources"),
          Trial(softmax_, Host(), {{"v", 1}}, 70)});
  auto all = store_->ListKernels({});
  ASSERT_TRUE(all.has_value()) << all.error().message;
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "gelu");
  EXPECT_EQ((*all)[0].measurements, 3);
  EXPECT_EQ((*all)[0].ok, 2);
  EXPECT_EQ((*all)[0].failed, 1);
  EXPECT_EQ((*all)[0].best_median_us, 4);
  auto on_h100 = store_->ListKernels({.device_key = H100().Key()});
  ASSERT_TRUE(on_h100.has_value());
  ASSERT_EQ(on_h100->size(), 1u);
  EXPECT_EQ((*on_h100)[0].fingerprint, gelu_.fingerprint);
  auto on_host = store_->ListKernels({.device_key = Host().Key()});
  ASSERT_EQ(on_host->size(), 1u);
  EXPECT_EQ((*on_host)[0].name, "softmax");
}

TEST_P(ResultStoreContract, StatsCountByStatus) {
  Record({Trial(gelu_, H100(), {{"v", 1}}, 5), Trial(gelu_, H100(), {{"v", 2}}, 4),
          Failure(gelu_, H100(), {{"v", 3}}, TrialStatus::kTimeout, "budget"),
          Failure(gelu_, H100(), {{"v", 4}}, TrialStatus::kTimeout, "budget"),
          Failure(gelu_, H100(), {{"v", 5}}, TrialStatus::kRedZone, "wrote past out0")});
  auto stats = store_->Stats();
  ASSERT_TRUE(stats.has_value()) << stats.error().message;
  EXPECT_EQ(stats->schema_version, kSchemaVersion);
  EXPECT_EQ(stats->devices, 2);
  EXPECT_EQ(stats->kernels, 2);
  EXPECT_EQ(stats->configs, 5);
  EXPECT_EQ(stats->measurements, 5);
  EXPECT_EQ(stats->by_status["ok"], 2);
  EXPECT_EQ(stats->by_status["timeout"], 2);
  EXPECT_EQ(stats->by_status["red_zone"], 1);
  EXPECT_EQ(stats->by_status["crash"], 0);
  EXPECT_EQ(stats->by_status.size(), AllTrialStatuses().size());
  EXPECT_EQ(stats->compiler_versions, std::vector<std::string>{"tilesmith-test-1"});
  auto storage = store_->StorageBytes();
  ASSERT_TRUE(storage.has_value()) << storage.error().message;
  EXPECT_GT(stats->database_bytes, 0);
  EXPECT_EQ(*storage, stats->database_bytes + stats->wal_bytes);
  EXPECT_GT(stats->database_bytes, 0);
  ASSERT_TRUE(store_->Vacuum().has_value());
  EXPECT_EQ(store_->Measurements({})->size(), 5u);
}

TEST_P(ResultStoreContract, DevicesAndKernelsResolveFromShortNames) {
  EXPECT_EQ(*ResolveDeviceKey(*store_, "cuda:sm_90"), H100().Key());
  EXPECT_EQ(*ResolveDeviceKey(*store_, "host"), Host().Key());
  EXPECT_EQ(*ResolveDeviceKey(*store_, "AMD EPYC 7B13"), Host().Key());
  EXPECT_EQ(*ResolveDeviceKey(*store_, H100().Key()), H100().Key());
  auto missing = ResolveDeviceKey(*store_, "cuda:sm_9");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find(H100().Key()), std::string::npos)
      << "lists the devices: " << missing.error().message;
  DeviceRecord h100_new_driver = H100();
  h100_new_driver.driver_version = "560.1";
  ASSERT_TRUE(store_->PutDevice(h100_new_driver).has_value());
  auto ambiguous = ResolveDeviceKey(*store_, "cuda:sm_90");
  ASSERT_FALSE(ambiguous.has_value());
  EXPECT_NE(ambiguous.error().message.find("matches several"), std::string::npos);

  EXPECT_EQ(*ResolveFingerprint(*store_, gelu_.fingerprint.substr(0, 8)), gelu_.fingerprint);
  EXPECT_EQ(*ResolveFingerprint(*store_, softmax_.fingerprint), softmax_.fingerprint);
  EXPECT_FALSE(ResolveFingerprint(*store_, "abc").has_value()) << "too short";
  auto unknown = ResolveFingerprint(*store_, "0000000000");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
}

// Repetition times are read back bit for bit, whatever their digits.
TEST_P(ResultStoreContract, RepetitionTimesRoundTripExactly) {
  MeasurementRecord trial = Trial(gelu_, Host(), {{"v", 2}}, 3);
  trial.timing->times_us = {
      0.1, 1.0 / 3, 12.25, 5e-324, 1.7976931348623157e308, 123456789.125, 2.2250738585072014e-308,
      7};
  Record({trial});
  auto read = store_->Measurements({});
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].timing->times_us, trial.timing->times_us);
}

INSTANTIATE_TEST_SUITE_P(Stores, ResultStoreContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db
