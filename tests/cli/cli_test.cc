// Runs the `tilesmith` binary as a user would and checks its stdout, stderr and exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/npy.h"
#include "compiler/hlo/parser.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

CommandResult Tilesmith(const std::string& arguments) {
  static int counter = 0;
  fs::path err_path = fs::temp_directory_path() / ("tilesmith_cli_err_" + std::to_string(getpid()) +
                                                   "_" + std::to_string(counter++));
  std::string command = std::string(TILESMITH_CLI) + " " + arguments + " 2>" + err_path.string();
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  std::ifstream err_file(err_path);
  std::stringstream err;
  err << err_file.rdbuf();
  fs::remove(err_path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err.str()};
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("tilesmith_cli_" + std::to_string(getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string File(const std::string& name, const std::string& contents = "") const {
    fs::path file = path_ / name;
    if (!contents.empty()) std::ofstream(file) << contents;
    return file.string();
  }

 private:
  fs::path path_;
};

TEST(CliTest, LayoutAnswersTheSpecExamples) {
  CommandResult run = Tilesmith("layout 'f32[3,5]{1,0:T(2,2)}' --index 2,3");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("linear index: 17"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("bytes:        96"), std::string::npos) << run.out;

  run = Tilesmith("layout 's32[4,8]{1,0:T(2,4)(2,1)}' --index 3,7 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["linear_index"], 31);
  EXPECT_EQ(json["shape"], "s32[4,8]{1,0:T(2,4)(2,1)}");
  EXPECT_EQ(json["tiled_dims"], nlohmann::json({2, 2, 1, 4, 2, 1}));
  EXPECT_EQ(json["elements"], 32);
  EXPECT_EQ(json["bytes"], 128);
}

TEST(CliTest, LayoutMapsSlotsBackAndRejectsBadIndices) {
  CommandResult run = Tilesmith("layout 'f32[3,5]{1,0:T(2,2)}' --slot 17 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["element"], nlohmann::json({2, 3}));
  run = Tilesmith("layout 'f32[3,5]{1,0:T(2,2)}' --slot 22 --json");  // row 4 is padding
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(nlohmann::json::parse(run.out)["element"].is_null());
  run = Tilesmith("layout 'f32[3,5]' --index 3,0");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("outside dimension 0"), std::string::npos) << run.err;
  run = Tilesmith("layout 'f32[3,5]{0,0}'");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("not a permutation"), std::string::npos) << run.err;
}

TEST(CliTest, ParseReportsLocatedErrors) {
  TempDir dir;
  std::string bad =
      dir.File("bad.hlo", "f {\n  p = f32[4] parameter(0)\n  ROOT t = f32[4] tanhh(p)\n}\n");
  CommandResult run = Tilesmith("parse " + bad);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, bad + ":3:19: error: unknown opcode 'tanhh'\n");
  EXPECT_EQ(run.out, "");
  run = Tilesmith("parse " + dir.File("missing.hlo"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cannot open"), std::string::npos);
}

TEST(CliTest, ParseAndFingerprintTheGeluExample) {
  std::string gelu = std::string(TILESMITH_SOURCE_DIR) + "/configs/examples/gelu.hlo";
  CommandResult parse = Tilesmith("parse " + gelu + " --json");
  ASSERT_EQ(parse.exit_code, 0) << parse.err;
  nlohmann::json summary = nlohmann::json::parse(parse.out);
  EXPECT_EQ(summary["fusion"], "gelu");
  EXPECT_EQ(summary["entry"], "main");
  CommandResult fingerprint = Tilesmith("fingerprint " + gelu);
  ASSERT_EQ(fingerprint.exit_code, 0);
  EXPECT_EQ(fingerprint.out, summary["fingerprint"].get<std::string>() + "  " + gelu + "\n");
  // The canonical text printed by `parse --canonical` is what is fingerprinted.
  CommandResult canonical = Tilesmith("parse " + gelu + " --canonical");
  auto digest = hlo::Sha256Hex(canonical.out);
  ASSERT_TRUE(digest.has_value());
  EXPECT_EQ(*digest, summary["fingerprint"]);
}

TEST(CliTest, EvalReadsAndWritesNpy) {
  TempDir dir;
  std::string hlo =
      dir.File("f.hlo",
               "f {\n  a = bf16[2,2] parameter(0)\n  b = s4[2,2]{1,0:E(4)} parameter(1)\n"
               "  c = bf16[2,2] convert(b)\n  m = bf16[2,2] multiply(a, c)\n"
               "  ROOT t = (bf16[2,2], s4[2,2]{1,0:E(4)}) tuple(m, b)\n}\n");
  auto shape_a = hlo::ParseShape("bf16[2,2]");
  auto shape_b = hlo::ParseShape("s4[2,2]{1,0:E(4)}");
  std::vector<double> a = {1.5, -2, 0.25, 3};
  std::vector<double> b = {2, -3, 7, -8};
  ASSERT_TRUE(hlo::WriteNpy(dir.File("a.npy"), hlo::LiteralFromDoubles(*shape_a, a)).has_value());
  ASSERT_TRUE(hlo::WriteNpy(dir.File("b.npy"), hlo::LiteralFromDoubles(*shape_b, b)).has_value());
  CommandResult run = Tilesmith("eval " + hlo + " --input " + dir.File("a.npy") + " --input " +
                                dir.File("b.npy") + " --output " + dir.File("m.npy") +
                                " --output " + dir.File("b_out.npy") + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["outputs"].size(), 2u);
  EXPECT_EQ(json["outputs"][0]["shape"], "bf16[2,2]{1,0}");
  auto product = hlo::ReadNpy(dir.File("m.npy"), *shape_a);
  ASSERT_TRUE(product.has_value()) << product.error().message;
  std::vector<double> expected = {3, 6, 1.75, -24};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(product->GetDouble(i), expected[i]);
  // The checksum is the SHA-256 of the written .npy file.
  std::ifstream file(dir.File("m.npy"), std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  EXPECT_EQ(json["outputs"][0]["checksum"], *hlo::Sha256Hex(bytes.str()));
}

TEST(CliTest, EvalExplainsMissingInputsAndIsDeterministicWithRandom) {
  TempDir dir;
  std::string hlo =
      dir.File("f.hlo", "f {\n  x = f32[3] parameter(0)\n  ROOT e = f32[3] exponential(x)\n}\n");
  CommandResult run = Tilesmith("eval " + hlo);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("'f' has 1 parameters (x: f32[3]{0}); give one --input"),
            std::string::npos)
      << run.err;
  CommandResult first = Tilesmith("eval " + hlo + " --random --seed 3 --json");
  CommandResult second = Tilesmith("eval " + hlo + " --random --seed 3 --json");
  CommandResult other = Tilesmith("eval " + hlo + " --random --seed 4 --json");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto checksum = [](const CommandResult& r) {
    return nlohmann::json::parse(r.out)["outputs"][0]["checksum"].get<std::string>();
  };
  EXPECT_EQ(checksum(first), checksum(second));
  EXPECT_NE(checksum(first), checksum(other));
  run = Tilesmith("eval " + hlo + " --input " + dir.File("nope.npy"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("nope.npy"), std::string::npos) << run.err;
}

TEST(CliTest, UsageErrorsAndHelp) {
  EXPECT_EQ(Tilesmith("").exit_code, 2);
  EXPECT_EQ(Tilesmith("frobnicate").exit_code, 2);
  CommandResult run = Tilesmith("parse --bogus x.hlo");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown option '--bogus'"), std::string::npos);
  for (const char* command : {"layout", "parse", "fingerprint", "eval"}) {
    CommandResult help = Tilesmith(std::string(command) + " --help");
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_NE(help.out.find("Usage: tilesmith " + std::string(command)), std::string::npos);
  }
  run = Tilesmith("version");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("tilesmith "), std::string::npos);
}

}  // namespace
}  // namespace tilesmith
