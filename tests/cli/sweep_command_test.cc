// `tilesmith sweep`, run as a user would: sweep files with errors, globs, real sweeps on the
// host into a real SQLite file, reruns that measure nothing new, and a Ctrl-C mid-sweep.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

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

#include "tests/cli/cli_run.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Gelu() { return TILESMITH_TEST_DATA_DIR "/tuner/gelu_f32.hlo"; }
std::string Examples() { return TILESMITH_SOURCE_DIR "/configs/examples"; }
std::string CorpusRoot() {
  const char* dir = std::getenv("TILESMITH_CORPUS_DIR");
  return dir && *dir ? dir : TILESMITH_DEFAULT_CORPUS_DIR;
}

using cli_testing::CommandRun;

// Fast measurement settings: the tests check the sweep, not the timings.
constexpr const char* kQuick = R"("warmup_ms": 1, "rep_ms": 3, "flush": false)";

class SweepCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tilesmith_sweep_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

 public:  // also used by the helpers below the fixture
  std::string File(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(File(name)) << text;
    return File(name);
  }

  // Runs `tilesmith ARGUMENTS` in the temp dir; `environment` is prefixed (`VAR='…' `).
  CommandRun Tilesmith(const std::string& arguments, const std::string& environment = "") {
    return cli_testing::RunTilesmithIn(dir_, arguments, environment);
  }

 protected:
  fs::path dir_;
};

// Every row `sql` returns from the database at `path`, each column as text (NULL: empty).
std::vector<std::vector<std::string>> TextRows(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::vector<std::vector<std::string>> rows;
  sqlite3_stmt* statement = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &statement, nullptr), SQLITE_OK) << sql;
  while (sqlite3_step(statement) == SQLITE_ROW) {
    std::vector<std::string>& row = rows.emplace_back();
    for (int column = 0; column < sqlite3_column_count(statement); ++column) {
      const unsigned char* text = sqlite3_column_text(statement, column);
      row.emplace_back(text == nullptr ? "" : reinterpret_cast<const char*>(text));
    }
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rows;
}

// (fingerprint, config hash) of every trial, and the integrity check's answer.
std::vector<std::pair<std::string, std::string>> Trials(const std::string& path,
                                                        std::string* integrity) {
  auto check = TextRows(path, "PRAGMA integrity_check");
  if (!check.empty()) *integrity = check.front().front();
  std::vector<std::pair<std::string, std::string>> trials;
  for (const auto& row : TextRows(path, "SELECT fingerprint, config_hash FROM measurements")) {
    trials.emplace_back(row[0], row[1]);
  }
  return trials;
}

// (device key, status, predicted µs) of every stored prediction.
std::vector<std::tuple<std::string, std::string, double>> Predictions(const std::string& path) {
  std::vector<std::tuple<std::string, std::string, double>> predictions;
  for (const auto& row :
       TextRows(path, "SELECT device_key, status, predicted_us FROM predictions")) {
    predictions.emplace_back(row[0], row[1], row[2].empty() ? 0.0 : std::stod(row[2]));
  }
  return predictions;
}

