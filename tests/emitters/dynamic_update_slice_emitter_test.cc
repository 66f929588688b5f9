// The in-place dynamic-update-slice emitter: XLA's default (the loop rule over the update),
// the aliasing made explicit in the kernel's buffers, a kernel that writes only the update
// region at clamped starts, and host execution matching the evaluator.
#include "compiler/emitters/dynamic_update_slice_emitter.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::H100;
using testing::HostMismatch;
using testing::Parse;
using testing::Reason;

constexpr const char* kOutOfBounds = R"(f {
  in = f32[7,8] parameter(0)
  updates = f32[2,3] parameter(1)
  i0 = s32[] parameter(2)
  i1 = s32[] parameter(3)
  ROOT updated = f32[7,8] dynamic-update-slice(in, updates, i0, i1)
})";

std::string Update(const std::string& operand, const std::string& update) {
  return "f {\n  in = f32" + operand + " parameter(0)\n  u = f32" + update +
         " parameter(1)\n  i = s32[] parameter(2)\n  z = s32[] constant(0)\n  ROOT d = f32" +
         operand + " dynamic-update-slice(in, u, i, z, z)\n}\n";
}

TEST(DynamicUpdateSliceEmitterTest, DefaultsAreXlas) {
  auto config_of = [](const std::string& text, const DeviceInfo& device) {
    auto module = Parse(text);
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    EXPECT_EQ(analysis::EmitterKindName(analysis.emitter), "dynamic_update_slice");
    return DefaultDynamicUpdateSliceConfig(analysis, device);
  };
  // The update's 40 elements, not the output's 480000, size the launch (XLA's
  // vectorize_x1_too_small): two warps, no unrolling.
  EXPECT_EQ(config_of(Update("[40,40,300]", "[1,1,40]"), H100()), (LoopConfig{64, 1, 1, 1}));
  // 240000 update elements: under H100's 2048 x 132 threads, over A100's 2048 x 108, where
  // XLA unrolls by 4 (its vectorize_x4).
  EXPECT_EQ(config_of(Update("[40,40,300]", "[20,40,300]"), H100()).vector, 1);
  DeviceInfo a100 = DeviceInfo::ForTarget(*Target::Parse("cuda:sm_80"));
  EXPECT_EQ(config_of(Update("[40,40,300]", "[20,40,300]"), a100).vector, 4);
}

TEST(DynamicUpdateSliceEmitterTest, TheOutputAliasesTheUpdatedParameter) {
  auto module = Parse(kOutOfBounds);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  const Emitter& emitter = EmitterFor(analysis);
  ASSERT_EQ(emitter.name(), "dynamic_update_slice");
  auto kernel = emitter.Emit(analysis, nullptr, H100());
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  int64_t out = kernel->OutputBuffer(0);
  ASSERT_GE(kernel->buffers[out].aliases, 0);
  EXPECT_EQ(kernel->buffers[kernel->buffers[out].aliases].name, "p0");
  EXPECT_NE(kernel->ToString().find("%out0: f32[7,8]{1,0} out aliases %p0"), std::string::npos);
  // 6 update elements: one warp, one block.
  EXPECT_EQ(kernel->launch.threads[0] * kernel->launch.block_count(), 32);
}

TEST(DynamicUpdateSliceEmitterTest, InvalidConfigsSayWhy) {
  auto module = Parse(kOutOfBounds);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  const Emitter& emitter = EmitterFor(analysis);
  EXPECT_EQ(Reason(emitter.Validate(analysis, {{"vector", 8}}, H100())), "");
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"vector", 5}}, H100())).find("vector=5"),
            std::string::npos);
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"threads_per_block", 2048}}, H100()))
                .find("threads_per_block=2048 is outside [1, 1024]"),
            std::string::npos);
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"start", 1}}, H100())).find("'start'"),
            std::string::npos);
  // A fusion that is not an in-place update is refused with the root named.
  auto add = Parse("f {\n  p = f32[4] parameter(0)\n  ROOT a = f32[4] add(p, p)\n}\n");
  EXPECT_NE(Reason(ValidateDynamicUpdateSliceConfig(
                       {32, 1, 1, 1}, analysis::AnalyzeFusion(*add->fusion()), H100()))
                .find("root 'a' is not a dynamic-update-slice"),
            std::string::npos);
}

