// Every HLO file of the shared XLA corpus compiles for cuda:sm_90, to PTX and to a cubin
// with sane resources. The folder is walked at start-up, so new files are covered without
// touching this test. Skips, saying why, without the corpus or the CUDA toolkit.
#include <gtest/gtest.h>

#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

class NvptxCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NvptxCorpusTest, CompilesToPtxAndCubinForSm90) {
  TS_SKIP_WITHOUT_CUBINS();
  std::ifstream file(GetParam());
  std::stringstream text;
  text << file.rdbuf();
  auto result = testing::CompileHloForNvptx(text.str());
  ASSERT_TRUE(result.has_value()) << GetParam() << ": " << result.error().message;
  const NvptxKernel& kernel = result->compiled;
  EXPECT_NE(kernel.ptx.find(".visible .entry " + kernel.entry + "("), std::string::npos);
  EXPECT_EQ(kernel.ptx.find("__nv_"), std::string::npos) << "libdevice call left unresolved";
  EXPECT_EQ(kernel.cubin.bytes.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_GT(kernel.cubin.usage.registers, 0);
  EXPECT_LE(kernel.cubin.usage.registers, 255);
  EXPECT_EQ(kernel.cubin.usage.spill_bytes(), 0) << "spills in " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Xla, NvptxCorpusTest, ::testing::ValuesIn(testing::XlaCorpusFiles()),
                         testing::CorpusTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NvptxCorpusTest);

TEST(NvptxCorpusPresence, CorpusAndToolkitAreFound) {
  if (testing::CorpusDir().empty()) {
    GTEST_SKIP() << "no corpus: set TILESMITH_CORPUS_DIR to the shared corpus folder";
  }
  TS_SKIP_WITHOUT_CUBINS();
  EXPECT_GT(testing::XlaCorpusFiles().size(), 50u);
}

}  // namespace
}  // namespace tilesmith::codegen
