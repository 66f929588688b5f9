// The loop emitter's launch shapes through Little's law: bytes in flight per SM against the
// H100's memory latency x bandwidth, grids that fill every SM, the shapes the search space
// gains from that rule, and vector 16 for 1-byte elements.
#include "compiler/emitters/loop_launch.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::emitters {
namespace {

struct Fusion {
  std::unique_ptr<hlo::HloModule> module;
  analysis::FusionAnalysis analysis;
};

Fusion Analyze(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  Fusion fusion{std::move(*module), {}};
  fusion.analysis = analysis::AnalyzeFusion(*fusion.module->fusion());
  return fusion;
}

// x + y over `shape`: two inputs and one output of its type.
Fusion Add(const std::string& shape) {
  return Analyze("f {\n  x = " + shape + " parameter(0)\n  y = " + shape +
                 " parameter(1)\n  ROOT a = " + shape + " add(x, y)\n}\n");
}

const DeviceInfo& H100() {
  static const DeviceInfo device = DeviceInfo::ForTarget(*Target::Parse("cuda:sm_90"));
  return device;
}

TEST(LoopLaunchTest, LittlesLawPerSm) {
  // 400 ns x 3350 GB/s over 132 SMs.
  EXPECT_NEAR(LatencyBytesPerSm(H100()), 400.0 * 3350 / 132, 1e-6);
  DeviceInfo unknown = H100();
  unknown.memory_latency_ns = 0;
  EXPECT_EQ(LatencyBytesPerSm(unknown), 0);
  EXPECT_EQ(ResidentLoopBlocksPerSm(128, H100()), 16);
  EXPECT_EQ(ResidentLoopBlocksPerSm(32, H100()), 32);  // the block limit, not the threads'
  EXPECT_EQ(ResidentLoopBlocksPerSm(1024, H100()), 2);
}

TEST(LoopLaunchTest, InputBytesCountEveryInputAndScaleBroadcasts) {
  Fusion add = Add("f32[1024,1024]");
  EXPECT_DOUBLE_EQ(LoopInputBytesPerElement(add.analysis, 1 << 20), 8.0);
  Fusion scaled = Analyze(R"(f {
  x = bf16[1024,1024] parameter(0)
  s = bf16[1024] parameter(1)
  b = bf16[1024,1024] broadcast(s), dimensions={1}
  ROOT m = bf16[1024,1024] multiply(x, b)
})");
  EXPECT_DOUBLE_EQ(LoopInputBytesPerElement(scaled.analysis, 1 << 20), 2.0 + 2.0 / 1024);
}

TEST(LoopLaunchTest, BytesInFlightCoverTheLatencyOrNot) {
  // 16 MB: f32 x + y over 1,398,101 elements (two 5.6 MB inputs, one output).
  int64_t elements = 1398101;
  double bytes = 8;
  // XLA's 128 threads x 4: 2,731 blocks fill the 132 x 16 slots; 16 x 128 x 4 x 8 bytes =
  // 64 KiB in flight per SM against 10 KB needed.
  LoopLaunchFacts xla = DescribeLoopLaunch({128, 4, 1, 1}, elements, bytes, H100());
  EXPECT_EQ(xla.blocks, 2731);
  EXPECT_EQ(xla.blocks_per_sm, 16);
  EXPECT_TRUE(xla.fills_all_sms);
  EXPECT_DOUBLE_EQ(xla.bytes_in_flight_per_sm, 2112.0 * 128 * 4 * 8 / 132);
  EXPECT_TRUE(xla.covers_latency);
  // 32-thread blocks of one element: 32 resident blocks hold 1,024 threads x 8 bytes.
  LoopLaunchFacts tiny = DescribeLoopLaunch({32, 1, 1, 1}, elements, bytes, H100());
  EXPECT_TRUE(tiny.fills_all_sms);
  EXPECT_DOUBLE_EQ(tiny.bytes_in_flight_per_sm, 32.0 * 32 * 8);
  EXPECT_FALSE(tiny.covers_latency);
  // A few large blocks leave SMs idle.
  LoopLaunchFacts few = DescribeLoopLaunch({1024, 8, 4, 1}, elements, bytes, H100());
  EXPECT_EQ(few.blocks, 43);
  EXPECT_FALSE(few.fills_all_sms);
}

TEST(LoopLaunchTest, ASmallFusionNeedsOnlyAllItsReadsInFlight) {
  // 1 MB: f32 x + y over 87,381 elements; all reads spread over 132 SMs are 5.3 KB each,
  // less than the 10 KB latency x bandwidth.
  int64_t elements = 87381;
  LoopLaunchFacts spread = DescribeLoopLaunch({128, 1, 1, 1}, elements, 8, H100());
  EXPECT_DOUBLE_EQ(spread.bytes_needed_per_sm, elements * 8.0 / 132);
  EXPECT_TRUE(spread.covers_latency);
  EXPECT_FALSE(spread.fills_all_sms);
}

