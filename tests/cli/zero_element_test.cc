// Zero-element arrays are legal HLO. Every fusion in tests/data/zero_element goes through
// every command that reads a fusion, as a user would run them: each answers normally (exit
// 0), never with a signal. The indexing analysis is total over such shapes: a kernel gets an
// empty grid or an empty loop, its buffers may be 0 bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/cli_run.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;
using cli_testing::RunTilesmithIn;

std::vector<std::string> ZeroElementFusions() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(TILESMITH_TEST_DATA_DIR "/zero_element")) {
    if (entry.path().extension() == ".hlo") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class ZeroElementTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // The process id too: two test runs on one machine must not share (and delete) a folder.
    dir_ = fs::path(::testing::TempDir()) /
           ("zero_element_" + GetParam() + "_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    path_ = std::string(TILESMITH_TEST_DATA_DIR) + "/zero_element/" + GetParam() + ".hlo";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `tilesmith COMMAND FILE ARGS`; expects exit 0 and returns stdout.
  std::string Run(const std::string& command, const std::string& arguments = "") {
    auto run = RunTilesmithIn(dir_, command + " '" + path_ + "' " + arguments);
    EXPECT_EQ(run.exit_code, 0) << "tilesmith " << command << " " << path_ << "\n" << run.err;
    return run.out;
  }

  fs::path dir_;
  std::string path_;
};

TEST_P(ZeroElementTest, EveryCommandAnswersNormally) {
  Run("parse");
  Run("fingerprint");
  Run("eval", "--random --seed 1");
  nlohmann::json analysis = nlohmann::json::parse(Run("analyze", "--json"), nullptr, false);
  EXPECT_FALSE(analysis.is_discarded());
  for (std::string target : {"host", "cuda:sm_90"}) {
    Run("predict", "--target " + target);
    // Estimated without compiling, as the service predicts: a finite time.
    auto estimated = nlohmann::json::parse(
        Run("predict", "--target " + target + " --compile 0 --json --top 1"), nullptr, false);
    ASSERT_FALSE(estimated.is_discarded());
    ASSERT_EQ(estimated["top"].size(), 1u) << estimated.dump();
    EXPECT_TRUE(estimated["top"][0]["predicted_us"].is_number()) << estimated.dump();
    EXPECT_TRUE(estimated["failed"].empty()) << estimated.dump();
  }
  Run("compile", "--target host --emit kernel-ir");
  Run("compile", "--target cuda:sm_90 --emit ptx");
  Run("check", "--target host");
}

TEST_P(ZeroElementTest, TuneStoresAVerifiedBest) {
  std::string out = Run("tune", "--target host --db z.db --budget 2 --json");
  nlohmann::json result = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(result.is_discarded()) << out;
  EXPECT_FALSE(result["best"].is_null()) << out;
}

INSTANTIATE_TEST_SUITE_P(Fusions, ZeroElementTest, ::testing::ValuesIn(ZeroElementFusions()),
                         [](const auto& info) { return info.param; });

TEST(FileArgumentTest, ADirectoryIsNamedAsSuchNotParsedAsAnEmptyFile) {
  fs::path dir = fs::path(::testing::TempDir()) / "directory_argument";
  fs::create_directories(dir / "fusions");
  for (std::string command :
       {"parse fusions", "analyze fusions", "tune fusions --target host --db d.db"}) {
    auto run = RunTilesmithIn(dir, command);
    EXPECT_NE(run.exit_code, 0) << command;
    EXPECT_NE(run.err.find("fusions: is a directory"), std::string::npos) << command << run.err;
    EXPECT_EQ(run.err.find("empty"), std::string::npos) << command << run.err;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tilesmith
