// The in-place dynamic-update-slice emitter: config validation, and a kernel that writes only
// the update region at clamped starts, on chosen starts. XLA's default (the loop rule over the
// update), the aliasing in the kernel's buffers and host runs of several roots and packed
// outputs are data: tests/data/emitters/dynamic_update_slice/.
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

}  // namespace
}  // namespace tilesmith::emitters
