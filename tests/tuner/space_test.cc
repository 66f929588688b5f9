// The search space and device descriptions: every config accounted for (valid or pruned
// with a reason), the default always a candidate, datasheet files that load and key.
#include "tuner/space.h"

#include <gtest/gtest.h>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/cuda_toolkit.h"
#include "db/records.h"
#include "tests/tuner/tuner_test_util.h"
#include "tuner/cuda_driver.h"
#include "tuner/device.h"

namespace tilesmith::tuner {
namespace {

using testing::LoadModule;

TEST(DeviceTest, EveryGpuAndHostDescriptionLoads) {
  std::vector<std::string> ids = ListDeviceIds(DefaultDevicesDir());
  for (const char* expected : {"a100", "h100_pcie", "h100_sxm", "h200", "host", "l4", "rtx4090"}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), expected), ids.end()) << expected;
  }
  for (const std::string& id : ids) {
    auto device = LoadDeviceFile(DefaultDevicesDir() + "/" + id + ".json");
    ASSERT_TRUE(device.has_value()) << device.error().message;
    EXPECT_TRUE(db::ValidateDevice(device->record).has_value()) << id;
    EXPECT_GT(device->cache_bytes, 0) << id;
    EXPECT_GT(device->info.sm_count, 0) << id;
  }
}

TEST(DeviceTest, TargetsPickTheirRepresentativePartAndKeysDiffer) {
  auto h100 = ResolveDevice("cuda:sm_90", "", DefaultDevicesDir());
  ASSERT_TRUE(h100.has_value()) << h100.error().message;
  EXPECT_EQ(h100->id, "h100_sxm");
  EXPECT_EQ(h100->info.sm_count, 132);
  EXPECT_TRUE(h100->record.Key().starts_with("cuda:sm_90, NVIDIA H100 SXM5"));
  auto h200 = ResolveDevice("cuda:sm_90", "h200", DefaultDevicesDir());
  ASSERT_TRUE(h200.has_value());
  // Same architecture, different bandwidth: never the same results key.
  EXPECT_NE(h100->record.Key(), h200->record.Key());
  EXPECT_EQ(ResolveDevice("cuda:sm_80", "", DefaultDevicesDir())->id, "a100");
  // Little's law figures for the loop emitter's launch shapes: a latency where one is
  // known, the block limit of compute capability 8.9.
  EXPECT_EQ(h100->info.memory_latency_ns, 400);
  EXPECT_EQ(h200->info.memory_latency_ns, 400);
  EXPECT_EQ(ResolveDevice("cuda:sm_80", "", DefaultDevicesDir())->info.memory_latency_ns, 0);
  EXPECT_EQ(ResolveDevice("cuda:sm_89", "l4", DefaultDevicesDir())->info.max_blocks_per_sm, 24);
  EXPECT_EQ(h100->info.max_blocks_per_sm, 32);
  auto host = ResolveDevice("host", "", DefaultDevicesDir());
  ASSERT_TRUE(host.has_value());
  EXPECT_TRUE(host->record.Key().starts_with("host, "));
  EXPECT_GT(host->info.simd_bytes, 0);
}

// The key names what makes the code (LLVM for the host, nvJitLink's CUDA for cubins) and,
// only where this machine's GPU is the one timed, its driver.
TEST(DeviceTest, KeysNameTheToolkitAndTheDriverOnlyWhereThisGpuIsTimed) {
  auto host = ResolveDevice("host", "", DefaultDevicesDir());
  ASSERT_TRUE(host.has_value());
  EXPECT_TRUE(host->record.toolkit_version.starts_with("LLVM ")) << host->record.toolkit_version;
  EXPECT_EQ(host->record.driver_version, "");
  EXPECT_NE(host->record.Key().find(", toolkit LLVM "), std::string::npos) << host->record.Key();

  auto h100 = ResolveDevice("cuda:sm_90", "", DefaultDevicesDir());
  ASSERT_TRUE(h100.has_value());
  if (codegen::HaveNvJitLink()) {
    EXPECT_TRUE(h100->record.toolkit_version.starts_with("CUDA ")) << h100->record.Key();
  }
  if (GpuDriverVersion().empty()) {
    EXPECT_EQ(h100->record.driver_version, "");
    EXPECT_NE(h100->record.Key().find("driver none"), std::string::npos);
  }
}

TEST(DeviceTest, MismatchedOrMissingDescriptionsAreErrorsThatSayWhy) {
  auto wrong = ResolveDevice("cuda:sm_80", "h100_sxm", DefaultDevicesDir());
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message.find("not cuda:sm_80"), std::string::npos)
      << wrong.error().message;
  auto missing = ResolveDevice("host", "no_such_device", DefaultDevicesDir());
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("no_such_device.json"), std::string::npos);
  EXPECT_FALSE(ResolveDevice("tpu", "", DefaultDevicesDir()).has_value());
}

TEST(SpaceTest, EveryConfigIsACandidateOrPrunedWithAReasonAndTheDefaultIsIn) {
  TS_SKIP_WITHOUT_CORPUS();
  for (const std::string& path : {testing::GeluPath(), testing::TransposePath()}) {
    auto module = LoadModule(path);
    ASSERT_NE(module, nullptr);
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    auto device = ResolveDevice("cuda:sm_90", "", DefaultDevicesDir());
    auto space = BuildSpace(analysis, device->info);
    ASSERT_TRUE(space.has_value()) << space.error().message;
    EXPECT_GT(space->candidates.size(), 1u) << path;
    int64_t pruned = 0;
    for (const auto& [reason, count] : space->pruned_by_reason) pruned += count;
    EXPECT_EQ(pruned, static_cast<int64_t>(space->pruned.size()));
    for (const PrunedConfig& entry : space->pruned) EXPECT_FALSE(entry.reason.empty());
    ASSERT_GE(space->default_index, 0);
    EXPECT_TRUE(space->candidates[space->default_index].is_default);
    int64_t defaults = 0;
    for (const Candidate& candidate : space->candidates) {
      defaults += candidate.is_default;
      EXPECT_EQ(space->Find(candidate.config_hash),
                &candidate - space->candidates.data());  // hashes are unique
    }
    EXPECT_EQ(defaults, 1);
  }
}

TEST(SpaceTest, SmallDevicesPruneWhatTheyCannotLaunch) {
  auto module = LoadModule(testing::GeluPath());
  ASSERT_NE(module, nullptr);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto device = ResolveDevice("cuda:sm_90", "", DefaultDevicesDir());
  emitters::DeviceInfo small = device->info;
  small.max_threads_per_block = 256;
  auto space = BuildSpace(analysis, small);
  ASSERT_TRUE(space.has_value());
  EXPECT_FALSE(space->pruned.empty());
  for (const Candidate& candidate : space->candidates) {
    EXPECT_LE(candidate.config["threads_per_block"].get<int64_t>(), 256);
  }
  ASSERT_EQ(space->pruned_by_reason.size(), 1u);
  EXPECT_EQ(space->pruned_by_reason.begin()->first, "threads_per_block=N is outside [N, N]");
}

TEST(SpaceTest, ReasonClassesReplaceNumbers) {
  EXPECT_EQ(ReasonClass("vector=8 splits bytes of 4-bit outputs"),
            "vector=N splits bytes of N-bit outputs");
  EXPECT_EQ(ReasonClass("no numbers"), "no numbers");
}

}  // namespace
}  // namespace tilesmith::tuner
