// `tilesmith generate`, run as a user would: files named by seed and index, the same text
// on every run, fusions that `tilesmith check` runs and verifies, and bad flags refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "compiler/hlo/parser.h"
#include "tests/cli/cli_run.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;
using cli_testing::RunTilesmithIn;

fs::path FreshDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("tilesmith_generate_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(GenerateCommandTest, WritesFilesByIndexTheSameOnEveryRun) {
  fs::path dir = FreshDir("files");
  auto run = RunTilesmithIn(dir, "generate --seed 3 --count 4 --max-bytes 64K --out a");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto again = RunTilesmithIn(dir, "generate --seed 3 --count 4 --max-bytes 64K --out b");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  for (int i = 0; i < 4; ++i) {
    std::string name = "gen_3_" + std::to_string(i) + ".hlo";
    std::string text = Read(dir / "a" / name);
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_EQ(text, Read(dir / "b" / name));
    auto module = hlo::ParseHloModule(text, name);
    EXPECT_TRUE(module.has_value()) << module.error().message;
    EXPECT_NE(run.out.find("a/" + name), std::string::npos) << run.out;
  }
  EXPECT_FALSE(fs::exists(dir / "a" / "gen_3_4.hlo"));

  // Without --out: the same modules on stdout, one `// -----` line between each two; --first
  // starts later in the same sequence.
  auto listed = RunTilesmithIn(dir, "generate --seed 3 --count 4 --max-bytes 64K");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(listed.out, Read(dir / "a/gen_3_0.hlo") + "// -----\n" + Read(dir / "a/gen_3_1.hlo") +
                            "// -----\n" + Read(dir / "a/gen_3_2.hlo") + "// -----\n" +
                            Read(dir / "a/gen_3_3.hlo"));
  auto third = RunTilesmithIn(dir, "generate --seed 3 --first 2 --max-bytes 64K");
  EXPECT_EQ(third.out, Read(dir / "a/gen_3_2.hlo"));

  auto json = RunTilesmithIn(dir, "generate --seed 3 --count 2 --max-bytes 64K --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json listing = nlohmann::json::parse(json.out);
  ASSERT_EQ(listing.size(), 2u);
  EXPECT_EQ(listing[1]["name"], "gen_3_1");
  EXPECT_EQ(listing[1]["text"], Read(dir / "a/gen_3_1.hlo"));
  EXPECT_LE(listing[1]["bytes"].get<int64_t>(), 64 << 10);
  fs::remove_all(dir);
}

TEST(GenerateCommandTest, GeneratedFusionsRunAndMatchTheEvaluator) {
  fs::path dir = FreshDir("check");
  auto run = RunTilesmithIn(dir, "generate --seed 17 --count 6 --max-bytes 256K --out .");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (int i = 0; i < 6; ++i) {
    std::string name = "gen_17_" + std::to_string(i) + ".hlo";
    auto check = RunTilesmithIn(dir, "check " + name + " --target host --configs 2");
    EXPECT_EQ(check.exit_code, 0) << name << "\n" << Read(dir / name) << check.out << check.err;
  }
  fs::remove_all(dir);
}

TEST(GenerateCommandTest, RefusesBadFlagsWithTheReason) {
  fs::path dir = FreshDir("errors");
  auto no_seed = RunTilesmithIn(dir, "generate --count 2");
  EXPECT_EQ(no_seed.exit_code, 2);
  EXPECT_NE(no_seed.err.find("--seed"), std::string::npos) << no_seed.err;
  auto tiny = RunTilesmithIn(dir, "generate --seed 1 --max-bytes 1000");
  EXPECT_EQ(tiny.exit_code, 2);
  EXPECT_NE(tiny.err.find("at least 16384"), std::string::npos) << tiny.err;
  auto garbled = RunTilesmithIn(dir, "generate --seed 1 --max-bytes 8X");
  EXPECT_EQ(garbled.exit_code, 2);
  EXPECT_NE(garbled.err.find("not a byte count"), std::string::npos) << garbled.err;
  auto help = RunTilesmithIn(dir, "generate --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--max-bytes"), std::string::npos) << help.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tilesmith
