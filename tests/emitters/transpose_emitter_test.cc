// The transpose emitter: config validation, the space with its pruning reasons, and the two
// phases' maps: phase 1 reads every input element once into the tile slot phase 2 reads it
// back from, for the output element the transpose puts it at. XLA's default tiling (the
// spec's example), launches and shared tiles are data: tests/data/emitters/transpose/.
#include "compiler/emitters/transpose_emitter.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::emitters {
namespace {

std::unique_ptr<hlo::HloModule> Parse(std::string_view text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

const DeviceInfo& H100() {
  static const DeviceInfo device = DeviceInfo::ForTarget(*Target::Parse("cuda:sm_90"));
  return device;
}

constexpr char kSpecExample[] = R"(f {
  p0 = f32[20,160,170] parameter(0)
  exp = f32[20,160,170] exponential(p0)
  ROOT t = f32[20,170,160] transpose(exp), dimensions={0,2,1}
})";

constexpr char kKeepsMinor[] = R"(f {
  p0 = s8[160,170,3] parameter(0)
  ROOT t = s8[170,160,3] transpose(p0), dimensions={1,0,2}
})";

std::string Reason(const analysis::FusionAnalysis& analysis, const nlohmann::json& config,
                   const DeviceInfo& device = H100()) {
  Status status = EmitterFor(analysis).Validate(analysis, config, device);
  return status ? std::string() : status.error().message;
}

TEST(TransposeEmitterTest, InvalidConfigsSayWhy) {
  auto module = Parse(kSpecExample);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  EXPECT_EQ(Reason(analysis, {{"tile_in", 64}, {"threads", 256}}), "");
  EXPECT_NE(Reason(analysis, {{"tile_in", 64}}).find("must be tile_in x carried / vector"),
            std::string::npos);
  EXPECT_NE(Reason(analysis, {{"vector", 3}}).find("not 1, 2, 4 or 8"), std::string::npos);
  EXPECT_NE(Reason(analysis, {{"shared_padding", -1}}).find("at least 0"), std::string::npos);
  EXPECT_NE(Reason(analysis, {{"tiles", 2}}).find("unknown transpose config field"),
            std::string::npos);
  EXPECT_NE(Reason(analysis, {{"rows_per_pass", 1}, {"threads", 32}, {"tile_out", 64}})
                .find("do not cover whole output tile rows"),
            std::string::npos)
      << "phase 2 rows of 64 threads cannot be covered by 32";
  DeviceInfo small = H100();
  small.shared_memory_per_block = 4096;
  EXPECT_NE(Reason(analysis, nullptr, small).find("shared memory of 4224 bytes is over"),
            std::string::npos);
}

TEST(TransposeEmitterTest, SpaceKeepsPrunedConfigsWithTheirReason) {
  auto module = Parse(kKeepsMinor);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  std::vector<SpaceEntry> space = EmitterFor(analysis).Space(analysis, H100());
  // The unpacked grid, then the packed one (tiles 32/64, rows 1-8, vector 2/4, padding 0/v).
  EXPECT_EQ(space.size(), 3u * 3u * 4u * 3u * 2u + 2u * 2u * 4u * 2u * 2u);
  std::map<std::string, int> reasons;
  int valid = 0;
  for (const SpaceEntry& entry : space) {
    if (entry.config.contains("packed")) {
      EXPECT_NE(entry.pruned_reason.find("moves the minor dim"), std::string::npos)
          << entry.config << ": a kept minor dim is already read and written whole";
    } else if (entry.valid()) {
      ++valid;
      EXPECT_EQ(Reason(analysis, entry.config), "") << entry.config;
    } else if (entry.pruned_reason.find("over the limit 1024") != std::string::npos) {
      ++reasons["threads"];
    } else if (entry.pruned_reason.find("multiple of the warp size") != std::string::npos) {
      ++reasons["warp"];
    }
  }
  EXPECT_GT(valid, 0);
  EXPECT_GT(reasons["threads"], 0);  // 64 x 3 carried x 8 rows = 1536 threads
  EXPECT_GT(reasons["warp"], 0);     // 16 x 3 carried x 1 row = 48 threads
}

