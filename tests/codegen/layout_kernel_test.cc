// Layout-aware addressing: kernels reading tiled and permuted inputs and writing permuted
// and packed outputs produce the evaluator's values under several configs.
#include <gtest/gtest.h>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/host_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/literal_compare.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::codegen {
namespace {

struct LayoutCase {
  const char* name;
  const char* hlo;
};

class LayoutKernelTest : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(LayoutKernelTest, MatchesTheEvaluatorUnderSeveralConfigs) {
  auto module = hlo::ParseHloModule(GetParam().hlo);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  auto arguments = hlo::MakeRandomArguments(fusion, /*seed=*/5);
  ASSERT_TRUE(arguments.has_value());
  auto expected = hlo::Evaluate(fusion, *arguments);
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  std::vector<nlohmann::json> configs = {
      nullptr,
      {{"threads_per_block", 32}, {"vector", 2}, {"chunks", 3}},
      {{"threads_per_block", 64}, {"vector", 8}, {"chunks", 1}, {"blocks_y", 2}}};
  if (emitters::EmitterFor(analysis).name() == "transpose") {
    configs = {nullptr,
               {{"tile_in", 16}, {"rows_per_pass", 2}, {"threads", 32}},
               {{"tile_out", 16}, {"vector", 2}, {"rows_per_pass", 8}, {"shared_padding", 0}}};
  }
  for (const nlohmann::json& config : configs) {
    auto kernel = emitters::EmitKernel(analysis, config, device);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    auto compiled = CompileForHost(std::move(*kernel));
    ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
    auto outputs = (*compiled)->Run(*arguments);
    ASSERT_TRUE(outputs.has_value()) << outputs.error().message;
    ASSERT_EQ(outputs->size(), 1u);
    hlo::Comparison comparison = hlo::CompareLiterals((*outputs)[0], *expected);
    EXPECT_TRUE(comparison.matches)
        << GetParam().name << " " << config.dump() << ": " << comparison.first_mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, LayoutKernelTest,
                         ::testing::Values(LayoutCase{"tiled_input", R"(f {
          p = f32[20,30]{1,0:T(8,8)} parameter(0)
          ROOT e = f32[20,30] exponential(p) })"},
                                           LayoutCase{"column_major_output", R"(f {
          p = f32[20,30] parameter(0)
          ROOT n = f32[20,30]{0,1} negate(p) })"},
                                           LayoutCase{"tiled_bf16_pairs", R"(f {
          p = bf16[12,260]{1,0:T(8,128)(2,1)} parameter(0)
          q = bf16[12,260]{0,1} parameter(1)
          ROOT m = bf16[12,260]{1,0:T(8,128)(2,1)} multiply(p, q) })"},
                                           LayoutCase{"packed_s4_output", R"(f {
          p = s8[9,7] parameter(0)
          ROOT c = s4[9,7]{1,0:E(4)} convert(p) })"},
                                           LayoutCase{"packed_s4_column_major_input", R"(f {
          p = s4[9,7]{0,1:E(4)} parameter(0)
          ROOT c = s32[9,7] convert(p) })"},
                                           LayoutCase{"transpose_through_layouts", R"(f {
          p = f32[16,48]{0,1} parameter(0)
          t = f32[48,16] transpose(p), dimensions={1,0}
          ROOT a = f32[48,16]{0,1} abs(t) })"},
                                           LayoutCase{"bitcast_between_layouts", R"(f {
          p = f32[6,10]{0,1} parameter(0)
          ROOT b = f32[10,6]{1,0} bitcast(p) })"},
                                           LayoutCase{"tail_padded_combined_tiles", R"(f {
          p = f32[3,5,7]{2,1,0:T(*,4)L(16)} parameter(0)
          ROOT s = f32[3,5,7] sqrt(p) })"}),
                         [](const ::testing::TestParamInfo<LayoutCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace tilesmith::codegen
