// `tilesmith sweep`, run as a user would: sweep files with errors, globs, real sweeps on the
// host into a real SQLite file, reruns that measure nothing new, broken fusions, CUDA targets
// without a GPU. Interrupted sweeps are in sweep_interrupt_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "tests/cli/sweep_test_util.h"

namespace tilesmith::sweep_testing {
namespace {

using nlohmann::json;

TEST_F(SweepCommandTest, BadSweepFilesAreClearErrors) {
  std::string gelu = "\"" + Gelu() + "\"";
  struct Case {
    std::string text;
    std::string expected;  // in stderr
  };
  std::vector<Case> cases = {
      {"{\n  \"targets\": [\"host\"],\n  \"fusions\": [" + gelu + ",]\n}", "bad.json:3:"},
      {"{\"targets\": [\"host\"], \"fusions\": [{\"path\": " + gelu + ", \"budgt\": 3}]}",
       "fusions[0]: unknown key 'budgt'"},
      {"{\"targets\": [\"host\"], \"budget\": \"lots\", \"fusions\": [" + gelu + "]}",
       "budget: expected an integer >= 0, not \"lots\""},
      {"{\"targets\": [\"host\", \"tpu:v5\"], \"fusions\": [" + gelu + "]}",
       "bad.json: error: targets[1]: unknown target 'tpu:v5'"},
      {"{\"targets\": [\"host\"], \"fusions\": [{\"path\": " + gelu +
           ", \"targets\": [\"cuda:sm_75\"]}]}",
       "bad.json: error: fusions[0].targets[0]: no device description for cuda:sm_75"},
      {"{\"targets\": [\"host\"], \"strategy\": \"annealing\", \"fusions\": [" + gelu + "]}",
       "bad.json: error: strategy: unknown strategy 'annealing'"},
      {"{\"targets\": [\"host\"], \"fusions\": [{\"path\": " + gelu +
           ", \"strategy\": \"greedy\"}]}",
       "bad.json: error: fusions[0].strategy: unknown strategy 'greedy'"},
      {"{\"fusions\": [" + gelu + "]}", "fusions[0].targets: no targets"},
      {"{\"targets\": [\"host\"], \"fusions\": [\"nowhere/gelu.hlo\", " + gelu + "]}",
       "no such file\n  fusions[0]: " + File("nowhere/gelu.hlo")},
      {"{\"targets\": [\"host\"], \"fusions\": [\"nowhere/*.hlo\"]}",
       "no fusion file matches any entry"},
      {"[1, 2]", "expected a JSON object"},
      {"{\"targets\": [\"host\"], \"fusion\": [" + gelu + "]}",
       "bad.json: error: unknown key 'fusion' (expected name, description, devices, fusions, "},
      {"{\"targets\": [\"host\"], \"fusions\": [" + gelu + "], \"sizes\": {\"s0\": 0}}",
       "bad.json: error: sizes.s0: expected an integer >= 1, not 0"},
      {"{\"targets\": [\"host\"], \"fusions\": [{\"budget\": 2}]}",
       "bad.json: error: fusions[0].path: missing"},
  };
  for (const Case& test : cases) {
    Write("bad.json", test.text);
    CommandRun run = Tilesmith("sweep bad.json --db " + File("t.db"));
    EXPECT_EQ(run.exit_code, 1) << test.text;
    EXPECT_NE(run.err.find(test.expected), std::string::npos) << test.text << "\n" << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
  // The JSON syntax error names line and column and nlohmann's reason, not its prefix.
  Write("bad.json", "{\n  \"targets\": [\"host\"],\n  \"fusions\": [" + gelu + ",]\n}");
  CommandRun syntax = Tilesmith("sweep bad.json");
  EXPECT_NE(syntax.err.find("bad.json:3:"), std::string::npos) << syntax.err;
  EXPECT_NE(syntax.err.find(": error: syntax error while parsing"), std::string::npos)
      << syntax.err;
  EXPECT_EQ(syntax.err.find("json.exception"), std::string::npos) << syntax.err;
  EXPECT_EQ(Tilesmith("sweep missing.json").exit_code, 1);
  EXPECT_EQ(Tilesmith("sweep").exit_code, 2);
  // Nothing was opened: refused before any database is created.
  EXPECT_FALSE(fs::exists(File("t.db")));
  EXPECT_FALSE(fs::exists(File("tilesmith.db")));
}

TEST_F(SweepCommandTest, GlobsExpandFromTheSweepFileFolderAndEntriesOverrideSettings) {
  std::ifstream gelu_file(Gelu());
  std::string gelu((std::istreambuf_iterator<char>(gelu_file)), std::istreambuf_iterator<char>());
  for (const char* name : {"fusions/a/x.hlo", "fusions/a/y.hlo", "fusions/b/deep/z.hlo",
                           "fusions/b/.hidden.hlo", "fusions/b/notes.txt"}) {
    Write(name, gelu);
  }
  fs::create_directories(File("fusions/g"));
  fs::copy_file(Examples() + "/ascgraph/abs_chain_3d.ascgraph.txt",
                File("fusions/g/abs_chain_3d.ascgraph.txt"));
  std::string sweep = Write("sweeps/s.json", R"({
    "targets": ["host"], "budget": 5, "strategy": "random",
    // Comments are allowed.
    "fusions": [
      "../fusions/a/*.hlo",
      {"path": "../fusions/**/*.hlo", "budget": 2, "targets": ["host", "cuda:sm_90"]},
      "../fusions/a/x.hlo",
      "../fusions/c/*.hlo",
      {"path": "../fusions/g/*.txt", "sizes": {"s0": 2, "s1": 3, "s2": 4}},
      {"path": "../fusions/g/abs_chain_3d.ascgraph.txt", "sizes": "s0=2,s1=3,s2=8"}
    ]})");
  CommandRun run = Tilesmith("sweep " + sweep + " --dry-run --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // A glob matching nothing is a warning; the sweep goes on.
  EXPECT_NE(
      run.err.find("warning: " + sweep + ": fusions[3]: '../fusions/c/*.hlo' matches no file"),
      std::string::npos)
      << run.err;
  json plan = json::parse(run.out);
  std::vector<std::string> pairs;
  for (const json& pair : plan["pairs"]) {
    pairs.push_back(pair["entry"].get<std::string>() + " | " + pair["fusion"].get<std::string>() +
                    " | " + pair["target"].get<std::string>() + " | " +
                    pair["settings"]["budget"].dump());
  }
  // Names are relative to the folder every file shares; a file listed by two entries says
  // which (and its sizes). fusions[2] repeats fusions[0]'s x.hlo with the same settings: once.
  // `**` crosses folders; hidden files and other extensions do not match.
  std::vector<std::string> expected = {
      "fusions[0] | a/x.hlo (fusions[0]) | host | 5",
      "fusions[0] | a/y.hlo (fusions[0]) | host | 5",
      "fusions[1] | a/x.hlo (fusions[1]) | host | 2",
      "fusions[1] | a/x.hlo (fusions[1]) | cuda:sm_90 | 2",
      "fusions[1] | a/y.hlo (fusions[1]) | host | 2",
      "fusions[1] | a/y.hlo (fusions[1]) | cuda:sm_90 | 2",
      "fusions[1] | b/deep/z.hlo | host | 2",
      "fusions[1] | b/deep/z.hlo | cuda:sm_90 | 2",
      "fusions[4] | g/abs_chain_3d.ascgraph.txt s0=2,s1=3,s2=4 (fusions[4]) | host | 5",
      "fusions[5] | g/abs_chain_3d.ascgraph.txt s0=2,s1=3,s2=8 (fusions[5]) | host | 5",
  };
  EXPECT_EQ(pairs, expected);
  ASSERT_EQ(plan["pairs"].size(), expected.size());
  EXPECT_EQ(plan["pairs"][8]["settings"]["sizes"], (json{{"s0", 2}, {"s1", 3}, {"s2", 4}}));
  EXPECT_EQ(plan["pairs"][8]["settings"]["strategy"], "random");
  EXPECT_EQ(plan["pairs"][8]["input_flags"], (json{"--sizes", "s0=2,s1=3,s2=4"}));
  EXPECT_EQ(plan["pairs"][9]["input_flags"], (json{"--sizes", "s0=2,s1=3,s2=8"}));
  EXPECT_EQ(plan["pairs"][0]["input_flags"], json::array());
  EXPECT_EQ(plan["pairs"][6]["path"], File("fusions/b/deep/z.hlo"));
  EXPECT_TRUE(
      plan["pairs"][3]["device"].get<std::string>().starts_with("cuda:sm_90, NVIDIA H100 SXM5"));
  EXPECT_FALSE(fs::exists(File("tilesmith.db")));  // a dry run opens nothing
  // "devices" picks another part of the same architecture.
  std::ifstream in(sweep);
  std::string with_devices((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  with_devices.insert(with_devices.find('{') + 1, R"("devices": {"cuda:sm_90": "h100_pcie"},)");
  Write("sweeps/s.json", with_devices);
  CommandRun pcie = Tilesmith("sweep " + sweep + " --dry-run --json");
  ASSERT_EQ(pcie.exit_code, 0) << pcie.err;
  EXPECT_TRUE(json::parse(pcie.out)["pairs"][3]["device"].get<std::string>().starts_with(
      "cuda:sm_90, NVIDIA H100 PCIe"))
      << pcie.out;
  // The text form lists the same pairs.
  CommandRun text = Tilesmith("sweep " + sweep + " --dry-run");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("10 (fusion, target) pairs, 7 fusions"), std::string::npos) << text.out;
}

TEST_F(SweepCommandTest, TheProjectsSweepFilesPlanWhatTheySay) {
  CommandRun examples =
      Tilesmith("sweep " TILESMITH_SOURCE_DIR "/configs/sweeps/examples.json --dry-run --json");
  ASSERT_EQ(examples.exit_code, 0) << examples.err;
  json plan = json::parse(examples.out);
  std::set<std::string> names;
  for (const json& pair : plan["pairs"]) {
    EXPECT_EQ(pair["target"], "host");
    names.insert(pair["fusion"].get<std::string>());
  }
  EXPECT_TRUE(names.contains("gelu.hlo"));
  EXPECT_TRUE(names.contains("ascgraph/leaky_relu_axpy.ascgraph.json"));
  EXPECT_TRUE(names.contains("ascgraph/softmax_last_axis.ascgraph.txt"));
  EXPECT_EQ(names.size(), plan["pairs"].size());
  if (!fs::exists(CorpusRoot() + "/xla")) GTEST_SKIP() << "no corpus at " << CorpusRoot();
  if (fs::weakly_canonical(CorpusRoot()) !=
      fs::weakly_canonical(TILESMITH_SOURCE_DIR "/../shared/corpus")) {
    GTEST_SKIP() << "corpus.json reads ../shared/corpus beside the repository";
  }
  CommandRun corpus =
      Tilesmith("sweep " TILESMITH_SOURCE_DIR "/configs/sweeps/corpus.json --dry-run --json");
  ASSERT_EQ(corpus.exit_code, 0) << corpus.err;
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(CorpusRoot() + "/xla")) {
    files += entry.path().extension() == ".hlo";
  }
  EXPECT_EQ(json::parse(corpus.out)["pairs"].size(), files);
}

TEST_F(SweepCommandTest, ASweepTunesEveryPairAndARerunMeasuresNothingNew) {
  std::string sweep =
      Write("sweep.json", R"({"targets": ["host"], "budget": 3, )" + std::string(kQuick) +
                              R"(, "fusions": [")" + Gelu() + R"(", ")" + Examples() +
                              R"(/ascgraph/leaky_relu_axpy.ascgraph.json"]})");
  std::string db = File("s.db");
  CommandRun run = Tilesmith("sweep " + sweep + " --db " + db);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  // Progress: one line per pair on stderr (not a terminal).
  EXPECT_NE(run.err.find("sweep 1/2  tests/data/tuner/gelu_f32.hlo  host  measured 3/3, "),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("sweep 2/2  configs/examples/ascgraph/leaky_relu_axpy.ascgraph.json  "
                         "host  measured 3/3, "),
            std::string::npos)
      << run.err;
  std::istringstream header(run.out.substr(0, run.out.find('\n')));
  std::vector<std::string> columns{std::istream_iterator<std::string>(header), {}};
  EXPECT_EQ(columns,
            (std::vector<std::string>{"fusion", "target", "default_us", "best_us", "speedup",
                                      "confirmed", "measured", "failed", "status"}));
  EXPECT_NE(run.out.find("\ntests/data/tuner/gelu_f32.hlo "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("geomean speedup "), std::string::npos);
  EXPECT_NE(run.out.find("x over 2 of 2 (fusion, target) pairs"), std::string::npos) << run.out;
  std::string integrity;
  auto trials = Trials(db, &integrity);
  EXPECT_EQ(integrity, "ok");
  EXPECT_EQ(trials.size(), 6u);

  // --resume skips both finished pairs; the table is the same.
  CommandRun resumed = Tilesmith("sweep " + sweep + " --db " + db + " --resume --json");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  json table = json::parse(resumed.out);
  EXPECT_EQ(table["complete"], true);
  EXPECT_EQ(table["pairs"], 2);
  double log_sum = 0;
  for (const json& row : table["rows"]) {
    EXPECT_EQ(row["status"], "resumed") << row;
    EXPECT_EQ(row["measured"], 3);
    EXPECT_EQ(row["measured_now"], 0);
    EXPECT_EQ(row["failed"], 0);
    EXPECT_EQ(row["fingerprint"].get<std::string>().size(), 64u);
    EXPECT_GT(row["best_us"].get<double>(), 0);
    // The speedup is the tune's noise-aware verdict (paired rounds, tuner/confirm_winner.h),
    // which equals default_us / best_us only when the default is reported; resumed, it is
    // the one the first run printed.
    std::string fusion = row["fusion"].get<std::string>();
    size_t line = run.out.find("\n" + fusion + " ");
    ASSERT_NE(line, std::string::npos) << fusion;
    std::istringstream printed(run.out.substr(line + 1, run.out.find('\n', line + 1) - line - 1));
    std::vector<std::string> cells{std::istream_iterator<std::string>(printed), {}};
    ASSERT_GE(cells.size(), 5u);
    EXPECT_NEAR(row["speedup"].get<double>(), std::stod(cells[4]), 0.006) << cells[4];
    // `confirmed` says the verdict was reached and gives its interval, which holds the
    // speedup; the legend under the table says which figure is which.
    ASSERT_TRUE(row["significant"].is_boolean()) << row;
    EXPECT_EQ(cells[5].substr(0, cells[5].find('[')),
              row["significant"].get<bool>() ? "yes" : "no");
    EXPECT_LE(row["speedup_low"].get<double>(), row["speedup"].get<double>() + 1e-9);
    EXPECT_NE(run.out.find("\nspeedup: the paired rounds' verdict"), std::string::npos);
    log_sum += std::log(row["speedup"].get<double>());
    EXPECT_TRUE(run.out.find(row["fusion"].get<std::string>()) != std::string::npos);
  }
  EXPECT_NEAR(table["geomean_speedup"].get<double>(), std::exp(log_sum / 2), 1e-9);
  // Without --resume every pair is tuned again, and the tuner measures nothing it holds.
  CommandRun again = Tilesmith("sweep " + sweep + " --db " + db + " --json --quiet");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(again.err.empty()) << again.err;
  for (const json& row : json::parse(again.out)["rows"]) {
    EXPECT_EQ(row["status"], "done");
    EXPECT_EQ(row["measured_now"], 0);
  }
  EXPECT_EQ(Trials(db, &integrity).size(), 6u);

  // A larger budget is another plan: --resume tunes both pairs again, measuring only the rest.
  std::ifstream in(sweep);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("\"budget\": 3"), 11, "\"budget\": 4");
  Write("sweep.json", text);
  CommandRun more = Tilesmith("sweep " + sweep + " --db " + db + " --resume --json");
  ASSERT_EQ(more.exit_code, 0) << more.err;
  for (const json& row : json::parse(more.out)["rows"]) {
    EXPECT_EQ(row["status"], "done");
    EXPECT_EQ(row["measured_now"], 1);
    EXPECT_EQ(row["measured"], 4);
  }
  trials = Trials(db, &integrity);
  EXPECT_EQ(trials.size(), 8u);
  ExpectNoConfigMeasuredTwice(trials);

