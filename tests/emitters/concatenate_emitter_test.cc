// The concatenate emitter: XLA's default (the loop rule over the largest operand, the vector
// limited by the gcd of the concatenated sizes), config validation, one loop per operand,
// and host execution matching the evaluator for unaligned sizes, epilogues and side outputs.
#include "compiler/emitters/concatenate_emitter.h"

#include <gtest/gtest.h>

#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::H100;
using testing::Host;
using testing::HostMismatch;
using testing::Parse;
using testing::Reason;

std::string Concat1d(std::vector<int64_t> sizes) {
  std::string text = "f {\n";
  std::string operands;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string name = "p" + std::to_string(i);
    text += "  " + name + " = f32[" + std::to_string(sizes[i]) + "] parameter(" +
            std::to_string(i) + ")\n";
    operands += (i ? ", " : "") + name;
    total += sizes[i];
  }
  return text + "  ROOT c = f32[" + std::to_string(total) + "] concatenate(" + operands +
         "), dimensions={0}\n}\n";
}

LoopConfig DefaultFor(const std::string& text, const DeviceInfo& device) {
  auto module = Parse(text);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  EXPECT_EQ(analysis::EmitterKindName(analysis.emitter), "concatenate");
  return DefaultConcatenateConfig(analysis, device);
}

TEST(ConcatenateEmitterTest, DefaultsAreXlas) {
  // Small: no unrolling, 128 threads (XLA's concat_1d).
  EXPECT_EQ(DefaultFor(Concat1d({200, 400, 300}), H100()), (LoopConfig{128, 1, 1, 1}));
  // Large enough to unroll (>= 2048 x 132 elements in the largest operand): 4, limited to a
  // divisor of every concatenated size.
  EXPECT_EQ(DefaultFor(Concat1d({400000, 600000}), H100()).vector, 4);
  EXPECT_EQ(DefaultFor(Concat1d({640002, 640000}), H100()).vector, 2);  // XLA's vectorization
  EXPECT_EQ(DefaultFor(Concat1d({600001, 600000}), H100()).vector, 1);
  // The largest operand decides, not the output: 2 x 200000 < 270336 per operand.
  EXPECT_EQ(DefaultFor(Concat1d({200000, 200000}), H100()).vector, 1);
  // The host fills a SIMD register, within the same gcd.
  EXPECT_EQ(DefaultFor(Concat1d({400000, 600000}), Host()).vector, 8);
  EXPECT_EQ(DefaultFor(Concat1d({400004, 600000}), Host()).vector, 4);
}

TEST(ConcatenateEmitterTest, OneLoopPerOperandAtItsOffset) {
  auto module = Parse(Concat1d({200, 400, 300}));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  const Emitter& emitter = EmitterFor(analysis);
  ASSERT_EQ(emitter.name(), "concatenate");
  auto kernel = emitter.Emit(analysis, nullptr, H100());
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  EXPECT_EQ(kernel->emitter, "concatenate");
  // The grid covers the largest operand, not the output.
  EXPECT_EQ(kernel->launch.blocks, (std::array<int64_t, 3>{4, 1, 1}));
  ASSERT_EQ(kernel->phases.size(), 1u);
  const std::vector<LoopStmt>& loops = kernel->phases[0].loops;
  ASSERT_EQ(loops.size(), 3u);
  // Thread 5 of block 1 handles element 133 of each operand: output 133, 333 and 733.
  std::vector<int64_t> dims = {5, 0, 0, 1, 0, 0};
  std::vector<int64_t> first = {0, 0};  // chunk 0, lane 0
  std::vector<int64_t> past = {100, 0, 0, 1, 0, 0};
  EXPECT_EQ(loops[0].map.Evaluate(dims, first), std::vector<int64_t>{133});
  EXPECT_EQ(loops[1].map.Evaluate(dims, first), std::vector<int64_t>{333});
  EXPECT_EQ(loops[2].map.Evaluate(dims, first), std::vector<int64_t>{733});
  // Operand 0 has 200 elements: thread 100 of block 1 (element 228) does nothing there.
  EXPECT_FALSE(loops[0].map.Contains(past, first));
  EXPECT_TRUE(loops[1].map.Contains(past, first));
}

