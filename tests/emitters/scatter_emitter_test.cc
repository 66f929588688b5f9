// The scatter emitter: one thread per update element in an output that starts as the
// operand; atomics where the combiner has one (so repeated indices are safe), a plain
// read-modify-write for unique indices, windows that do not fit skipped, and the loop
// emitter's in-order kernel for what it cannot do. Kernels run on the host against the
// evaluator with indices chosen to repeat and to fall outside the operand.
#include "compiler/emitters/scatter_emitter.h"

#include <gtest/gtest.h>

#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::H100;
using testing::HostMismatch;
using testing::Parse;
using testing::Reason;

std::string Scatter(const std::string& type, const std::string& combiner, bool unique) {
  return "combine {\n  a = " + type + "[] parameter(0)\n  b = " + type + "[] parameter(1)\n" +
         "  ROOT c = " + type + "[] " + combiner + "(a, b)\n}\n" + "s {\n  operand = " + type +
         "[40,6] parameter(0)\n  indices = s32[300,1] parameter(1)\n  updates = " + type +
         "[300,2,6] parameter(2)\n  ROOT s = " + type +
         "[40,6] scatter(operand, indices, updates), update_window_dims={1,2}, "
         "inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
         "unique_indices=" +
         (unique ? "true" : "false") + ", to_apply=combine\n}\n";
}

// Random arguments whose indices repeat (300 updates over 40 rows) and sometimes leave the
// operand (-3 … 41: a window of 2 rows fits only starts 0 … 38).
std::vector<hlo::Literal> Arguments(const hlo::HloComputation& fusion, bool distinct) {
  auto args = hlo::MakeRandomArguments(fusion, 11);
  EXPECT_TRUE(args.has_value());
  hlo::Literal& indices = (*args)[1];
  for (int64_t i = 0; i < indices.element_count(); ++i) {
    indices.SetInt(i, distinct ? (i < 19 ? 2 * i : 100 + i) : (i * 7) % 45 - 3);
  }
  return std::move(*args);
}

TEST(ScatterEmitterTest, RepeatedIndicesAccumulateWithAtomics) {
  for (const char* type : {"f32", "s32"}) {
    auto module = Parse(Scatter(type, "add", false));
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    ASSERT_EQ(analysis.emitter, analysis::EmitterKind::kScatter);
    EXPECT_EQ(ScatterFallbackReason(analysis), "");
    auto kernel = EmitKernel(analysis, nullptr, H100());
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    EXPECT_EQ(kernel->emitter, "scatter");
    std::string text = kernel->ToString();
    EXPECT_NE(text.find("scatter @s %out0 at update["), std::string::npos) << text;
    EXPECT_NE(text.find("atomic_add"), std::string::npos) << text;
    EXPECT_NE(text.find("out aliases %p0"), std::string::npos) << text;
    // One thread per update element: 300 x 2 x 6.
    EXPECT_GE(kernel->launch.block_count() * kernel->launch.threads_per_block(), 3600);
    std::vector<hlo::Literal> args = Arguments(*module->fusion(), false);
    for (const nlohmann::json& config :
         {nlohmann::json(nullptr), nlohmann::json{{"threads_per_block", 64}, {"chunks", 4}},
          nlohmann::json{{"vector", 2}}}) {
      EXPECT_EQ(HostMismatch(*module->fusion(), config, args), "") << type << " " << config;
    }
  }
}

TEST(ScatterEmitterTest, IntegerMaxUsesAnAtomicMax) {
  auto module = Parse(Scatter("s32", "maximum", false));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto kernel = EmitKernel(analysis, nullptr, H100());
  ASSERT_TRUE(kernel.has_value());
  EXPECT_NE(kernel->ToString().find("atomic_max"), std::string::npos);
  EXPECT_EQ(HostMismatch(*module->fusion(), nullptr, Arguments(*module->fusion(), false)), "");
}

TEST(ScatterEmitterTest, UniqueIndicesReadModifyWriteWithAnyCombiner) {
  auto module = Parse(Scatter("f32", "multiply", true));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  EXPECT_EQ(ScatterFallbackReason(analysis), "");
  auto kernel = EmitKernel(analysis, nullptr, H100());
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(kernel->emitter, "scatter");
  EXPECT_EQ(kernel->ToString().find("atomic"), std::string::npos);
  EXPECT_EQ(HostMismatch(*module->fusion(), nullptr, Arguments(*module->fusion(), true)), "");
}

TEST(ScatterEmitterTest, OrderDependentScattersKeepTheLoopKernel) {
  auto module = Parse(Scatter("f32", "multiply", false));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  EXPECT_NE(ScatterFallbackReason(analysis).find("updates must apply in order"), std::string::npos);
  auto kernel = EmitKernel(analysis, nullptr, H100());
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(kernel->emitter, "loop");
  EXPECT_EQ(HostMismatch(*module->fusion(), nullptr, Arguments(*module->fusion(), false)), "");
  // Its configs are the loop emitter's, over the output.
  EXPECT_EQ(DefaultConfig(analysis, H100()), DefaultLoopConfig(analysis, H100()).ToJson());
}

}  // namespace
}  // namespace tilesmith::emitters
