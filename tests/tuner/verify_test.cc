// Verification of mixed-precision fusions: each output is judged at the narrowest precision
// its value was rounded to, so two correct kernels that differ by one bf16 ulp after an f32
// ulp of difference was rounded to bf16 both pass, and a real error still fails.
#include "tuner/verify.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "compiler/hlo/parser.h"
#include "db/sqlite_store.h"
#include "tests/tuner/tuner_test_util.h"

namespace tilesmith::tuner {
namespace {

using hlo::PrimitiveType;

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

hlo::Literal F32(std::vector<float> values) {
  hlo::Literal literal(*hlo::ParseShape("f32[" + std::to_string(values.size()) + "]"));
  for (size_t i = 0; i < values.size(); ++i) literal.SetDouble(i, values[i]);
  return literal;
}

TEST(OutputPrecisionsTest, FollowTheNarrowestRoundingOnTheWayToEachOutput) {
  auto module = Parse(R"(
HloModule mixed
fused {
  p = bf16[8] parameter(0)
  x = f32[8] convert(p)
  e = f32[8] exponential(x)
  rounded = bf16[8] convert(e)
  back = f32[8] convert(rounded)
  through_bf16 = f32[8] multiply(back, x)
  only_f32 = f32[8] negate(x)
  h = f16[8] convert(x)
  ROOT t = (f32[8], f32[8], f16[8]) tuple(through_bf16, only_f32, h)
})");
  ASSERT_NE(module, nullptr);
  std::vector<PrimitiveType> precisions = OutputPrecisions(*module->fusion());
  // A bf16 parameter is exact in both kernels and does not count; a bf16 rounding does.
  EXPECT_EQ(precisions, (std::vector<PrimitiveType>{PrimitiveType::kBF16, PrimitiveType::kF32,
                                                    PrimitiveType::kF16}));
}

TEST(CompareOutputsTest, OneBf16UlpPassesOnlyWhereTheValuePassedThroughBf16) {
  // The transformer block's case: -0.07373047 where the reference has -0.07324219.
  std::vector<hlo::Literal> actual;
  actual.push_back(F32({1.0f, -0.07373047f}));
  hlo::Literal reference = F32({1.0f, -0.07324219f});
  std::vector<const hlo::Literal*> expected = {&reference};
  EXPECT_FALSE(CompareOutputs(actual, expected).matches);
  std::vector<PrimitiveType> through_bf16 = {PrimitiveType::kBF16};
  OutputComparison judged = CompareOutputs(actual, expected, 1, through_bf16);
  EXPECT_TRUE(judged.matches) << judged.first_mismatch;
  EXPECT_GT(judged.relative_tolerance, 1e-3);
  std::vector<PrimitiveType> only_f32 = {PrimitiveType::kF32};
  EXPECT_FALSE(CompareOutputs(actual, expected, 1, only_f32).matches);
}

TEST(CompareOutputsTest, ARealErrorFailsAtAnyPrecision) {
  std::vector<hlo::Literal> actual;
  actual.push_back(F32({1.0f, -0.081f}));  // 10% off
  hlo::Literal reference = F32({1.0f, -0.07324219f});
  std::vector<const hlo::Literal*> expected = {&reference};
  for (PrimitiveType precision : {PrimitiveType::kBF16, PrimitiveType::kF16}) {
    std::vector<PrimitiveType> precisions = {precision};
    EXPECT_FALSE(CompareOutputs(actual, expected, 1, precisions).matches);
  }
  // A narrower precision never tightens a wider one.
  std::vector<PrimitiveType> wider = {PrimitiveType::kF64};
  std::vector<hlo::Literal> close;
  close.push_back(F32({1.0f, -0.0732422f}));
  EXPECT_TRUE(CompareOutputs(close, expected, 1, wider).matches);
}

// The real fusion, dumped by XLA:CPU from a bf16 transformer block: every candidate failed
// verification before; now they verify, and a corrupted output still does not.
TEST(MixedPrecisionTuneTest, TheExactGeluChainVerifiesAndACorruptedOutputDoesNot) {
  std::string path = TILESMITH_TEST_DATA_DIR "/tuner/gelu_erfc_bf16_chain.hlo";
  testing::TempDir dir;
  for (bool corrupt : {false, true}) {
    if (corrupt) setenv("TILESMITH_WORKER_FAULT", R"({"wrong_result": {}})", 1);
    std::string db = dir.path() + (corrupt ? "/corrupt.db" : "/ok.db");
    int code = std::system((std::string(TILESMITH_CLI) + " tune " + path +
                            " --target host --budget 4 --strategy exhaustive --quiet --seed 3" +
                            " --warmup-ms 1 --rep-ms 2 --db " + db + " > /dev/null 2>&1")
                               .c_str());
    unsetenv("TILESMITH_WORKER_FAULT");
    auto store = db::SqliteStore::Open(db);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    auto trials = (*store)->Measurements({});
    ASSERT_TRUE(trials.has_value());
    ASSERT_EQ(trials->size(), 4u) << "exit " << code;
    for (const db::MeasurementRecord& trial : *trials) {
      EXPECT_EQ(trial.status, corrupt ? db::TrialStatus::kWrongResult : db::TrialStatus::kOk)
          << trial.message;
    }
  }
}

}  // namespace
}  // namespace tilesmith::tuner