// Walks every (thread, block, symbol) point of a loop's domain: the block and the results.
void ForEachPoint(const KernelIR& kernel, const LoopStmt& loop,
                  const std::function<void(int64_t, std::span<const int64_t>)>& visit) {
  for (int64_t block = 0; block < kernel.launch.blocks[0]; ++block) {
    for (int64_t thread = 0; thread < kernel.launch.threads[0]; ++thread) {
      std::vector<int64_t> dims = {thread, 0, 0, block, 0, 0};
      std::vector<int64_t> symbols(loop.map.symbol_count(), 0);
      std::function<void(int64_t)> nest = [&](int64_t s) {
        if (s == loop.map.symbol_count()) {
          if (loop.map.Contains(dims, symbols)) visit(block, loop.map.Evaluate(dims, symbols));
          return;
        }
        for (int64_t v = loop.map.symbol(s).range.lower; v <= loop.map.symbol(s).range.upper; ++v) {
          symbols[s] = v;
          nest(s + 1);
        }
      };
      nest(0);
    }
  }
}

// Phase 1 writes tile slot (block, row, column, element) from input index x, once per input
// element; phase 2 reads every written slot once, for output index y = x permuted. (The
// shapes here are their own normalised form, so loop results are logical indices.)
void ExpectTilesRoundTrip(std::string_view text, const nlohmann::json& config) {
  auto module = Parse(text);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto kernel = EmitterFor(analysis).Emit(analysis, config, H100());
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  const hlo::HloInstruction& transpose = *analysis.heroes[0];
  int64_t rank = transpose.shape().rank();
  auto slot_of = [&](int64_t block, std::span<const int64_t> results) {
    std::vector<int64_t> slot(results.begin() + rank, results.end());
    slot.insert(slot.begin(), block);
    return slot;
  };
  std::map<std::vector<int64_t>, std::vector<int64_t>> written;
  ForEachPoint(*kernel, kernel->phases[0].loops[0],
               [&](int64_t block, std::span<const int64_t> results) {
                 std::vector<int64_t> x(results.begin(), results.begin() + rank);
                 EXPECT_TRUE(written.emplace(slot_of(block, results), x).second) << config;
               });
  EXPECT_EQ(static_cast<int64_t>(written.size()), transpose.operand(0)->shape().ElementCount())
      << config;
  std::map<std::vector<int64_t>, int> reads;
  ForEachPoint(*kernel, kernel->phases[1].loops[0],
               [&](int64_t block, std::span<const int64_t> results) {
                 std::vector<int64_t> slot = slot_of(block, results);
                 auto it = written.find(slot);
                 ASSERT_NE(it, written.end()) << "phase 2 reads a slot phase 1 never wrote";
                 ++reads[slot];
                 for (int64_t i = 0; i < rank; ++i) {
                   ASSERT_EQ(results[i], it->second[transpose.dimensions()[i]]) << config;
                 }
               });
  EXPECT_EQ(reads.size(), written.size()) << config;
  for (const auto& [slot, count] : reads) ASSERT_EQ(count, 1) << config;
}

// Partial tiles along both swapped dims (40 and 70 are no multiple of 16, 32 or 64).
constexpr char kSmall021[] = R"(f {
  p0 = f32[3,40,70] parameter(0)
  ROOT t = f32[3,70,40] transpose(p0), dimensions={0,2,1}
})";

TEST(TransposeEmitterTest, TilesRoundTripEveryElementWithPartialTiles) {
  constexpr char kSmall210[] = R"(f {
  p0 = f32[20,6,34] parameter(0)
  ROOT t = f32[34,6,20] transpose(p0), dimensions={2,1,0}
})";
  constexpr char kSmall102[] = R"(f {
  p0 = s8[40,36,3] parameter(0)
  ROOT t = s8[36,40,3] transpose(p0), dimensions={1,0,2}
})";
  ExpectTilesRoundTrip(kSmall021, nullptr);
  ExpectTilesRoundTrip(
      kSmall021,
      {{"tile_in", 16}, {"tile_out", 32}, {"rows_per_pass", 2}, {"threads", 32}, {"vector", 1}});
  ExpectTilesRoundTrip(
      kSmall021,
      {{"tile_in", 64}, {"tile_out", 32}, {"rows_per_pass", 2}, {"threads", 64}, {"vector", 2}});
  ExpectTilesRoundTrip(kSmall210, nullptr);
  ExpectTilesRoundTrip(kSmall102, nullptr);
  ExpectTilesRoundTrip(
      kSmall102,
      {{"tile_in", 16}, {"tile_out", 32}, {"rows_per_pass", 2}, {"threads", 96}, {"vector", 1}});
}

