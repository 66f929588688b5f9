// The corpus folders of the concatenate, input slices, in-place dynamic-update-slice and
// scatter emitters also compile for cuda:sm_80 without spills in their default config
// (nvptx_corpus_test.cc covers sm_90 for the whole corpus). Skips without the corpus or
// the CUDA toolkit.
#include <gtest/gtest.h>

#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

std::vector<std::string> EmitterFolderFiles() {
  return testing::XlaCorpusFilesIn({"/concatenate/", "/input_slices/", "/dynamic_update_slice/",
                                    "/scatter/", "/reduce_row/", "/reduce_multirow/",
                                    "/reduce_column/", "/reduce_column_small/"});
}

class EmitterFoldersSm80Test : public ::testing::TestWithParam<std::string> {};

TEST_P(EmitterFoldersSm80Test, CompilesWithoutSpills) {
  TS_SKIP_WITHOUT_CUBINS();
  std::ifstream file(GetParam());
  std::stringstream text;
  text << file.rdbuf();
  auto result = testing::CompileHloForNvptx(text.str(), NvptxStage::kCubin, nullptr, "cuda:sm_80");
  ASSERT_TRUE(result.has_value()) << GetParam() << ": " << result.error().message;
  const ResourceUsage& usage = result->compiled.cubin.usage;
  EXPECT_GT(usage.registers, 0);
  EXPECT_EQ(usage.spill_bytes(), 0) << "spills in " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Xla, EmitterFoldersSm80Test, ::testing::ValuesIn(EmitterFolderFiles()),
                         testing::CorpusTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(EmitterFoldersSm80Test);

}  // namespace
}  // namespace tilesmith::codegen