// Every shape the rule proposes covers the latency and gives every SM work; more than one
// chunk per thread only where the grid still fills every SM's slots.
void ExpectCoveringShapes(const std::vector<LoopConfig>& configs, int64_t elements, double bytes) {
  ASSERT_FALSE(configs.empty());
  for (const LoopConfig& config : configs) {
    LoopLaunchFacts facts = DescribeLoopLaunch(config, elements, bytes, H100());
    EXPECT_TRUE(facts.covers_latency) << config.ToJson();
    EXPECT_GE(facts.blocks, H100().sm_count) << config.ToJson();
    if (config.chunks > 1) {
      EXPECT_TRUE(facts.fills_all_sms) << config.ToJson();
    }
  }
}

TEST(LoopLaunchTest, TheRuleProposesShapesThatCoverTheLatencyAndFillTheSms) {
  std::vector<int64_t> vectors = {1, 2, 4, 8};
  int64_t large = 1398101;  // 16 MB of f32 x + y
  std::vector<LoopConfig> configs =
      LatencyCoveringLoopConfigs(LoopConfig{}, large, 8, vectors, H100());
  ExpectCoveringShapes(configs, large, 8);
  // At 128 threads and one lane, 4 chunks is the most that still fills the slots (2,731
  // blocks); 8 x 4 x 2048 resident threads = 64 KiB in flight per SM.
  EXPECT_NE(std::find(configs.begin(), configs.end(), LoopConfig{128, 1, 4, 1}), configs.end());
  EXPECT_NE(std::find(configs.begin(), configs.end(), LoopConfig{128, 4, 1, 1}), configs.end());

  int64_t small = 87381;  // 1 MB
  std::vector<LoopConfig> spread =
      LatencyCoveringLoopConfigs(LoopConfig{}, small, 8, vectors, H100());
  ExpectCoveringShapes(spread, small, 8);
  // No grid fills the slots: one chunk, and no 1024-thread blocks of 8 lanes (11 blocks).
  for (const LoopConfig& config : spread) EXPECT_EQ(config.chunks, 1) << config.ToJson();
  DeviceInfo unknown = H100();
  unknown.memory_latency_ns = 0;
  EXPECT_TRUE(LatencyCoveringLoopConfigs(LoopConfig{}, large, 8, vectors, unknown).empty());
}

TEST(LoopLaunchTest, TheLoopSpaceHoldsTheRulesShapes) {
  // 48 MB: f32 x + y over 4M elements, where 128 threads x 1 lane x 8 chunks still fill the
  // slots (4,096 blocks) and chunks 8 is not in the grid of 1/2/4.
  int64_t elements = 4194304;
  Fusion add = Add("f32[4194304]");
  const Emitter& emitter = EmitterFor(add.analysis);
  std::vector<SpaceEntry> space = emitter.Space(add.analysis, H100());
  std::vector<LoopConfig> rule = LatencyCoveringLoopConfigs(
      DefaultLoopConfig(add.analysis, H100()), elements,
      LoopInputBytesPerElement(add.analysis, elements), LoopVectorWidths(add.analysis), H100());
  ASSERT_NE(std::find(rule.begin(), rule.end(), LoopConfig{128, 1, 8, 1}), rule.end());
  for (const LoopConfig& config : rule) {
    auto found = std::find_if(space.begin(), space.end(), [&](const SpaceEntry& entry) {
      return entry.config == config.ToJson();
    });
    ASSERT_NE(found, space.end()) << config.ToJson();
    EXPECT_TRUE(found->valid()) << found->pruned_reason;
  }
  size_t added = std::count_if(rule.begin(), rule.end(),
                               [](const LoopConfig& config) { return config.chunks > 4; });
  EXPECT_EQ(space.size(), 6u * 4u * 3u + added);
}

TEST(LoopLaunchTest, SixteenLanesOnlyForBytes) {
  Fusion bytes = Add("s8[4096]");
  Fusion floats = Add("f32[4096]");
  EXPECT_EQ(WidestElementBits(bytes.analysis), 8);
  EXPECT_EQ(WidestElementBits(floats.analysis), 32);
  EXPECT_EQ(LoopVectorWidths(bytes.analysis), (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(LoopVectorWidths(floats.analysis), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_TRUE(ValidateLoopConfig({128, 16, 1, 1}, bytes.analysis, H100()).has_value());
  Status wide = ValidateLoopConfig({128, 16, 1, 1}, floats.analysis, H100());
  ASSERT_FALSE(wide.has_value());
  EXPECT_NE(wide.error().message.find("at most 1 byte"), std::string::npos);
  EXPECT_NE(wide.error().message.find("32-bit"), std::string::npos);
  // A byte converted to f32 reads bytes but writes words: no 16 lanes.
  Fusion widened = Analyze(R"(f {
  x = s8[4096] parameter(0)
  ROOT c = f32[4096] convert(x)
})");
  EXPECT_FALSE(ValidateLoopConfig({128, 16, 1, 1}, widened.analysis, H100()).has_value());

  const Emitter& emitter = EmitterFor(bytes.analysis);
  int64_t sixteen = 0;
  for (const SpaceEntry& entry : emitter.Space(bytes.analysis, H100())) {
    if (entry.config["vector"] == 16) {
      ++sixteen;
      EXPECT_TRUE(entry.valid()) << entry.pruned_reason;
    }
  }
  EXPECT_EQ(sixteen, 6 * 3);
}

}  // namespace
}  // namespace tilesmith::emitters
