// Transpose kernels of the XLA corpus's transpose folder: on the host, the default config
// and a spread of the space's valid configs match the evaluator; for sm_90 the default
// compiles without spills, with a shared tile and a barrier, and phase 2 reads the
// transposed values from shared memory, not global memory (epilogues of elementwise ops over
// bitcasts included).
#include <gtest/gtest.h>

#include "compiler/codegen/host_backend.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/literal_compare.h"
#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

std::vector<std::string> TransposeCorpusFiles() {
  std::vector<std::string> files;
  for (const std::string& file : testing::XlaCorpusFiles()) {
    if (file.find("/transpose/") != std::string::npos) files.push_back(file);
  }
  return files;
}

class TransposeCorpusTest : public ::testing::TestWithParam<std::string> {};

// Outputs of a tuple result, depth first.
void Flatten(const hlo::Literal& value, std::vector<const hlo::Literal*>& leaves) {
  if (!value.shape().IsTuple()) {
    leaves.push_back(&value);
    return;
  }
  for (const hlo::Literal& element : value.tuple_elements()) Flatten(element, leaves);
}

TEST_P(TransposeCorpusTest, DefaultAndSampledConfigsMatchTheEvaluatorOnTheHost) {
  auto module = hlo::ParseHloModuleFile(GetParam());
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  if (analysis.emitter != analysis::EmitterKind::kTranspose) {
    GTEST_SKIP() << "the analysis chose " << analysis::EmitterKindName(analysis.emitter) << ": "
                 << analysis.reason;
  }
  // Keeps the suite fast: the largest files are checked by `tilesmith check` (README).
  constexpr int64_t kMaxElements = 1 << 23;
  int64_t elements = 0;
  for (const hlo::HloInstruction* root : analysis.roots) elements += root->shape().ElementCount();
  if (elements > kMaxElements) GTEST_SKIP() << elements << " output elements";
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  std::vector<nlohmann::json> configs = {nullptr};
  std::vector<emitters::SpaceEntry> space = emitters::ConfigSpace(analysis, device);
  std::vector<nlohmann::json> valid;
  for (const emitters::SpaceEntry& entry : space) {
    if (entry.valid()) valid.push_back(entry.config);
  }
  ASSERT_FALSE(valid.empty());
  for (size_t i = 0; i < 3; ++i) configs.push_back(valid[i * (valid.size() - 1) / 2]);

  auto arguments = hlo::MakeRandomArguments(fusion, /*seed=*/3);
  ASSERT_TRUE(arguments.has_value()) << arguments.error().message;
  auto expected = hlo::Evaluate(fusion, *arguments);
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  std::vector<const hlo::Literal*> leaves;
  Flatten(*expected, leaves);
  for (const nlohmann::json& config : configs) {
    auto kernel = emitters::EmitKernel(analysis, config, device);
    ASSERT_TRUE(kernel.has_value()) << config << ": " << kernel.error().message;
    EXPECT_EQ(kernel->emitter, "transpose");
    EXPECT_EQ(kernel->phases.size(), 2u);
    auto compiled = CompileForHost(std::move(*kernel));
    ASSERT_TRUE(compiled.has_value()) << config << ": " << compiled.error().message;
    auto outputs = (*compiled)->Run(*arguments);
    ASSERT_TRUE(outputs.has_value()) << outputs.error().message;
    ASSERT_EQ(outputs->size(), leaves.size());
    for (size_t i = 0; i < leaves.size(); ++i) {
      hlo::Comparison comparison = hlo::CompareLiterals((*outputs)[i], *leaves[i]);
      EXPECT_TRUE(comparison.matches)
          << config << " output " << i << ": " << comparison.first_mismatch;
    }
  }
}

TEST_P(TransposeCorpusTest, DefaultCompilesForSm90WithoutSpills) {
  TS_SKIP_WITHOUT_CUBINS();
  auto module = hlo::ParseHloModuleFile(GetParam());
  ASSERT_TRUE(module.has_value()) << module.error().message;
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*(*module)->fusion());
  if (analysis.emitter != analysis::EmitterKind::kTranspose) GTEST_SKIP();
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

INSTANTIATE_TEST_SUITE_P(Xla, TransposeCorpusTest, ::testing::ValuesIn(TransposeCorpusFiles()),
                         testing::CorpusTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TransposeCorpusTest);

}  // namespace
}  // namespace tilesmith::codegen