TEST(TransposeEmitterTest, PackedIsWrittenOnlyWhenSetAndRoundTrips) {
  auto module = Parse(kSpecExample);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  TransposeConfig config = DefaultTransposeConfig(analysis, H100());
  EXPECT_FALSE(config.ToJson().contains("packed")) << "stored keys of unpacked configs change";
  config.packed = true;
  config.vector = 2;
  config.shared_padding = 2;
  nlohmann::json json = config.ToJson();
  EXPECT_EQ(json["packed"], true);
  auto read = TransposeConfig::FromJson(json, TransposeConfig{});
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_EQ(*read, config);
  EXPECT_NE(Reason(analysis, {{"packed", 1}}).find("'packed' is true or false"), std::string::npos);
}

TEST(TransposeEmitterTest, PackedSubTilesAreMarkedForRegistersAndInvalidOnesSayWhy) {
  auto module = Parse(kSpecExample);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  nlohmann::json packed = {{"packed", true}, {"vector", 2},    {"shared_padding", 2},
                           {"tile_in", 64},  {"tile_out", 32}, {"rows_per_pass", 4},
                           {"threads", 128}};
  auto kernel = EmitterFor(analysis).Emit(analysis, packed, H100());
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  // Phase 1 holds a 2 x 2 sub-tile per step: passes, the vector lane, and the sub-row.
  EXPECT_EQ(kernel->phases[0].loops[0].map.symbol_count(), 3);
  EXPECT_EQ(kernel->phases[1].loops[0].map.symbol_count(), 2);
  // The sub-tile is a square of the vector lane (along the loads) and the sub-row (along the
  // tile's rows), which host code generation moves through registers.
  ASSERT_TRUE(kernel->phases[0].loops[0].register_transpose.has_value());
  EXPECT_EQ(kernel->phases[0].loops[0].register_transpose->along_load, 1);
  EXPECT_EQ(kernel->phases[0].loops[0].register_transpose->along_store, 2);
  EXPECT_FALSE(kernel->phases[1].loops[0].register_transpose.has_value());
  auto unpacked = EmitterFor(analysis).Emit(analysis, nullptr, H100());
  ASSERT_TRUE(unpacked.has_value()) << unpacked.error().message;
  EXPECT_FALSE(unpacked->phases[0].loops[0].register_transpose.has_value());
  EXPECT_NE(Reason(analysis, {{"packed", true}}).find("packed needs vector >= 2"),
            std::string::npos);
  nlohmann::json odd_padding = packed;
  odd_padding["shared_padding"] = 1;
  EXPECT_NE(Reason(analysis, odd_padding).find("multiple of vector=2"), std::string::npos);
  auto keeps_minor = Parse(kKeepsMinor);
  analysis::FusionAnalysis keeps_analysis = analysis::AnalyzeFusion(*keeps_minor->fusion());
  EXPECT_NE(Reason(keeps_analysis, {{"packed", true}, {"vector", 2}}).find("moves the minor dim"),
            std::string::npos);
}

TEST(TransposeEmitterTest, PackedTilesRoundTripEveryElementWithPartialTiles) {
  constexpr char kSmall210[] = R"(f {
  p0 = s16[20,6,34] parameter(0)
  ROOT t = s16[34,6,20] transpose(p0), dimensions={2,1,0}
})";
  for (int64_t vector : {2, 4}) {
    for (int64_t rows : {2, 4, 8}) {
      nlohmann::json config = {{"packed", true},
                               {"vector", vector},
                               {"shared_padding", vector},
                               {"tile_in", 32},
                               {"tile_out", 64},
                               {"rows_per_pass", rows},
                               {"threads", 32 / vector * rows}};
      if (32 / vector * rows % 32 != 0) continue;
      ExpectTilesRoundTrip(kSmall021, config);
      ExpectTilesRoundTrip(kSmall210, config);
    }
  }
}

}  // namespace
}  // namespace tilesmith::emitters
