// `tilesmith split` run as a process on the matmul of tests/data and the (4,2) host mesh:
// the ranked table, --json, --check (every shown strategy simulated), and bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

namespace tilesmith {
namespace {

using cli_testing::RunTilesmithIn;
using nlohmann::json;

const std::string kMatmul = TILESMITH_TEST_DATA_DIR "/split_matmul.hlo";
const std::string kMesh = TILESMITH_SOURCE_DIR "/configs/meshes/host-4x2.json";

class SplitCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tilesmith-split-cli-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  cli_testing::CommandRun Run(const std::string& arguments) {
    return RunTilesmithIn(dir_, arguments);
  }
  std::filesystem::path dir_;
};

TEST_F(SplitCommandTest, RanksAndChecksTheSpecMatmul) {
  auto run = Run("split '" + kMatmul + "' --mesh '" + kMesh +
                 "' --in-specs \"P('i','j');P('j',None)\" --out-specs \"P('i',None)\" "
                 "--target cuda:sm_90 --top 0 --check --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json out = json::parse(run.out);
  EXPECT_EQ(out["kernel_times"], "predicted");
  EXPECT_EQ(out["target"], "cuda:sm_90");
  EXPECT_EQ(out["mesh"]["name"], "host-4x2");
  ASSERT_EQ(out["top"].size(), out["strategies"].get<size_t>());
  bool psum_over_j = false;
  double previous = 0;
  for (const json& row : out["top"]) {
    EXPECT_TRUE(row["check"]["matches"].get<bool>()) << row.dump();
    EXPECT_EQ(row["check"]["devices"], 8);
    EXPECT_EQ(row["kernel_source"], "predicted (analytic-gpu)");
    EXPECT_NEAR(row["total_us"].get<double>(),
                row["kernel_us"].get<double>() + row["comm_us"].get<double>(), 1e-6);
    EXPECT_GE(row["total_us"].get<double>(), previous);
    previous = row["total_us"].get<double>();
    EXPECT_EQ(row["out_specs"][0], "P('i')");
    EXPECT_EQ(row["in_specs"][0], "P('i', 'j')");
    // The spec's own strategy: a f32[2,6] x f32[6,4] kernel, then psum over 'j'.
    if (row["param_specs"] == json{"P('i', 'j')", "P('j')"}) {
      EXPECT_EQ(row["param_blocks"], (json{{2, 6}, {6, 4}}));
      ASSERT_EQ(row["collectives"].size(), 1u);
      EXPECT_EQ(row["collectives"][0]["op"], "psum");
      EXPECT_EQ(row["collectives"][0]["axis"], "j");
      EXPECT_EQ(row["collectives"][0]["bytes"], 2 * 4 * 4);
      psum_over_j = true;
    }
  }
  EXPECT_TRUE(psum_over_j);
}

TEST_F(SplitCommandTest, PrintsARankedTable) {
  auto run = Run("split '" + kMatmul + "' --mesh '" + kMesh +
                 "' --in-specs \"P('i','j');P('j',None)\" --out-specs \"P('i','j')\" "
                 "--target cuda:sm_90 --top 40 --check");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* text : {"mesh        host-4x2 (4,2) ('i','j'), 8 x host",
                           "predicted by the cost model, nothing measured", "#1  total ",
                           "    blocks  P('i', 'j') (2,6); P('j') (6,4) -> P('i') (2,4)  (out 0 "
                           "partial over 'j')",
                           "psum_scatter('j', dim 1) out 0: 32 B", "predicted (analytic-gpu)",
                           "assembled output matches the evaluator"}) {
    EXPECT_NE(run.out.find(text), std::string::npos) << text << "\n" << run.out;
  }
  EXPECT_EQ(run.out.find("MISMATCH"), std::string::npos) << run.out;
}

TEST_F(SplitCommandTest, HostKernelsArePredictedByDefault) {
  auto run = Run("split '" + kMatmul + "' --mesh '" + kMesh + "' --top 2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json out = json::parse(run.out);
  EXPECT_EQ(out["target"], "host");
  ASSERT_EQ(out["top"].size(), 2u);
  EXPECT_EQ(out["top"][0]["kernel_source"], "predicted (analytic-host)");
}

// --measure tunes every distinct per-device fusion on the host (a real worker, real
// timings, outputs verified against the evaluator) and stores the trials.
TEST_F(SplitCommandTest, MeasuresHostKernelsWithATune) {
  auto run = Run("split '" + kMatmul + "' --mesh '" + kMesh +
                 "' --in-specs \"P('i','j');P('j',None)\" --out-specs \"P('i',None)\" "
                 "--measure --measure-budget 1 --db split.db --top 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json out = json::parse(run.out);
  EXPECT_EQ(out["kernel_times"], "measured");
  ASSERT_EQ(out["top"].size(), 1u);
  EXPECT_EQ(out["top"][0]["kernel_source"], "measured (host, 1 config)");
  EXPECT_GT(out["top"][0]["kernel_us"].get<double>(), 0);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "split.db"));
}

TEST_F(SplitCommandTest, BadInputSaysWhat) {
  struct Case {
    std::string arguments;
    int exit_code;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"split '" + kMatmul + "'", 2, "--mesh MESH.json is required"},
           {"split '" + kMatmul + "' --mesh '" + kMesh + "' --in-specs \"P('i' None)\"", 2,
            "--in-specs: spec 0: partition spec 'P('i' None)', col 7: expected ',' or ')'"},
           {"split '" + kMatmul + "' --mesh no-such.json", 1, "no-such.json: cannot read"},
           {"split '" + kMatmul + "' --mesh '" + kMesh + "' --out-specs \"P(None, ('i','j'))\"", 1,
            "dim 1 of size 4 is not divisible by mesh axis 'i','j' of size 8"},
           {"split '" + kMatmul + "' --mesh '" + kMesh + "' --in-specs \"P('k')\"", 1,
            "names axis 'k', which mesh (4,2) ('i','j') does not have"},
           {"split '" + kMatmul + "' --mesh '" + kMesh + "' --measure --target cuda:sm_90", 1,
            "--measure times kernels on the host only"}}) {
    auto run = Run(c.arguments);
    EXPECT_EQ(run.exit_code, c.exit_code) << c.arguments << "\n" << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.arguments << "\n" << run.err;
  }
  auto help = Run("split --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Usage: tilesmith split FILE --mesh MESH.json"), std::string::npos)
      << help.out;
  EXPECT_NE(help.out.find("--in-specs SPECS"), std::string::npos) << help.out;
  EXPECT_NE(Run("--help").out.find("  split "), std::string::npos);
}

}  // namespace
}  // namespace tilesmith