// XLA's multiple_roots_shared_hero: the concatenate and its convert epilogue are stored
// from one call per operand loop.
TEST(ConcatenateEmitterTest, OutputsOfOneHeroShareACall) {
  auto module = Parse(R"(f {
  p0 = f32[16,48] parameter(0)
  p1 = f32[16,80] parameter(1)
  c = f32[16,128] concatenate(p0, p1), dimensions={1}
  cvt = bf16[16,128] convert(c)
  ROOT t = (f32[16,128], bf16[16,128]) tuple(c, cvt)
})");
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto kernel = EmitConcatenateKernel(analysis, DefaultConcatenateConfig(analysis, H100()), H100());
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  ASSERT_EQ(kernel->phases[0].loops.size(), 2u);
  for (const LoopStmt& loop : kernel->phases[0].loops) {
    int calls = 0;
    int stores = 0;
    for (const BodyStmt& stmt : loop.body) {
      calls += std::holds_alternative<CallStmt>(stmt);
      stores += std::holds_alternative<StoreStmt>(stmt);
    }
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(stores, 2);
  }
  EXPECT_EQ(HostMismatch(*module->fusion(), nullptr), "");
}

TEST(ConcatenateEmitterTest, InvalidConfigsSayWhy) {
  auto module = Parse(Concat1d({200, 400, 300}));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  const Emitter& emitter = EmitterFor(analysis);
  EXPECT_EQ(Reason(emitter.Validate(analysis, {{"vector", 2}}, H100())), "");
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"threads_per_block", 100}}, H100()))
                .find("threads_per_block=100 is not a multiple of the warp size"),
            std::string::npos);
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"vector", 3}}, H100())).find("vector=3"),
            std::string::npos);
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"unroll", 2}}, H100())).find("'unroll'"),
            std::string::npos);
  auto invalid = emitter.Emit(analysis, {{"blocks_y", 0}}, H100());
  ASSERT_FALSE(invalid.has_value());
  EXPECT_NE(invalid.error().message.find("blocks_y=0"), std::string::npos);
  // Packed outputs would have operand offsets splitting bytes between threads.
  auto packed = Parse(
      "f {\n  a = s4[3]{0:E(4)} parameter(0)\n  b = s4[5]{0:E(4)} parameter(1)\n"
      "  ROOT c = s4[8]{0:E(4)} concatenate(a, b), dimensions={0}\n}\n");
  analysis::FusionAnalysis packed_analysis = analysis::AnalyzeFusion(*packed->fusion());
  EXPECT_NE(Reason(ValidateConcatenateConfig({32, 2, 1, 1}, packed_analysis, H100()))
                .find("narrower than 8 bits"),
            std::string::npos);
}

// Sizes that divide no vector width, a minor concatenated dim with an epilogue and a side
// output, a major concatenated dim, a layout where the concatenated dim is minor in memory.
TEST(ConcatenateEmitterTest, HostMatchesTheEvaluatorForEveryConfig) {
  const char* cases[] = {
      R"(f {
  p0 = f32[7,5] parameter(0)
  p1 = f32[7,3] parameter(1)
  p2 = f32[7,1] parameter(2)
  e = f32[7,3] exponential(p1)
  c = f32[7,9] concatenate(p0, e, p2), dimensions={1}
  n = f32[7,9] negate(c)
  s = f16[7,9] convert(c)
  ROOT t = (f32[7,9], f16[7,9]) tuple(n, s)
})",
      R"(f {
  p0 = s32[3,4] parameter(0)
  p1 = s32[5,4] parameter(1)
  ROOT c = s32[8,4] concatenate(p0, p1), dimensions={0}
})",
      R"(f {
  p0 = f32[6,3]{0,1} parameter(0)
  p1 = f32[6,5]{0,1} parameter(1)
  p2 = f32[6,8]{0,1} parameter(2)
  c = f32[6,8]{0,1} concatenate(p0, p1), dimensions={1}
  ROOT a = f32[6,8]{0,1} add(c, p2)
})",
      R"(f {
  p0 = f32[13] parameter(0)
  p1 = f32[22] parameter(1)
  c = f32[35] concatenate(p0, p1), dimensions={0}
  ROOT b = f32[5,7] bitcast(c)
})"};
  for (const char* text : cases) {
    auto module = Parse(text);
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    ASSERT_EQ(analysis::EmitterKindName(analysis.emitter), "concatenate") << text;
    std::vector<nlohmann::json> configs = testing::ValidConfigs(analysis, Host(), 32);
    ASSERT_EQ(configs.size(), 12u);
    for (const nlohmann::json& config : configs) {
      EXPECT_EQ(HostMismatch(*module->fusion(), config), "") << text;
    }
  }
}

}  // namespace
}  // namespace tilesmith::emitters