  // The database is the truth: with it gone, --resume tunes again despite the state file.
  fs::remove(db);
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
  ASSERT_TRUE(fs::exists(db + ".sweeps.json"));
  CommandRun fresh = Tilesmith("sweep " + sweep + " --db " + db + " --resume --json");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  for (const json& row : json::parse(fresh.out)["rows"]) EXPECT_EQ(row["measured_now"], 4);
  // A damaged state file is left alone; the sweep goes on without it, measuring nothing twice.
  Write("s.db.sweeps.json", "{\"format\": \"something else\"}");
  CommandRun damaged = Tilesmith("sweep " + sweep + " --db " + db + " --resume --json");
  ASSERT_EQ(damaged.exit_code, 0) << damaged.err;
  EXPECT_NE(damaged.err.find("warning: " + db + ".sweeps.json: error: not a sweep state file"),
            std::string::npos)
      << damaged.err;
  for (const json& row : json::parse(damaged.out)["rows"]) {
    EXPECT_EQ(row["status"], "done");
    EXPECT_EQ(row["measured_now"], 0);
  }
  std::ifstream state(db + ".sweeps.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(state), {}),
            "{\"format\": \"something else\"}");
}

TEST_F(SweepCommandTest, BrokenFusionsAndFailedTrialsAreReportedAndTheSweepGoesOn) {
  Write("fusions/broken.hlo",
        "HloModule broken\n\nENTRY e {\n  p = f32[4] parameter(0)\n"
        "  ROOT t = f32[4] tanhh(p)\n}\n");
  fs::copy_file(Gelu(), File("fusions/gelu_f32.hlo"));
  std::string sweep =
      Write("sweep.json", R"({"targets": ["host"], "budget": 2, )" + std::string(kQuick) +
                              R"(, "fusions": ["fusions/*.hlo"]})");
  std::string db = File("f.db");
  // Every candidate's output is made wrong in the worker: nothing verifies.
  std::string fault = R"(TILESMITH_WORKER_FAULT='{"wrong_result": {}}' )";
  CommandRun run = Tilesmith("sweep " + sweep + " --db " + db, fault);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("sweep 1/2  broken.hlo  host  error: "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("sweep 2/2  gelu_f32.hlo  host  failed: measured 2/2, failed 2"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.out.find("errors:\n  broken.hlo (host): "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("unknown opcode 'tanhh'"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("failed trials (status: count, an example):\n  gelu_f32.hlo (host): "
                         "wrong_result 2, "),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("geomean speedup - over 0 of 2"), std::string::npos) << run.out;
  // A finished pair stays finished, failed or not; the broken file is tried again.
  CommandRun rerun = Tilesmith("sweep " + sweep + " --db " + db + " --resume --json");
  EXPECT_EQ(rerun.exit_code, 1);
  json table = json::parse(rerun.out);
  EXPECT_EQ(table["errors"], 1);
  EXPECT_EQ(table["complete"], false);
  EXPECT_EQ(table["rows"][0]["status"], "error");
  EXPECT_EQ(table["rows"][1]["status"], "failed");
  EXPECT_EQ(table["rows"][1]["measured_now"], 0);
  EXPECT_EQ(table["rows"][1]["failures"]["wrong_result"]["count"], 2);
  EXPECT_EQ(table["rows"][1]["best_us"], nullptr);
}

TEST_F(SweepCommandTest, CudaTargetsAreCompiledOnlyWithoutAGpu) {
  std::string sweep =
      Write("sweep.json", R"({"targets": ["cuda:sm_90", "host"], "budget": 2, )" +
                              std::string(kQuick) + R"(, "fusions": [")" + Gelu() + R"("]})");
  std::string db = File("c.db");
  CommandRun run = Tilesmith("sweep " + sweep + " --db " + db + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json table = json::parse(run.out);
  ASSERT_EQ(table["rows"].size(), 2u);
  const json& cuda = table["rows"][0];
  EXPECT_EQ(cuda["target"], "cuda:sm_90");
  EXPECT_TRUE(cuda["device"].get<std::string>().starts_with("cuda:sm_90, "));
  EXPECT_EQ(cuda["compiled"].get<int64_t>() + cuda["compile_failed"].get<int64_t>(), 2);
  EXPECT_EQ(table["rows"][1]["status"], "done");
  EXPECT_EQ(table["rows"][1]["measured"], 2);
  std::string integrity;
  size_t stored = Trials(db, &integrity).size();
  if (cuda["status"] == "compiled") {
    // No GPU here: every candidate became a cubin and was predicted, nothing was timed; the
    // predictions are stored as predictions, the table's times stay measurements.
    EXPECT_EQ(cuda["best_us"], nullptr);
    EXPECT_EQ(cuda["predicted"], 2);
    EXPECT_GT(cuda["predicted_us"].get<double>(), 0);
    EXPECT_TRUE(cuda["predicted_config"].is_object());
    EXPECT_EQ(cuda["model"].get<std::string>().substr(0, 12), "analytic-gpu");
    EXPECT_NE(run.err.find("compiled 2/2, not timed (no GPU here); 2 predictions stored, best "
                           "predicted "),
              std::string::npos)
        << run.err;
    EXPECT_NE(run.err.find("note: cuda:sm_90 was compiled only, not timed: "), std::string::npos)
        << run.err;
    EXPECT_EQ(stored, 2u);  // the host's two trials
    EXPECT_EQ(table["geomean_rows"], 1);
    auto predictions = Predictions(db);
    ASSERT_EQ(predictions.size(), 2u);
    for (const auto& [device, status, predicted_us] : predictions) {
      EXPECT_EQ(device, cuda["device"]);
      EXPECT_EQ(status, "ok");
      EXPECT_GT(predicted_us, 0);
    }
    // A rerun with --resume finds the pair finished, its predictions still stored: not rerun.
    CommandRun again = Tilesmith("sweep " + sweep + " --db " + db + " --resume --json");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    json resumed = json::parse(again.out)["rows"][0];
    EXPECT_EQ(resumed["status"], "compiled");
    EXPECT_EQ(resumed["seconds"], 0);
    EXPECT_EQ(resumed["predicted"], 2);
    EXPECT_EQ(Predictions(db).size(), 2u);
    // A compile-only pair recorded before sweeps stored predictions (0 of them) is tuned
    // again on --resume, and its predictions are stored then (the same two, replaced).
    std::string state_path = db + ".sweeps.json";
    json state = json::parse(std::ifstream(state_path));
    for (auto& [key, pair] : state["pairs"].items()) {
      if (pair["status"] == "compiled") pair.erase("predicted");
    }
    std::ofstream(state_path) << state.dump();
    CommandRun upgraded = Tilesmith("sweep " + sweep + " --db " + db + " --resume --json");
    ASSERT_EQ(upgraded.exit_code, 0) << upgraded.err;
    json retuned = json::parse(upgraded.out)["rows"][0];
    EXPECT_EQ(retuned["status"], "compiled");
    EXPECT_GT(retuned["seconds"].get<double>(), 0);
    EXPECT_EQ(retuned["predicted"], 2);
    EXPECT_EQ(Predictions(db).size(), 2u);
  } else {
    EXPECT_EQ(cuda["status"], "done");  // a GPU and its driver: timed like the host
    EXPECT_EQ(stored, 4u);
  }
}

// `tilesmith sweep SWEEP --db DB` as a child process; `signal` is sent once the first pair
// is reported finished (the second is then in flight). Returns the wait status, and what the
// child wrote to stdout and stderr.

}  // namespace
}  // namespace tilesmith::sweep_testing