void ExpectNoConfigMeasuredTwice(const std::vector<std::pair<std::string, std::string>>& trials) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& trial : trials) {
    EXPECT_TRUE(seen.insert(trial).second) << "config " << trial.second << " measured twice";
  }
}

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
  EXPECT_EQ(columns, (std::vector<std::string>{"fusion", "target", "default_us", "best_us",
                                               "speedup", "measured", "failed", "status"}));
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
    EXPECT_NEAR(row["speedup"].get<double>(),
                row["default_us"].get<double>() / row["best_us"].get<double>(), 1e-9);
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
struct Stopped {
  int status = 0;
  std::string out;
  std::string err;
};
Stopped SweepStoppedBy(int signal, const std::string& sweep, const std::string& db) {
  std::vector<std::string> argv = {TILESMITH_CLI, "sweep", sweep, "--db", db};
  int out_pipe[2];
  int err_pipe[2];
  Stopped stopped;
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    ADD_FAILURE() << "pipe";
    return stopped;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  char buffer[4096];
  while (stopped.err.find("sweep 1/3") == std::string::npos) {
    ssize_t got = read(err_pipe[0], buffer, sizeof buffer);
    if (got <= 0) {
      ADD_FAILURE() << "the sweep ended early: " << stopped.err;
      break;
    }
    stopped.err.append(buffer, got);
  }
  kill(pid, signal);
  for (ssize_t got; (got = read(out_pipe[0], buffer, sizeof buffer)) > 0;) {
    stopped.out.append(buffer, got);
  }
  for (ssize_t got; (got = read(err_pipe[0], buffer, sizeof buffer)) > 0;) {
    stopped.err.append(buffer, got);
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  waitpid(pid, &stopped.status, 0);
  return stopped;
}

// A sweep of three small fusions, four configs each, one config per batch: long enough to
// be stopped in the middle of its second pair.
std::string ThreePairSweep(SweepCommandTest* test) {
  return test->Write("sweep.json",
                     R"({"targets": ["host"], "budget": 4, "batch": 1, "warmup_ms": 1, "rep_ms": 20,
          "flush": false, "fusions": [")" +
                         Gelu() + R"(", ")" + Examples() +
                         R"(/ascgraph/leaky_relu_axpy.ascgraph.json", )" + R"({"path": ")" +
                         Examples() + R"(/ascgraph/broadcast_add_row.ascgraph.txt", )" +
                         R"("sizes": {"s0": 64, "s1": 256}}]})");
}

// Resumes the sweep stopped with `before` trials committed and checks it completes: every
// pair measured 4 configs, none twice, the first pair skipped.
void ExpectResumeCompletes(SweepCommandTest* test, const std::string& sweep, const std::string& db,
                           size_t before) {
  CommandRun rerun = test->Tilesmith("sweep " + sweep + " --db " + db + " --resume --json");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  json table = json::parse(rerun.out);
  EXPECT_EQ(table["complete"], true);
  EXPECT_EQ(table["rows"][0]["status"], "resumed");
  int64_t measured_now = 0;
  for (const json& row : table["rows"]) {
    EXPECT_EQ(row["measured"], 4) << row;
    measured_now += row["measured_now"].get<int64_t>();
  }
  std::string integrity;
  auto after = Trials(db, &integrity);
  EXPECT_EQ(integrity, "ok");
  EXPECT_EQ(after.size(), 12u);
  EXPECT_EQ(static_cast<size_t>(measured_now), 12u - before);
  ExpectNoConfigMeasuredTwice(after);
}

TEST_F(SweepCommandTest, CtrlCFinishesTheBatchPrintsThePartialTableAndResumeCompletes) {
  std::string sweep = ThreePairSweep(this);
  std::string db = File("c.db");
  Stopped run = SweepStoppedBy(SIGINT, sweep, db);
  std::string& progress = run.err;
  std::string& out = run.out;
  ASSERT_TRUE(WIFEXITED(run.status)) << progress;
  EXPECT_EQ(WEXITSTATUS(run.status), 130) << progress;
  EXPECT_NE(progress.find("interrupted; committing the candidates measured so far"),
            std::string::npos)
      << progress;
  EXPECT_NE(progress.find("Rerun with --resume"), std::string::npos) << progress;
  // The partial table: the first pair done, the rest interrupted or not run.
  EXPECT_NE(out.find("gelu_f32.hlo"), std::string::npos) << out;
  EXPECT_NE(out.find("  done\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  not run\n"), std::string::npos) << out;
  EXPECT_NE(out.find("geomean speedup "), std::string::npos) << out;
  std::string integrity;
  auto before = Trials(db, &integrity);
  EXPECT_EQ(integrity, "ok");
  EXPECT_GE(before.size(), 4u);   // the first pair, whole
  EXPECT_LT(before.size(), 12u);  // not everything
  ExpectResumeCompletes(this, sweep, db, before.size());
}

TEST_F(SweepCommandTest, KilledMidSweepTheDatabaseIsCleanAndResumeCompletes) {
  std::string sweep = ThreePairSweep(this);
  std::string db = File("k.db");
  Stopped run = SweepStoppedBy(SIGKILL, sweep, db);
  ASSERT_TRUE(WIFSIGNALED(run.status)) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;  // no table: it had no chance
  std::string integrity;
  auto before = Trials(db, &integrity);
  EXPECT_EQ(integrity, "ok");
  EXPECT_GE(before.size(), 4u);  // every reported pair committed
  EXPECT_LT(before.size(), 12u);
  ExpectResumeCompletes(this, sweep, db, before.size());
}

}  // namespace
}  // namespace tilesmith
