// `tilesmith predict`, run as a user would: the host and GPU models answer for a real
// fusion, CUDA configs carry their cubin's resources, and bad command lines say why.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace tilesmith {
namespace {

using nlohmann::json;

struct CommandRun {
  int exit_code;
  std::string out;
};

// Runs the binary with stderr folded into the output.
CommandRun Tilesmith(const std::string& arguments) {
  std::string command = std::string(TILESMITH_CLI) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  return {WEXITSTATUS(status), out};
}

std::string Gelu() { return TILESMITH_TEST_DATA_DIR "/tuner/gelu_f32.hlo"; }

TEST(PredictCommandTest, HostModelRanksTheSpace) {
  CommandRun run = Tilesmith("predict " + Gelu() + " --target host --top 4 --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  json answer = json::parse(run.out);
  EXPECT_EQ(answer["model"], "analytic-host");
  EXPECT_EQ(answer["source"], "predicted");
  EXPECT_EQ(answer["emitter"], "loop");
  EXPECT_EQ(answer["predicted"], answer["candidates"]);
  ASSERT_EQ(answer["top"].size(), 4u);
  double previous = 0;
  for (const json& row : answer["top"]) {
    double us = row["predicted_us"].get<double>();
    EXPECT_GE(us, previous);
    previous = us;
    EXPECT_TRUE(row["breakdown"].contains("memory_us"));
    EXPECT_TRUE(row["breakdown"]["calibration"].contains("memory_gbs"));
    EXPECT_FALSE(row["cubin"].get<bool>());
    // The best by a first prediction were compiled: the model priced their executed code.
    EXPECT_TRUE(row["host_code"].get<bool>()) << row.dump();
    EXPECT_GT(row["resources"]["executed_instructions"].get<double>(), 0);
    EXPECT_EQ(row["breakdown"]["work"], "executed code");
    EXPECT_GT(row["breakdown"]["code_us"].get<double>(), 0);
  }
  EXPECT_GE(answer["default_rank"].get<int64_t>(), 1);
}

TEST(PredictCommandTest, HostWithoutCompilingEstimatesTheWork) {
  CommandRun run = Tilesmith("predict " + Gelu() + " --target host --top 2 --compile 0 --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  json answer = json::parse(run.out);
  for (const json& row : answer["top"]) {
    EXPECT_FALSE(row["host_code"].get<bool>());
    EXPECT_EQ(row["breakdown"]["work"], "estimated");
  }
}

TEST(PredictCommandTest, CudaConfigsCarryCubinResources) {
  CommandRun run =
      Tilesmith("predict " + Gelu() + " --target cuda:sm_90 --top 2 --cubins 4 --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  json answer = json::parse(run.out);
  EXPECT_EQ(answer["model"], "analytic-gpu");
  ASSERT_EQ(answer["top"].size(), 2u);
  for (const json& row : answer["top"]) {
    EXPECT_TRUE(row["cubin"].get<bool>()) << row.dump();
    EXPECT_GT(row["resources"]["registers"].get<int64_t>(), 0);
    EXPECT_EQ(row["breakdown"]["resources"]["source"], "cubin");
    EXPECT_TRUE(row["breakdown"]["occupancy"].contains("blocks_per_sm"));
    EXPECT_TRUE(row["breakdown"]["waves"].contains("efficiency"));
  }
}

TEST(PredictCommandTest, TextNamesTheModelAndTheBreakdown) {
  CommandRun run = Tilesmith("predict " + Gelu() + " --target cuda:sm_90 --top 1 --cubins 0");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("model     analytic-gpu"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("#1 "), std::string::npos);
  EXPECT_EQ(run.out.find("#2 "), std::string::npos);
  EXPECT_NE(run.out.find("occupancy.blocks_per_sm="), std::string::npos);
  EXPECT_NE(run.out.find("resources.source=estimate"), std::string::npos);
}

TEST(PredictCommandTest, BadCommandLinesSayWhy) {
  CommandRun no_file = Tilesmith("predict --target host");
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_NE(no_file.out.find("expected one fusion file"), std::string::npos) << no_file.out;
  CommandRun bad_top = Tilesmith("predict " + Gelu() + " --top many");
  EXPECT_EQ(bad_top.exit_code, 2);
  EXPECT_NE(bad_top.out.find("--top expects a whole number"), std::string::npos) << bad_top.out;
  CommandRun ascend = Tilesmith("predict " + Gelu() + " --target ascend:910b1");
  EXPECT_EQ(ascend.exit_code, 1);
  EXPECT_NE(ascend.out.find("tilesmith schedule"), std::string::npos) << ascend.out;
  CommandRun bad_target = Tilesmith("predict " + Gelu() + " --target cuda:sm_1");
  EXPECT_EQ(bad_target.exit_code, 1) << bad_target.out;
  CommandRun missing = Tilesmith("predict /nonexistent.hlo --target host");
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  CommandRun help = Tilesmith("predict --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--compile N"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace tilesmith
