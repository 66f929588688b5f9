// Reduction kernels of the XLA corpus's reduce_* folders: on the host, the default config and
// a spread of the space's valid configs match the evaluator (within the tolerance of a
// reassociated sum); for sm_90 the default compiles without spills, reduces across lanes with
// `shfl.sync.bfly`, and reads the epilogue's reduced value from registers, not by reducing
// again from global memory after the last shuffle.
#include <gtest/gtest.h>

#include "compiler/codegen/host_backend.h"
#include "compiler/emitters/reduction_emitter.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/literal_compare.h"
#include "tests/codegen/host_check.h"
#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

class ReductionCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReductionCorpusTest, DefaultAndSampledConfigsMatchTheEvaluatorOnTheHost) {
  auto module = hlo::ParseHloModuleFile(GetParam());
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  if (analysis.emitter != "reduction") {
    GTEST_SKIP() << "the analysis chose " << analysis.emitter << ": " << analysis.reason;
  }
  std::vector<nlohmann::json> configs = DefaultAndSpreadConfigs(analysis, 3);
  ASSERT_GT(configs.size(), 2u);
  auto arguments = hlo::MakeRandomArguments(fusion, /*seed=*/5);
  ASSERT_TRUE(arguments.has_value()) << arguments.error().message;
  auto expected = hlo::Evaluate(fusion, *arguments);
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  std::vector<const hlo::Literal*> leaves = LiteralLeaves(*expected);
  for (const nlohmann::json& config : configs) {
    auto check = CheckConfigOnHost(analysis, config, *arguments, leaves);
    ASSERT_TRUE(check.has_value()) << config << ": " << check.error().message;
    EXPECT_EQ(check->emitter, "reduction");
    for (size_t i = 0; i < check->comparisons.size(); ++i) {
      EXPECT_TRUE(check->comparisons[i].matches)
          << config << " output " << i << ": " << check->comparisons[i].first_mismatch;
    }
  }
}

TEST_P(ReductionCorpusTest, DefaultCompilesForSm90WithShufflesAndNoSpills) {
  TS_SKIP_WITHOUT_CUBINS();
  auto module = hlo::ParseHloModuleFile(GetParam());
  ASSERT_TRUE(module.has_value()) << module.error().message;
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*(*module)->fusion());
  if (analysis.emitter != "reduction") GTEST_SKIP();
  emitters::Target target = *emitters::Target::Parse("cuda:sm_90");
  auto kernel = emitters::EmitKernel(analysis, nullptr, emitters::DeviceInfo::ForTarget(target));
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  auto compiled = CompileForNvptx(*kernel, target, NvptxStage::kCubin);
  ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
  EXPECT_EQ(compiled->cubin.usage.spill_bytes(), 0);
  bool shuffles = false;
  for (const emitters::Phase& phase : kernel->phases) {
    for (const emitters::LoopStmt& loop : phase.loops) {
      for (const emitters::BodyStmt& stmt : loop.body) {
        shuffles = shuffles || std::holds_alternative<emitters::ShuffleStmt>(stmt);
      }
    }
  }
  EXPECT_EQ(compiled->ptx.find("shfl.sync.bfly") != std::string::npos, shuffles);
  EXPECT_EQ(testing::CountLines(compiled->ptx, "bar.sync"),
            static_cast<int>(kernel->phases.size()) - 1);
  EXPECT_GE(compiled->cubin.usage.shared_bytes, kernel->SharedBytes());
  if (kernel->phases.size() < 2) return;
  // After the barrier only scalar parameters (an init, a broadcast operand) may be read: the
  // epilogue gets the reduced value bound, it does not reduce again from global memory.
  int scalars = 0;
  for (const hlo::HloInstruction* parameter : (*module)->fusion()->parameters()) {
    scalars += parameter->shape().rank() == 0;
  }
  std::string_view after = compiled->ptx;
  after = after.substr(after.find("bar.sync"));
  EXPECT_LE(testing::CountLines(after, "ld.global"), scalars);
}

INSTANTIATE_TEST_SUITE_P(Xla, ReductionCorpusTest,
                         ::testing::ValuesIn(testing::XlaCorpusFilesIn({"/reduce_"})),
                         testing::CorpusTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ReductionCorpusTest);

}  // namespace
}  // namespace tilesmith::codegen
