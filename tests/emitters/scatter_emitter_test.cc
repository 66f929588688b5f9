// The scatter emitter's kernels run on the host against the evaluator with indices chosen to
// repeat and to fall outside the operand (or, for unique indices, to be distinct), and why a
// scatter keeps the loop emitter's in-order kernel. What each kernel is (atomics where the
// combiner has one, a plain read-modify-write for unique indices, the aliased output, the
// launch, the loop fallback) is data: tests/data/emitters/scatter/.
#include "compiler/emitters/scatter_emitter.h"

#include <gtest/gtest.h>

#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::H100;
using testing::HostMismatch;
using testing::Parse;

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
    ASSERT_EQ(analysis.emitter, "scatter");
    EXPECT_EQ(ScatterFallbackReason(analysis), "");
    std::vector<hlo::Literal> args = Arguments(*module->fusion(), false);
    for (const nlohmann::json& config :
         {nlohmann::json(nullptr), nlohmann::json{{"threads_per_block", 64}, {"chunks", 4}},
          nlohmann::json{{"vector", 2}}}) {
      EXPECT_EQ(HostMismatch(*module->fusion(), config, args), "") << type << " " << config;
    }
  }
}

TEST(ScatterEmitterTest, IntegerMaxMatchesTheEvaluator) {
  auto module = Parse(Scatter("s32", "maximum", false));
  EXPECT_EQ(HostMismatch(*module->fusion(), nullptr, Arguments(*module->fusion(), false)), "");
}

TEST(ScatterEmitterTest, UniqueIndicesReadModifyWriteWithAnyCombiner) {
  auto module = Parse(Scatter("f32", "multiply", true));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  EXPECT_EQ(ScatterFallbackReason(analysis), "");
  EXPECT_EQ(HostMismatch(*module->fusion(), nullptr, Arguments(*module->fusion(), true)), "");
}

TEST(ScatterEmitterTest, OrderDependentScattersKeepTheLoopKernel) {
  auto module = Parse(Scatter("f32", "multiply", false));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  EXPECT_NE(ScatterFallbackReason(analysis).find("updates must apply in order"), std::string::npos);
  EXPECT_EQ(HostMismatch(*module->fusion(), nullptr, Arguments(*module->fusion(), false)), "");
  // Its configs are the loop emitter's, over the output.
  EXPECT_EQ(DefaultConfig(analysis, H100()), DefaultLoopConfig(analysis, H100()).ToJson());
}

}  // namespace
}  // namespace tilesmith::emitters
