// The builder: a host build counts what the optimised code of each block executes and
// records it in the compile statistics the database keeps, as the model reads them back.
#include "tuner/builder.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/emitters/emitter_registry.h"
#include "tests/tuner/tuner_test_util.h"
#include "tuner/device.h"
#include "tuner/space.h"

namespace tilesmith::tuner {
namespace {

// A stopped tune does not wait for a batch's compiles: once cancelled, nothing more starts,
// and what was skipped says so (never a compile failure).
TEST(BuilderTest, ACancelledBatchStartsNoMoreCompiles) {
  auto module = testing::LoadModule(testing::GeluPath());
  auto device = ResolveDevice("host", "", DefaultDevicesDir());
  ASSERT_TRUE(device.has_value());
  auto space = BuildSpace(*module, device->info, {});
  ASSERT_TRUE(space.has_value()) << space.error().message;
  std::vector<BuildRequest> requests;
  for (size_t i = 0; i < std::min<size_t>(4, space->candidates.size()); ++i) {
    const Candidate& candidate = space->candidates[i];
    requests.push_back({&space->AnalysisOf(candidate), EmitterConfig(candidate.config)});
  }
  std::vector<BuildResult> built =
      BuildBatch(requests, *MakeBackend(*device), 2, [] { return true; });
  ASSERT_EQ(built.size(), requests.size());
  for (const BuildResult& result : built) {
    EXPECT_FALSE(result.ok);
    EXPECT_EQ(result.message, kBuildCancelled);
  }
}

TEST(BuilderTest, HostBuildsRecordTheCodeEachBlockExecutes) {
  auto module = testing::LoadModule(testing::GeluPath());
  auto device = ResolveDevice("host", "", DefaultDevicesDir());
  ASSERT_TRUE(device.has_value());
  auto space = BuildSpace(*module, device->info, {});
  ASSERT_TRUE(space.has_value()) << space.error().message;
  ASSERT_GE(space->candidates.size(), 2u);
  std::vector<BuildRequest> requests;
  for (size_t i = 0; i < 2; ++i) {
    const Candidate& candidate = space->candidates[i];
    requests.push_back({&space->AnalysisOf(candidate), EmitterConfig(candidate.config)});
  }
  std::vector<BuildResult> built = BuildBatch(requests, *MakeBackend(*device), 2);
  ASSERT_EQ(built.size(), 2u);
  for (size_t i = 0; i < built.size(); ++i) {
    ASSERT_TRUE(built[i].ok) << built[i].message;
    costmodel::ResourceUsage usage = built[i].stats.usage;
    EXPECT_TRUE(usage.has_host_code()) << built[i].stats.ToJson().dump();
    EXPECT_FALSE(usage.has_cubin());
    EXPECT_GT(usage.executed_memory, 0);
    EXPECT_LE(usage.executed_memory, usage.executed_instructions);
    // The same count as counting the kernel directly.
    auto kernel = emitters::EmitKernel(*requests[i].analysis, requests[i].config, device->info);
    ASSERT_TRUE(kernel.has_value());
    auto counted = CountHostUsage(*kernel);
    ASSERT_TRUE(counted.has_value()) << counted.error().message;
    EXPECT_DOUBLE_EQ(counted->executed_instructions, usage.executed_instructions);
  }
}

}  // namespace
}  // namespace tilesmith::tuner