std::vector<hlo::Literal> OutOfBoundsArgs(const hlo::HloComputation& fusion, int64_t i0,
                                          int64_t i1) {
  std::vector<hlo::Literal> args = *hlo::MakeRandomArguments(fusion, 7);
  args[2].SetInt(0, i0);
  args[3].SetInt(0, i1);
  return args;
}

// Starts are clamped into [0, operand dim - update dim], as HLO specifies.
TEST(DynamicUpdateSliceEmitterTest, ClampedStartsMatchTheEvaluator) {
  auto module = Parse(kOutOfBounds);
  const hlo::HloComputation& fusion = *module->fusion();
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  std::vector<nlohmann::json> configs = testing::ValidConfigs(analysis, testing::Host(), 32);
  ASSERT_EQ(configs.size(), 12u);
  for (auto [i0, i1] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 0}, {4, 2}, {-3, 100}, {6, -1}, {5, 5}, {-2147483648, 2147483647}}) {
    std::vector<hlo::Literal> args = OutOfBoundsArgs(fusion, i0, i1);
    for (const nlohmann::json& config : configs) {
      EXPECT_EQ(HostMismatch(fusion, config, args), "") << i0 << ", " << i1;
    }
  }
}

// Run on raw buffers with a sentinel in the output: everything outside the clamped update
// region keeps it, so the kernel writes the update region only.
TEST(DynamicUpdateSliceEmitterTest, WritesOnlyTheUpdateRegion) {
  auto module = Parse(kOutOfBounds);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto kernel = EmitKernel(analysis, nullptr, testing::Host());
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  auto compiled = codegen::CompileForHost(std::move(*kernel));
  ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
  alignas(64) float in[56];
  alignas(64) float updates[6] = {10, 11, 12, 13, 14, 15};
  alignas(64) int32_t i0 = 9;   // clamped to 5
  alignas(64) int32_t i1 = -4;  // clamped to 0
  alignas(64) float out[56];
  for (int i = 0; i < 56; ++i) {
    in[i] = static_cast<float>(i);
    out[i] = -1;
  }
  std::vector<void*> buffers = {in, updates, &i0, &i1, out};
  (*compiled)->Run(buffers);
  for (int row = 0; row < 7; ++row) {
    for (int column = 0; column < 8; ++column) {
      bool inside = row >= 5 && column < 3;
      float expected = inside ? updates[(row - 5) * 3 + column] : -1.0f;
      EXPECT_EQ(out[row * 8 + column], expected) << row << ", " << column;
    }
  }
}

// Several roots, a bitcast root, a computed start, an update computed from parameters, and
// packed outputs (written whole, since an update region cannot give threads whole bytes).
TEST(DynamicUpdateSliceEmitterTest, HostMatchesTheEvaluatorForEveryConfig) {
  const char* cases[] = {
      R"(f {
  a = f32[6,10] parameter(0)
  b = f32[5,4] parameter(1)
  u = f32[2,3] parameter(2)
  v = f32[3,3] parameter(3)
  i = s32[] parameter(4)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  e = f32[2,3] exponential(u)
  d0 = f32[6,10] dynamic-update-slice(a, e, i, j)
  d1 = f32[5,4] dynamic-update-slice(b, v, j, i)
  r0 = f32[60] bitcast(d0)
  ROOT t = (f32[60], f32[5,4]) tuple(r0, d1)
})",
      R"(f {
  a = s4[9,5]{1,0:E(4)} parameter(0)
  u = s4[4,3]{1,0:E(4)} parameter(1)
  i = s32[] parameter(2)
  ROOT d = s4[9,5]{1,0:E(4)} dynamic-update-slice(a, u, i, i)
})"};
  for (const char* text : cases) {
    auto module = Parse(text);
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    ASSERT_EQ(analysis::EmitterKindName(analysis.emitter), "dynamic_update_slice") << text;
    std::vector<nlohmann::json> configs = testing::ValidConfigs(analysis, testing::Host(), 32);
    ASSERT_FALSE(configs.empty());
    for (uint64_t seed : {1, 2}) {
      for (const nlohmann::json& config : configs) {
        EXPECT_EQ(HostMismatch(*module->fusion(), config, seed), "") << text;
      }
    }
  }
}

}  // namespace
}  // namespace tilesmith::emitters
