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
#include "support/sha256.h"

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
  auto digest = Sha256Hex(canonical.out);
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
  EXPECT_EQ(json["outputs"][0]["checksum"], *Sha256Hex(bytes.str()));
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

// AscGraph requests go through the same commands, lowered to an HLO fusion.
std::string Example(const std::string& name) {
  return std::string(TILESMITH_SOURCE_DIR) + "/configs/examples/ascgraph/" + name;
}

TEST(CliTest, ParseEmitsTheLoweredFusionOfAnAscGraph) {
  std::string softmax = Example("softmax_last_axis.ascgraph.txt");
  CommandResult run = Tilesmith("parse " + softmax + " --sizes s0=4,s1=16 --emit hlo");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("reduce(Data_0, Max_0), dimensions={1}, to_apply=maximum_f32"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("ROOT fusion = f32[4,16]{1,0} fusion(p0), kind=kLoop, "
                         "calls=softmax_last_axis"),
            std::string::npos);
  // What it prints is HLO: it parses, and its fusion has the AscGraph's fingerprint.
  auto printed = hlo::ParseHloModule(run.out, "printed");
  ASSERT_TRUE(printed.has_value()) << printed.error().message;
  CommandResult fingerprint = Tilesmith("fingerprint " + softmax + " --sizes s0=4,s1=16");
  ASSERT_EQ(fingerprint.exit_code, 0) << fingerprint.err;
  EXPECT_EQ(fingerprint.out, *hlo::FusionFingerprint(**printed) + "  " + softmax + "\n");
  // The key covers the size bindings.
  CommandResult other = Tilesmith("fingerprint " + softmax + " --sizes s0=4,s1=32");
  EXPECT_NE(other.out.substr(0, 64), fingerprint.out.substr(0, 64));

  CommandResult canonical = Tilesmith("parse " + softmax + " --sizes s0=4,s1=16 --canonical");
  ASSERT_EQ(canonical.exit_code, 0) << canonical.err;
  EXPECT_EQ(*Sha256Hex(canonical.out), fingerprint.out.substr(0, 64));
}

TEST(CliTest, ParseJsonDescribesAnAscGraphRequest) {
  // The JSON request carries its own sizes; --sizes overrides them.
  std::string request = Example("leaky_relu_axpy.ascgraph.json");
  CommandResult run = Tilesmith("parse " + request + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json summary = nlohmann::json::parse(run.out);
  EXPECT_EQ(summary["format"], "ascgraph");
  EXPECT_EQ(summary["graph"], "leaky_relu_axpy");
  EXPECT_EQ(summary["fusion"], "leaky_relu_axpy");
  EXPECT_EQ(summary["sizes"], nlohmann::json({{"s0", 96}, {"s1", 512}}));
  EXPECT_EQ(summary["computations"][0]["root_shape"], "f32[96,512]{1,0}");
  run = Tilesmith("parse " + request + " --json --sizes s1=8");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["sizes"], nlohmann::json({{"s0", 96}, {"s1", 8}}));
  run =
      Tilesmith("parse " + std::string(TILESMITH_SOURCE_DIR) + "/configs/examples/gelu.hlo --json");
  EXPECT_EQ(nlohmann::json::parse(run.out)["format"], "hlo");
}

TEST(CliTest, EvalRunsAnAscGraphOnNpyInputs) {
  TempDir dir;
  std::string data =
      std::string(TILESMITH_SOURCE_DIR) + "/tests/data/ascgraph/examples/broadcast_add_row/";
  CommandResult run = Tilesmith("eval " + Example("broadcast_add_row.ascgraph.txt") +
                                " --sizes s0=4,s1=6 --input " + data + "input0.npy --input " +
                                data + "input1.npy --output " + dir.File("out.npy"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto expected = hlo::ReadNpy(data + "output0.npy");
  auto actual = hlo::ReadNpy(dir.File("out.npy"));
  ASSERT_TRUE(expected.has_value() && actual.has_value());
  EXPECT_EQ(*actual, *expected);  // x + row is exact in f32
  run = Tilesmith("eval " + Example("broadcast_add_row.ascgraph.txt") + " --sizes s0=4,s1=6");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("has 2 parameters (Data_0: f32[4,6]{1,0}, Data_1: f32[1,6]{1,0})"),
            std::string::npos)
      << run.err;
}

TEST(CliTest, AscGraphFormatAndErrors) {
  TempDir dir;
  std::string abs_chain = Example("abs_chain_3d.ascgraph.txt");
  // Unbound size variables are named, with the file.
  CommandResult run = Tilesmith("parse " + abs_chain);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, abs_chain +
                         ": error: axis 'z0' (id 0) size: size variable 's0' is not "
                         "bound (in 's0')\n");
  // --format decides when the name does not.
  std::ifstream source(abs_chain);
  std::stringstream text;
  text << source.rdbuf();
  std::string renamed = dir.File("graph.txt", text.str());
  run = Tilesmith("parse " + renamed + " --format ascgraph --sizes s0=2,s1=3,s2=4");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  run = Tilesmith("parse " + renamed + " --sizes s0=2");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--sizes applies to AscGraph input only"), std::string::npos) << run.err;
  run = Tilesmith("parse " + abs_chain + " --format onnx");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--format must be hlo or ascgraph"), std::string::npos);
  run = Tilesmith("parse " + abs_chain + " --sizes s0");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--sizes: size binding 's0': expected NAME=VALUE"), std::string::npos);
  run = Tilesmith("parse " + abs_chain + " --sizes s0=2,s1=3,s2=4 --emit graph");
  EXPECT_EQ(run.exit_code, 2);
  // Text-format errors are located as protobuf reports them.
  std::string bad = dir.File("bad.ascgraph.txt", "asc_graph_attr {\n  axis { size: 4 }\n}\n");
  run = Tilesmith("parse " + bad);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, bad + ":2:16: error: Expected string, got: 4\n");
}

