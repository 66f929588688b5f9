// Transpose kernels of the XLA corpus's transpose folder: on the host, the default config
// and a spread of the space's valid configs match the evaluator; for sm_90 the default
// compiles without spills, with a shared tile and a barrier, and phase 2 reads the
// transposed values from shared memory, not global memory (epilogues of elementwise ops over
// bitcasts included). The packed variant matches the evaluator too; how it moves 16-bit
// elements through shared memory on sm_90 is data (tests/data/emitters/transpose/).
#include <gtest/gtest.h>

#include "compiler/codegen/host_backend.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/literal_compare.h"
#include "tests/codegen/host_check.h"
#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

class TransposeCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TransposeCorpusTest, DefaultAndSampledConfigsMatchTheEvaluatorOnTheHost) {
  auto module = hlo::ParseHloModuleFile(GetParam());
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  if (analysis.emitter != "transpose") {
    GTEST_SKIP() << "the analysis chose " << analysis.emitter << ": " << analysis.reason;
  }
  // Keeps the suite fast: the largest files are checked by `tilesmith check` (docs/cli.md).
  constexpr int64_t kMaxElements = 1 << 23;
  int64_t elements = 0;
  for (const hlo::HloInstruction* root : analysis.roots) elements += root->shape().ElementCount();
  if (elements > kMaxElements) GTEST_SKIP() << elements << " output elements";
  std::vector<nlohmann::json> configs = DefaultAndSpreadConfigs(analysis, 3);
  ASSERT_GT(configs.size(), 2u);
  auto arguments = hlo::MakeRandomArguments(fusion, /*seed=*/3);
  ASSERT_TRUE(arguments.has_value()) << arguments.error().message;
  auto expected = hlo::Evaluate(fusion, *arguments);
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  std::vector<const hlo::Literal*> leaves = LiteralLeaves(*expected);
  for (const nlohmann::json& config : configs) {
    auto check = CheckConfigOnHost(analysis, config, *arguments, leaves);
    ASSERT_TRUE(check.has_value()) << config << ": " << check.error().message;
    EXPECT_EQ(check->emitter, "transpose");
    EXPECT_EQ(check->phases, 2u);
    for (size_t i = 0; i < check->comparisons.size(); ++i) {
      EXPECT_TRUE(check->comparisons[i].matches)
          << config << " output " << i << ": " << check->comparisons[i].first_mismatch;
    }
  }
}

TEST_P(TransposeCorpusTest, PackedConfigsMatchTheEvaluatorOnTheHost) {
  auto module = hlo::ParseHloModuleFile(GetParam());
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  if (analysis.emitter != "transpose") GTEST_SKIP();
  if (analysis.transpose->keeps_minor_dimension) {
    GTEST_SKIP() << "packed configs need a transpose that moves the minor dim";
  }
  constexpr int64_t kMaxElements = 1 << 23;
  int64_t elements = 0;
  for (const hlo::HloInstruction* root : analysis.roots) elements += root->shape().ElementCount();
  if (elements > kMaxElements) GTEST_SKIP() << elements << " output elements";
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  std::vector<nlohmann::json> packed;
  for (const emitters::SpaceEntry& entry : emitters::ConfigSpace(analysis, device)) {
    if (entry.valid() && entry.config.contains("packed")) packed.push_back(entry.config);
  }
  ASSERT_GE(packed.size(), 4u);
  auto arguments = hlo::MakeRandomArguments(fusion, /*seed=*/5);
  ASSERT_TRUE(arguments.has_value()) << arguments.error().message;
  auto expected = hlo::Evaluate(fusion, *arguments);
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  std::vector<const hlo::Literal*> leaves = LiteralLeaves(*expected);
  // The first and last of each vector width: smallest and largest tiles, padded and not.
  for (size_t i : {size_t{0}, packed.size() / 2 - 1, packed.size() / 2, packed.size() - 1}) {
    auto check = CheckConfigOnHost(analysis, packed[i], *arguments, leaves);
    ASSERT_TRUE(check.has_value()) << packed[i] << ": " << check.error().message;
    for (size_t o = 0; o < check->comparisons.size(); ++o) {
      EXPECT_TRUE(check->comparisons[o].matches)
          << packed[i] << " output " << o << ": " << check->comparisons[o].first_mismatch;
    }
  }
}

TEST_P(TransposeCorpusTest, DefaultCompilesForSm90WithoutSpills) {
  TS_SKIP_WITHOUT_CUBINS();
  auto module = hlo::ParseHloModuleFile(GetParam());
  ASSERT_TRUE(module.has_value()) << module.error().message;
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*(*module)->fusion());
  if (analysis.emitter != "transpose") GTEST_SKIP();
  emitters::Target target = *emitters::Target::Parse("cuda:sm_90");
  auto kernel = emitters::EmitKernel(analysis, nullptr, emitters::DeviceInfo::ForTarget(target));
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  auto compiled = CompileForNvptx(*kernel, target, NvptxStage::kCubin);
  ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
  EXPECT_EQ(compiled->cubin.usage.spill_bytes(), 0);
  EXPECT_NE(compiled->ptx.find(".shared"), std::string::npos);
  EXPECT_EQ(testing::CountLines(compiled->ptx, "bar.sync"), 1);
  EXPECT_GE(compiled->cubin.usage.shared_bytes, kernel->SharedBytes());
  // Only scalar parameters (a broadcast operand) may still be read after the barrier.
  int scalars = 0;
  for (const hlo::HloInstruction* parameter : (*module)->fusion()->parameters()) {
    scalars += parameter->shape().rank() == 0;
  }
  std::string_view after = compiled->ptx;
  after = after.substr(after.find("bar.sync"));
  EXPECT_LE(testing::CountLines(after, "ld.global"), scalars)
      << "phase 2 recomputes the transpose from global memory";
}

INSTANTIATE_TEST_SUITE_P(Xla, TransposeCorpusTest,
                         ::testing::ValuesIn(testing::XlaCorpusFilesIn({"/transpose/"})),
                         testing::CorpusTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TransposeCorpusTest);

}  // namespace
}  // namespace tilesmith::codegen
