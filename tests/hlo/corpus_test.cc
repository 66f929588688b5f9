// Every HLO file of the shared XLA emitter corpus must parse, print back as a fixed point,
// keep its fingerprint through printing, and evaluate on random inputs. The folder is
// walked at start-up, so new files are covered without touching this test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"

namespace tilesmith::hlo {
namespace {

namespace fs = std::filesystem;

// $TILESMITH_CORPUS_DIR, else ../shared/corpus next to the repository, else /work/shared.
fs::path CorpusDir() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("TILESMITH_CORPUS_DIR")) candidates.emplace_back(env);
  candidates.emplace_back(TILESMITH_DEFAULT_CORPUS_DIR);
  candidates.emplace_back("/work/shared/corpus");
  for (const fs::path& candidate : candidates) {
    if (fs::is_directory(candidate / "xla")) return candidate;
  }
  return {};
}

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  fs::path dir = CorpusDir();
  if (dir.empty()) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir / "xla")) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

class XlaCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(XlaCorpusTest, ParsesRoundTripsFingerprintsAndEvaluates) {
  const std::string& path = GetParam();
  auto module = ParseHloModuleFile(path);
  ASSERT_TRUE(module.has_value()) << module.error().message;

  std::string printed = PrintModule(**module);
  auto reparsed = ParseHloModule(printed, path + " (printed)");
  ASSERT_TRUE(reparsed.has_value()) << reparsed.error().message << "\n" << printed;
  EXPECT_EQ(PrintModule(**reparsed), printed);

  auto fingerprint = FusionFingerprint(**module);
  auto reparsed_fingerprint = FusionFingerprint(**reparsed);
  ASSERT_TRUE(fingerprint.has_value() && reparsed_fingerprint.has_value());
  EXPECT_EQ(*fingerprint, *reparsed_fingerprint);

  const HloComputation& fusion = *(*module)->fusion();
  auto arguments = MakeRandomArguments(fusion, /*seed=*/1);
  ASSERT_TRUE(arguments.has_value()) << arguments.error().message;
  auto result = Evaluate(fusion, *arguments);
  if (!result && result.error().code == ErrorCode::kResourceExhausted) {
    GTEST_SKIP() << "too large to evaluate in memory: " << result.error().message;
  }
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_TRUE(result->shape().EqualsIgnoringLayout(fusion.root()->shape()));
  // Evaluation is deterministic.
  auto again = Evaluate(fusion, *arguments);
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(*again == *result);
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  fs::path path(info.param);
  std::string name = path.parent_path().filename().string() + "_" + path.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Xla, XlaCorpusTest, ::testing::ValuesIn(CorpusFiles()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(XlaCorpusTest);

TEST(XlaCorpusPresence, CorpusIsFound) {
  if (CorpusDir().empty()) {
    GTEST_SKIP() << "no corpus: set TILESMITH_CORPUS_DIR to the shared corpus folder";
  }
  EXPECT_GT(CorpusFiles().size(), 50u);
}

}  // namespace
}  // namespace tilesmith::hlo