TEST(CliTest, TheRealAscGraphOfTheCorpusLowers) {
  const char* env = std::getenv("TILESMITH_CORPUS_DIR");
  std::string corpus = env ? env : TILESMITH_DEFAULT_CORPUS_DIR;
  std::string graph = corpus + "/ascgraph/abs_chain_f32_1024x1025x10.ascgraph.txt";
  if (!fs::exists(graph)) GTEST_SKIP() << "no corpus at " << corpus;
  CommandResult run = Tilesmith("parse " + graph + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json summary = nlohmann::json::parse(run.out);
  EXPECT_EQ(summary["fusion"], "Abs_5_out0_graph");
  EXPECT_EQ(summary["computations"][0]["root_shape"], "f32[1024,1025,10]{2,1,0}");
  run = Tilesmith("fingerprint " + graph);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, summary["fingerprint"].get<std::string>() + "  " + graph + "\n");
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

// `tilesmith schedule`: Ascend tiling decisions predicted by the public cost model.
std::string CorpusAbsChain() {
  const char* env = std::getenv("TILESMITH_CORPUS_DIR");
  return std::string(env ? env : TILESMITH_DEFAULT_CORPUS_DIR) +
         "/ascgraph/abs_chain_f32_1024x1025x10.ascgraph.txt";
}

TEST(CliTest, ScheduleTheCorpusGraphOnA910B1) {
  std::string graph = CorpusAbsChain();
  if (!fs::exists(graph)) GTEST_SKIP() << "no corpus at " << graph;
  CommandResult run = Tilesmith("schedule " + graph + " --platform 910b1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The worked example of tests/costmodel/schedule_test.cc.
  EXPECT_NE(run.out.find("tiling data   block_dim=48 ub_size=194496 tiling_key=0 "
                         "z0z1z2t_size=8104 z0z1z2Tb_size=27"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("split z0z1z2 -> z0z1z2T (1296) x z0z1z2t (8104)"), std::string::npos);
  EXPECT_NE(run.out.find("objective 103758 (MTE2-bound"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("UB 194496 / 196352 bytes, block_dim 48 / 48 cores"), std::string::npos);

  run = Tilesmith("schedule " + graph + " --platform 910b4 --json --alternatives 3");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["target"], "ascend:910b4");
  EXPECT_EQ(json["predicted"], true);
  EXPECT_EQ(json["platform"]["vector_cores"], 40);
  EXPECT_EQ(json["tiling_data"]["block_dim"], 40);
  EXPECT_EQ(json["constraints"]["ok"], true);
  EXPECT_LE(json["constraints"]["ub_used"].get<int64_t>(), 196352);
  EXPECT_EQ(json["alternatives"].size(), 3u);
  EXPECT_EQ(json["groups"][0]["split_axis"], "z0z1z2");
  EXPECT_LE(json["model_best"]["cycles"]["objective"].get<double>(),
            json["cycles"]["objective"].get<double>());
}

TEST(CliTest, ScheduleTheExamplesWithSizesAndCustomPlatforms) {
  TempDir dir;
  std::string custom = dir.File("custom.json", R"({"name": "mini", "vector_cores": 4,
                                                   "ub_bytes": 65536})");
  CommandResult run = Tilesmith("schedule " + Example("softmax_last_axis.ascgraph.txt") +
                                " --sizes s0=4096,s1=2048 --platform " + custom + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["target"], "ascend:mini");
  EXPECT_LE(json["tiling_data"]["block_dim"].get<int64_t>(), 4);
  EXPECT_LE(json["tiling_data"]["ub_size"].get<int64_t>(), 65536);
  EXPECT_EQ(json["groups"][1]["kind"], "r");
  EXPECT_TRUE(json["groups"][1]["split_axis"].is_null());  // softmax rows stay whole

  for (const char* example :
       {"abs_chain_3d.ascgraph.txt", "broadcast_add_row.ascgraph.txt", "cast_f16_exp.ascgraph.txt",
        "reduce_sum_arar.ascgraph.txt", "transpose_3d.ascgraph.txt"}) {
    run = Tilesmith("schedule " + Example(example) +
                    " --sizes s0=48,s1=300,s2=1000,s3=77 --platform 910b2 --json");
    ASSERT_EQ(run.exit_code, 0) << example << ": " << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out)["constraints"]["ok"], true) << example;
  }

  // A JSON request may carry its platform.
  std::ifstream text_file(Example("abs_chain_3d.ascgraph.txt"));
  std::stringstream text;
  text << text_file.rdbuf();
  nlohmann::json request = {
      {"graph", text.str()},
      {"sizes", {{"s0", 64}, {"s1", 64}, {"s2", 64}}},
      {"platform", {{"name", "embedded"}, {"vector_cores", 2}, {"ub_bytes", 32768}}}};
  std::string request_file = dir.File("request.ascgraph.json", request.dump());
  run = Tilesmith("schedule " + request_file + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["platform"]["name"], "embedded");
  EXPECT_LE(json["tiling_data"]["block_dim"].get<int64_t>(), 2);
}

