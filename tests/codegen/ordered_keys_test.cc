// Float max and min reductions on the host fold ordered integer keys (ordered_keys.h): the
// keys order exactly as the floats do, and kernels that fold them (a reduction emitter's
// rows, an elemental reduce inside a loop fusion, a reduce-window) match the evaluator bit
// for bit on rows holding NaNs, signed zeros, infinities and subnormals, in every config.
#include "compiler/codegen/ordered_keys.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compiler/codegen/host_backend.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/literal_compare.h"
#include "compiler/hlo/parser.h"
#include "tests/codegen/host_check.h"

namespace tilesmith::codegen {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::string RowReduce(const std::string& op, const std::string& init) {
  return "HloModule m\n\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = "
         "f32[] " +
         op + "(a, b)\n}\n\nf {\n  p = f32[6,64] parameter(0)\n  c = f32[] constant(" + init +
         ")\n  ROOT r = f32[6] reduce(p, c), dimensions={1}, to_apply=r\n}\n\nENTRY main {\n  p = "
         "f32[6,64] parameter(0)\n  ROOT fusion = f32[6] fusion(p), kind=kInput, calls=f\n}\n";
}

// A softmax's first half in one loop fusion: each row's max, subtracted from the row.
std::string LoopWithRowMax() {
  return "HloModule m\n\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] "
         "maximum(a, b)\n}\n\nf {\n  p = f32[6,64] parameter(0)\n  c = f32[] constant(-inf)\n  m = "
         "f32[6] reduce(p, c), dimensions={1}, to_apply=r\n  b = f32[6,64] broadcast(m), "
         "dimensions={0}\n  ROOT s = f32[6,64] subtract(p, b)\n}\n\nENTRY main {\n  p = f32[6,64] "
         "parameter(0)\n  ROOT fusion = f32[6,64] fusion(p), kind=kLoop, calls=f\n}\n";
}

// Rows that catch every way a key could be wrong: a NaN first, last or alone among
// infinities; -0 beside +0 in both orders; only negatives (subnormals too); all NaN.
hlo::Literal SpecialRows() {
  hlo::Literal rows(hlo::Shape::Array(hlo::PrimitiveType::kF32, {6, 64}));
  std::vector<std::vector<float>> specials = {
      {kNaN, 1.0f, -kInf}, {-0.0f, 0.0f, -0.0f}, {-1e-45f, -3.0f, -kInf, -1e-40f},
      {kInf, 2.0f, kNaN},  {0.0f, -0.0f},        {-kNaN, kNaN, -kNaN}};
  for (int64_t row = 0; row < 6; ++row) {
    for (int64_t column = 0; column < 64; ++column) {
      const std::vector<float>& values = specials[row];
      // Each special value repeated through the row, at positions every lane count meets.
      float value = values[(column * 7 + row) % values.size()];
      if (row == 2 && column % 5 == 0) value = -2.5f;
      rows.SetDouble(row * 64 + column, value);
    }
  }
  return rows;
}

void ExpectBitExactInEveryConfig(const std::string& text) {
  auto module = hlo::ParseHloModule(text, "test");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  std::vector<hlo::Literal> arguments;
  arguments.push_back(SpecialRows());
  auto expected = hlo::Evaluate(fusion, arguments);
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  std::vector<const hlo::Literal*> leaves = LiteralLeaves(*expected);
  for (const nlohmann::json& config : DefaultAndSpreadConfigs(analysis, 6)) {
    emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
    auto kernel = emitters::EmitKernel(analysis, config, device);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    auto compiled = CompileForHost(std::move(*kernel));
    ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
    auto outputs = (*compiled)->Run(arguments);
    ASSERT_TRUE(outputs.has_value()) << outputs.error().message;
    EXPECT_EQ(FirstBitDifference((*outputs)[0], *leaves[0]), "") << config;
  }
}

TEST(OrderedKeysTest, MaxAndMinReducersAreRecognisedAndNothingElse) {
  auto keys_of = [](const std::string& text) {
    auto module = hlo::ParseHloModule(text, "test");
    EXPECT_TRUE(module.has_value());
    return OrderedKeysOf(*(*module)->fusion()->root());
  };
  auto max = keys_of(RowReduce("maximum", "-inf"));
  ASSERT_TRUE(max.has_value());
  EXPECT_TRUE(max->is_max);
  EXPECT_EQ(max->key_type, hlo::PrimitiveType::kS32);
  auto min = keys_of(RowReduce("minimum", "inf"));
  ASSERT_TRUE(min.has_value());
  EXPECT_FALSE(min->is_max);
  EXPECT_FALSE(keys_of(RowReduce("add", "0")).has_value());
}

TEST(OrderedKeysTest, ARowMaxMatchesTheEvaluatorBitForBitOnSpecialValues) {
  ExpectBitExactInEveryConfig(RowReduce("maximum", "-inf"));
}

TEST(OrderedKeysTest, ARowMinMatchesTheEvaluatorBitForBitOnSpecialValues) {
  ExpectBitExactInEveryConfig(RowReduce("minimum", "inf"));
}

TEST(OrderedKeysTest, AnInitThatWinsStillWins) {
  // The init is folded in once: a max whose init is above every element returns it.
  ExpectBitExactInEveryConfig(RowReduce("maximum", "1e+30"));
}

TEST(OrderedKeysTest, ARowMaxInsideALoopFusionMatchesBitForBit) {
  ExpectBitExactInEveryConfig(LoopWithRowMax());
}

}  // namespace
}  // namespace tilesmith::codegen
