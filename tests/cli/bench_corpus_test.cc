// The fusions of real JAX programs in bench/corpus/ (written by bench/dump_jax_fusions.py,
// which needs JAX; this test does not): every file parses, its default config runs on the
// host and matches the evaluator, and the corpus still covers the programs and emitters
// the benchmarks report on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/cli_run.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<fs::path> BenchCorpus() {
  std::vector<fs::path> files;
  for (const auto& entry :
       fs::directory_iterator(fs::path(TILESMITH_SOURCE_DIR) / "bench/corpus")) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class BenchCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tilesmith_bench_corpus_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  cli_testing::CommandRun Tilesmith(const std::string& arguments) {
    return cli_testing::RunTilesmithIn(dir_, arguments);
  }

  fs::path dir_;
};

TEST_F(BenchCorpusTest, EveryFileParsesAndItsDefaultKernelMatchesTheEvaluator) {
  std::vector<fs::path> files = BenchCorpus();
  ASSERT_GE(files.size(), 8u) << "bench/corpus/ lost its fusions";
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    cli_testing::CommandRun parsed = Tilesmith("parse '" + file.string() + "'");
    EXPECT_EQ(parsed.exit_code, 0) << parsed.err;
    cli_testing::CommandRun checked =
        Tilesmith("check '" + file.string() + "' --target host --json");
    ASSERT_EQ(checked.exit_code, 0) << checked.out << checked.err;
    json result = json::parse(checked.out);
    EXPECT_EQ(result["checked"], 1);
    EXPECT_EQ(result["passed"], 1);
  }
}

TEST_F(BenchCorpusTest, CoversTheRealProgramsAndBothMainEmitters) {
  std::set<std::string> programs;
  std::set<std::string> emitters;
  for (const fs::path& file : BenchCorpus()) {
    std::string stem = file.stem().string();
    for (const char* program : {"mlp", "layer_norm", "softmax", "attention", "adam"}) {
      if (stem.rfind(std::string(program) + "_", 0) == 0) programs.insert(program);
    }
    cli_testing::CommandRun analyzed = Tilesmith("analyze '" + file.string() + "' --json");
    ASSERT_EQ(analyzed.exit_code, 0) << file << ": " << analyzed.err;
    emitters.insert(json::parse(analyzed.out)["emitter"].get<std::string>());
  }
  EXPECT_EQ(programs, (std::set<std::string>{"adam", "attention", "layer_norm", "mlp", "softmax"}));
  EXPECT_TRUE(emitters.count("loop")) << "no loop fusion left in bench/corpus/";
  EXPECT_TRUE(emitters.count("reduction")) << "no reduction fusion left in bench/corpus/";
}

}  // namespace
}  // namespace tilesmith