TEST(CliTest, ScheduleErrors) {
  std::string abs = Example("abs_chain_3d.ascgraph.txt");
  CommandResult run = Tilesmith("schedule " + abs + " --sizes s0=8,s1=8,s2=8");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("names no platform"), std::string::npos) << run.err;
  run = Tilesmith("schedule " + abs + " --sizes s0=8,s1=8,s2=8 --platform 910c");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("unknown platform '910c'"), std::string::npos) << run.err;
  run = Tilesmith("schedule " + abs + " --platform 910b1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("'s0'"), std::string::npos) << run.err;
  run = Tilesmith("schedule " + abs + " --sizes s0=8,s1=8,s2=8 --platform 910b1 --alternatives x");
  EXPECT_EQ(run.exit_code, 2);
  // A softmax row of 2^20 floats cannot stay whole in 196,352 bytes.
  run = Tilesmith("schedule " + Example("softmax_last_axis.ascgraph.txt") +
                  " --sizes s0=4,s1=1048576 --platform 910b1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("no tiling fits the unified buffer"), std::string::npos) << run.err;
  run = Tilesmith("schedule --help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("JSON keys:"), std::string::npos);
  EXPECT_NE(Tilesmith("--help").out.find("schedule"), std::string::npos);
}

// `compile` for a cuda target: PTX, a cubin file and the stats keys it promises. Needs the
// CUDA toolkit (no GPU).
TEST(CliTest, CompileGeluForSm90) {
  std::string gelu = std::string(TILESMITH_SOURCE_DIR) + "/configs/examples/gelu.hlo";
  CommandResult stats = Tilesmith("compile " + gelu + " --target cuda:sm_90 --emit stats --json");
  if (stats.exit_code != 0 && stats.err.find("toolkit was not found") != std::string::npos) {
    GTEST_SKIP() << stats.err;
  }
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  nlohmann::json json = nlohmann::json::parse(stats.out);
  EXPECT_GT(json["registers"].get<int>(), 0);
  EXPECT_EQ(json["spill_bytes"], 0);
  EXPECT_EQ(json["shared_bytes"], 0);
  EXPECT_EQ(json["stack_bytes"], 0);
  EXPECT_EQ(json["grid"], nlohmann::json({24576, 1, 1}));
  EXPECT_EQ(json["block"], nlohmann::json({128, 1, 1}));
  for (const char* key : {"compile_ms", "emit_ms", "optimize_ms", "ptx_ms", "cubin_ms"}) {
    EXPECT_GT(json[key].get<double>(), 0) << key;
  }

  CommandResult ptx = Tilesmith("compile " + gelu + " --target cuda:sm_90 --emit ptx");
  ASSERT_EQ(ptx.exit_code, 0) << ptx.err;
  EXPECT_NE(ptx.out.find(".visible .entry gelu("), std::string::npos);
  EXPECT_NE(ptx.out.find("ld.global.nc.v2.u32"), std::string::npos);

  TempDir dir;
  std::string cubin = dir.File("gelu.cubin");
  CommandResult written =
      Tilesmith("compile " + gelu + " --target cuda:sm_90 --emit cubin --out " + cubin);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  std::ifstream file(cubin, std::ios::binary);
  std::string magic(4, '\0');
  file.read(magic.data(), 4);
  EXPECT_EQ(magic,
            "\x7f"
            "ELF");
  CommandResult bad = Tilesmith("compile " + gelu + " --target cuda:sm_90 --emit kernel-ir2");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("ptx, cubin or stats"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace tilesmith
