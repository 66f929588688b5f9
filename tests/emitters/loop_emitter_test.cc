// The loop emitter: partial configs, config validation, and the thread -> element map
// covering every output element exactly once, consecutive threads on consecutive memory.
// XLA's default configs and launches are data: tests/data/emitters/loop/.
#include "compiler/emitters/loop_emitter.h"

#include <gtest/gtest.h>

#include <map>

#include "compiler/analysis/layout_indexing.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::emitters {
namespace {

std::unique_ptr<hlo::HloModule> Parse(std::string_view text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

std::string Elementwise(const std::string& shape) {
  return "f {\n  p = " + shape + " parameter(0)\n  ROOT e = " + shape + " exponential(p)\n}\n";
}

const DeviceInfo& H100() {
  static const DeviceInfo device = DeviceInfo::ForTarget(*Target::Parse("cuda:sm_90"));
  return device;
}

// A partial config overlays the fusion's default: {"vector": 2} keeps 128 threads.
TEST(LoopEmitterTest, PartialConfigsOverlayTheDefault) {
  auto module = Parse(Elementwise("bf16[6,512,4096]"));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto config =
      LoopConfig::FromJson(nlohmann::json{{"vector", 2}}, DefaultLoopConfig(analysis, H100()));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(*config, (LoopConfig{128, 2, 1, 1}));
  EXPECT_EQ(*LoopConfig::FromJson(nlohmann::json{{"chunks", 2}}, LoopConfig{256, 4, 1, 1}),
            (LoopConfig{256, 4, 2, 1}));
}

// The registry's loop emitter: its space keeps pruned configs with their reason, and the
// emitter reads partial configs over the default.
TEST(LoopEmitterTest, SpaceKeepsPrunedConfigsWithTheirReason) {
  auto packed =
      Parse("f {\n  p = s4[64]{0:E(4)} parameter(0)\n  ROOT n = s4[64]{0:E(4)} negate(p)\n}\n");
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*packed->fusion());
  const Emitter& emitter = EmitterFor(analysis);
  EXPECT_EQ(emitter.name(), "loop");
  std::vector<SpaceEntry> space = emitter.Space(analysis, H100());
  // Vector 1/2/4/8, and 16 since no element is wider than a byte.
  EXPECT_EQ(space.size(), 6u * 5u * 3u);
  int64_t split_bytes = 0;
  for (const SpaceEntry& entry : space) {
    if (entry.config["vector"] == 1) {
      EXPECT_NE(entry.pruned_reason.find("splits bytes"), std::string::npos) << entry.config;
      ++split_bytes;
    }
  }
  EXPECT_EQ(split_bytes, 6 * 3);
  EXPECT_TRUE(emitter.Validate(analysis, {{"vector", 2}}, H100()).has_value());
  EXPECT_FALSE(emitter.Validate(analysis, {{"vector", 1}}, H100()).has_value());
  EXPECT_EQ(OverlayConfig({{"a", 1}, {"b", 2}}, {{"b", 3}}), nlohmann::json({{"a", 1}, {"b", 3}}));
}

TEST(LoopEmitterTest, InvalidConfigsSayWhy) {
  auto module = Parse(Elementwise("f32[1024]"));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto reason = [&](LoopConfig config) {
    Status status = ValidateLoopConfig(config, analysis, H100());
    return status ? std::string() : status.error().message;
  };
  EXPECT_EQ(reason({128, 4, 1, 1}), "");
  EXPECT_NE(reason({100, 1, 1, 1}).find("not a multiple of the warp size"), std::string::npos);
  EXPECT_NE(reason({2048, 1, 1, 1}).find("outside [1, 1024]"), std::string::npos);
  EXPECT_NE(reason({128, 3, 1, 1}).find("not 1, 2, 4 or 8"), std::string::npos);
  EXPECT_NE(reason({128, 1, 0, 1}).find("chunks"), std::string::npos);
  auto packed =
      Parse("f {\n  p = s4[64]{0:E(4)} parameter(0)\n  ROOT n = s4[64]{0:E(4)} negate(p)\n}\n");
  Status split =
      ValidateLoopConfig({32, 1, 1, 1}, analysis::AnalyzeFusion(*packed->fusion()), H100());
  ASSERT_FALSE(split.has_value());
  EXPECT_NE(split.error().message.find("splits bytes"), std::string::npos);
  auto json = LoopConfig::FromJson(nlohmann::json{{"threads", 64}});
  ASSERT_FALSE(json.has_value());
  EXPECT_NE(json.error().message.find("unknown loop config field 'threads'"), std::string::npos);
}

// Walks every (thread, block, symbol) point of the kernel's loop domain.
void ForEachPoint(
    const KernelIR& kernel, const LoopStmt& loop,
    const std::function<void(std::span<const int64_t>, std::span<const int64_t>)>& visit) {
  const LaunchGrid& grid = kernel.launch;
  std::vector<int64_t> dims(kLaunchDims, 0);
  for (int64_t by = 0; by < grid.blocks[1]; ++by) {
    for (int64_t bx = 0; bx < grid.blocks[0]; ++bx) {
      for (int64_t tx = 0; tx < grid.threads[0]; ++tx) {
        dims = {tx, 0, 0, bx, by, 0};
        std::vector<int64_t> symbols(loop.map.symbol_count(), 0);
        std::function<void(int64_t)> nest = [&](int64_t s) {
          if (s == loop.map.symbol_count()) {
            if (loop.map.Contains(dims, symbols)) visit(dims, symbols);
            return;
          }
          for (int64_t v = loop.map.symbol(s).range.lower; v <= loop.map.symbol(s).range.upper;
               ++v) {
            symbols[s] = v;
            nest(s + 1);
          }
        };
        nest(0);
      }
    }
  }
}

TEST(LoopEmitterTest, EveryElementOnceAndThreadsWalkMemoryInOrder) {
  DeviceInfo device = H100();
  for (const char* shape :
       {"f32[7,33]", "f32[7,33]{0,1}", "f32[4,5,6]{0,2,1}", "bf16[256]", "f32[3,8,16]{1,0,2}"}) {
    auto module = Parse(Elementwise(shape));
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    const hlo::Shape& out = module->fusion()->root()->shape();
    auto slots = analysis::LogicalToLinearIndexing(out);
    ASSERT_TRUE(slots.has_value());
    for (LoopConfig config : {LoopConfig{32, 1, 1, 1}, LoopConfig{64, 2, 3, 1},
                              LoopConfig{32, 4, 1, 2}, LoopConfig{128, 8, 2, 1}}) {
      auto kernel = EmitLoopKernel(analysis, config, device);
      ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
      ASSERT_EQ(kernel->phases.size(), 1u);
      const LoopStmt& loop = kernel->phases[0].loops[0];
      std::map<int64_t, int64_t> hits;  // memory slot -> count
      ForEachPoint(*kernel, loop,
                   [&](std::span<const int64_t> dims, std::span<const int64_t> symbols) {
                     std::vector<int64_t> index = loop.map.Evaluate(dims, symbols);
                     int64_t slot = slots->Evaluate(index)[0];
                     ++hits[slot];
                     // Within a step, a thread's lanes are consecutive in memory: the linear
                     // position the emitter assigns is the memory slot itself.
                     int64_t thread = dims[kThreadIdX];
                     int64_t block = dims[kBlockIdY] * kernel->launch.blocks[0] + dims[kBlockIdX];
                     int64_t total = kernel->launch.threads[0] * kernel->launch.block_count();
                     int64_t linear = (block * config.threads_per_block + thread) * config.vector +
                                      symbols[0] * config.vector * total + symbols[1];
                     EXPECT_EQ(slot, linear) << shape;
                   });
      EXPECT_EQ(static_cast<int64_t>(hits.size()), out.ElementCount()) << shape;
      for (const auto& [slot, count] : hits) EXPECT_EQ(count, 1) << shape << " slot " << slot;
    }
  }
}

}  // namespace
}  // namespace tilesmith::emitters
