// `tilesmith space` and `tilesmith tune`, run as a user would, and the durability contract:
// a tune killed with SIGKILL mid-run leaves a clean database whose committed rows a rerun
// keeps and never measures again.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "tests/cli/cli_run.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Gelu() { return TILESMITH_TEST_DATA_DIR "/tuner/gelu_f32.hlo"; }
std::string Corpus() {
  const char* dir = std::getenv("TILESMITH_CORPUS_DIR");
  return std::string(dir && *dir ? dir : TILESMITH_DEFAULT_CORPUS_DIR) + "/xla";
}

using cli_testing::CommandRun;

class TuneCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tilesmith_tune_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  CommandRun Tilesmith(const std::string& arguments) {
    return cli_testing::RunTilesmithIn(dir_, arguments);
  }

  fs::path dir_;
};

// Every row of the measurements table: uid -> config hash.
std::map<std::string, std::string> Rows(const std::string& path, std::string* integrity) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::map<std::string, std::string> rows;
  sqlite3_stmt* statement = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nullptr);
  if (sqlite3_step(statement) == SQLITE_ROW) {
    *integrity = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
  }
  sqlite3_finalize(statement);
  sqlite3_prepare_v2(db, "SELECT uid, config_hash FROM measurements", -1, &statement, nullptr);
  while (sqlite3_step(statement) == SQLITE_ROW) {
    rows[reinterpret_cast<const char*>(sqlite3_column_text(statement, 0))] =
        reinterpret_cast<const char*>(sqlite3_column_text(statement, 1));
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rows;
}

TEST_F(TuneCommandTest, TuneOnTheHostPrintsTheBestTheDefaultAndTheSpeedup) {
  if (!std::filesystem::exists(Corpus())) GTEST_SKIP() << "no corpus at " << Corpus();
  CommandRun run =
      Tilesmith("tune " + Corpus() + "/transpose/transpose_021.hlo --target host --db " +
                File("t.db") + " --budget 5 --rep-ms 3 --warmup-ms 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json result = json::parse(run.out);
  for (const char* key :
       {"fingerprint", "device", "best", "default", "speedup", "measured", "failed"}) {
    EXPECT_TRUE(result.contains(key)) << key;
  }
  EXPECT_EQ(result["fingerprint"].get<std::string>().size(), 64u);
  EXPECT_TRUE(result["device"].get<std::string>().starts_with("host, "));
  EXPECT_TRUE(result["best"]["config"].is_object());
  EXPECT_GT(result["best"]["median_us"].get<double>(), 0);
  // Host times are the host's clock: no CUDA timing method is named.
  EXPECT_FALSE(result["best"].contains("timing_method")) << result["best"];
  EXPECT_GT(result["default"]["median_us"].get<double>(), 0);
  EXPECT_EQ(result["measured"], 5);
  EXPECT_EQ(result["failed"], 0);
  EXPECT_EQ(result["strategy"], "model") << "the default strategy";
  EXPECT_EQ(result["stopped"], "budget spent");
  // The progress line went to stderr, one line per committed batch when not a terminal.
  EXPECT_NE(run.err.find("tune: 5/5  compiled 5, measured 5, failed 0, best "), std::string::npos)
      << run.err;
  // The ranking, which can take long on a large fusion, is announced before it starts.
  EXPECT_NE(run.err.find("tune: ranking "), std::string::npos) << run.err;
  EXPECT_LT(run.err.find("tune: ranking "), run.err.find("tune: 5/5")) << run.err;
  // The text form names the same facts.
  CommandRun text =
      Tilesmith("tune " + Corpus() + "/transpose/transpose_021.hlo --target host --db " +
                File("t.db") + " --budget 5 --quiet");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("measured    5 (0 this run, 5 from the database), failed 0"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("speedup     "), std::string::npos);
}

TEST_F(TuneCommandTest, TheAnswerCarriesItsSpeedupIntervalAndWhetherItIsSignificant) {
  CommandRun run = Tilesmith("tune " + Gelu() + " --target host --db " + File("v.db") +
                             " --budget 6 --rep-ms 3 --warmup-ms 1 --confirm-top 3 "
                             "--confirm-time-s 1.5 --confidence 0.9 --json --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json result = json::parse(run.out);
  ASSERT_TRUE(result["significant"].is_boolean()) << result.dump(2);
  EXPECT_EQ(result["confidence"], 0.9);
  double low = result["speedup_low"].get<double>();
  double high = result["speedup_high"].get<double>();
  double speedup = result["speedup"].get<double>();
  EXPECT_LE(low, high);
  const json& verdict = result["verdict"];
  EXPECT_EQ(verdict["contenders"], 3);
  EXPECT_GE(verdict["rounds"].get<int64_t>(), 2);
  EXPECT_FALSE(verdict["reason"].get<std::string>().empty());
  EXPECT_FALSE(verdict["method"].get<std::string>().empty());
  if (result["significant"] == true) {
    EXPECT_GT(low, 1.0);
    EXPECT_NE(result["best"]["config"], result["default"]["config"]);
  } else {
    // Not significantly faster: the answer is the default, at speedup 1.
    EXPECT_EQ(speedup, 1.0);
    EXPECT_EQ(result["best"]["config"], result["default"]["config"]);
    EXPECT_EQ(verdict["reported_as_default"], true);
    EXPECT_NE(verdict["reason"].get<std::string>().find("90%"), std::string::npos);
  }
  // The text form says the same, and --confirm-top 0 leaves the verdict unknown.
  CommandRun text = Tilesmith("tune " + Gelu() + " --target host --db " + File("v.db") +
                              " --budget 6 --confirm-top 3 --confirm-time-s 1 --quiet");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("interval    ["), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("paired rounds"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("verdict     "), std::string::npos) << text.out;
  CommandRun off = Tilesmith("tune " + Gelu() + " --target host --db " + File("v.db") +
                             " --budget 6 --confirm-top 0 --json --quiet");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  json unconfirmed = json::parse(off.out);
  EXPECT_TRUE(unconfirmed["significant"].is_null());
  EXPECT_TRUE(unconfirmed["verdict"].is_null());
  CommandRun bad =
      Tilesmith("tune " + Gelu() + " --target host --db " + File("v.db") + " --confidence 95");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--confidence"), std::string::npos) << bad.err;
}

TEST_F(TuneCommandTest, KilledMidTuneTheDatabaseIsCleanAndARerunResumes) {
  std::string db_path = File("resume.db");
  std::vector<std::string> argv = {
      TILESMITH_CLI, "tune",        Gelu(), "--target",   "host",       "--db",
      db_path,       "--budget",    "14",   "--batch",    "2",          "--rep-ms",
      "25",          "--warmup-ms", "2",    "--no-flush", "--strategy", "exhaustive"};
  int err_pipe[2];
  ASSERT_EQ(pipe(err_pipe), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(err_pipe[1], STDERR_FILENO);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    close(err_pipe[0]);
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(err_pipe[1]);
  // Wait until at least 5 trials were reported (so committed), then kill -9 mid-tune.
  std::string progress;
  int reported = 0;
  char buffer[4096];
  while (reported < 5) {
    ssize_t got = read(err_pipe[0], buffer, sizeof buffer);
    ASSERT_GT(got, 0) << "the tune ended early: " << progress;
    progress.append(buffer, got);
    for (size_t at = progress.find(", measured "); at != std::string::npos;
         at = progress.find(", measured ", at + 1)) {
      reported = std::max(reported, std::atoi(progress.c_str() + at + 11));
    }
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(err_pipe[0]);
  ASSERT_TRUE(WIFSIGNALED(status));

  std::string integrity;
  std::map<std::string, std::string> before = Rows(db_path, &integrity);
  EXPECT_EQ(integrity, "ok");
  EXPECT_GE(static_cast<int>(before.size()), reported);  // every reported trial committed
  EXPECT_LT(before.size(), 14u) << "the kill came too late to test resuming";

  CommandRun rerun =
      Tilesmith("tune " + Gelu() + " --target host --db " + db_path +
                " --budget 14 --batch 2 --rep-ms 25 --warmup-ms 2 --no-flush --strategy exhaustive "
                "--json");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  json result = json::parse(rerun.out);
  EXPECT_EQ(result["resumed"], before.size());
  EXPECT_EQ(result["measured_now"], 14 - before.size());
  EXPECT_EQ(result["measured"], 14);
  std::map<std::string, std::string> after = Rows(db_path, &integrity);
  EXPECT_EQ(integrity, "ok");
  for (const auto& [uid, hash] : before) {
    ASSERT_TRUE(after.contains(uid)) << "committed row " << uid << " lost";
    EXPECT_EQ(after[uid], hash);
  }
  std::set<std::string> configs;
  for (const auto& [uid, hash] : after) {
    EXPECT_TRUE(configs.insert(hash).second) << "config " << hash << " measured twice";
  }
  EXPECT_EQ(after.size(), 14u);
}

// XLA's own test of grid limits broadcasts into 2.4 TB: it compiles for every target, but
// no host can hold it, and the tools say so instead of dying in the allocator.
TEST_F(TuneCommandTest, AFusionLargerThanMemoryIsRefusedWithTheFigures) {
  std::ofstream(File("huge.hlo")) << "bcast {\n  one = bf16[] constant(1)\n"
                                     "  ROOT b = bf16[24,2048,2048,3,4096]{4,3,2,1,0} "
                                     "broadcast(one), dimensions={}\n}\n";
  for (const std::string command : {"tune huge.hlo --target host --db t.db --quiet",
                                    "run huge.hlo --target host", "check huge.hlo --target host"}) {
    CommandRun run = Tilesmith(command);
    EXPECT_EQ(run.exit_code, 1) << command << "\n" << run.err;
    EXPECT_NE(run.err.find("cannot run on the host"), std::string::npos) << command << run.err;
    EXPECT_NE(run.err.find(" TiB"), std::string::npos) << run.err;
  }
  CommandRun compiled = Tilesmith("compile huge.hlo --target cuda:sm_90");
  EXPECT_EQ(compiled.exit_code, 0) << compiled.err;
}

// `cuda:0` names this machine's GPU by its architecture; without one the message says to
// name the architecture instead. Only GPU 0 is timed.
TEST_F(TuneCommandTest, CudaOrdinalTargetsNeedTheGpuTheyName) {
  CommandRun zero = Tilesmith("tune " + Gelu() + " --target cuda:0 --db t.db --quiet");
  if (zero.exit_code == 0) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(zero.exit_code, 1) << zero.err;
  EXPECT_NE(zero.err.find("cuda:sm_90"), std::string::npos) << zero.err;
  CommandRun one = Tilesmith("tune " + Gelu() + " --target cuda:1 --db t.db --quiet");
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_NE(one.err.find("GPU 0"), std::string::npos) << one.err;
}

TEST_F(TuneCommandTest, CudaTargetsWithoutAGpuStorePredictionsNeverMeasurements) {
  CommandRun run = Tilesmith("tune " + Gelu() +
                             " --target cuda:sm_90 --budget 3 --strategy exhaustive --db p.db "
                             "--quiet --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("compiled 3 of 3 candidates for cuda:sm_90"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("none was timed"), std::string::npos);
  json result = json::parse(run.out);
  // Whether or not a driver is present, the message says which (libcuda is dlopen'ed).
  std::string driver = result["cuda_driver"];
  EXPECT_TRUE(driver.starts_with("no CUDA driver on this machine (") ||
              driver.starts_with("the CUDA driver did not initialise") ||
              driver.starts_with("CUDA driver "))
      << driver;
  EXPECT_NE(run.err.find(driver), std::string::npos);
  EXPECT_EQ(result["timed"], false);
  EXPECT_EQ(result["source"], "predicted");
  EXPECT_EQ(result["measured"], 0);
  EXPECT_EQ(result["predicted"], 3);
  ASSERT_TRUE(result["best"].is_object()) << run.out;
  ASSERT_TRUE(result["default"].is_object()) << run.out;
  EXPECT_GT(result["best"]["median_us"].get<double>(), 0);
  EXPECT_LE(result["best"]["median_us"].get<double>(),
            result["default"]["median_us"].get<double>());

  // In the database: three predictions with the cubin's registers, no measurement, no best.
  CommandRun show =
      Tilesmith("db show " + result["fingerprint"].get<std::string>() + " --db p.db --json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  json shown = json::parse(show.out);
  EXPECT_TRUE(shown["measurements"].empty());
  EXPECT_TRUE(shown["best"].empty());
  ASSERT_EQ(shown["predictions"].size(), 3u);
  for (const json& prediction : shown["predictions"]) {
    EXPECT_EQ(prediction["status"], "ok");
    EXPECT_EQ(prediction["model"], "analytic-gpu");
    EXPECT_GT(prediction["compile_stats"]["registers"].get<int64_t>(), 0);
    EXPECT_TRUE(prediction["device_key"].get<std::string>().starts_with("cuda:sm_90"));
  }
  EXPECT_EQ(shown["predictions"][0]["predicted_us"], result["best"]["median_us"]);

  // Predicting again replaces the rows rather than piling them up.
  CommandRun again = Tilesmith("tune " + Gelu() +
                               " --target cuda:sm_90 --budget 3 --strategy exhaustive --db p.db "
                               "--quiet");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("as predictions (table `predictions`), never as measurements"),
            std::string::npos)
      << again.out;
  CommandRun stats = Tilesmith("db stats --db p.db --json");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(json::parse(stats.out)["predictions"], 3);
  EXPECT_EQ(json::parse(stats.out)["measurements"], 0);
}

TEST_F(TuneCommandTest, SpaceListsConfigsAndPruningReasons) {
  CommandRun run = Tilesmith("space " + Gelu() + " --target cuda:sm_89 --device l4 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json space = json::parse(run.out);
  EXPECT_EQ(space["emitter"], "loop");
  EXPECT_TRUE(space["device"].get<std::string>().starts_with("cuda:sm_89, NVIDIA L4"));
  EXPECT_EQ(space["size"].get<int64_t>(),
            space["valid"].get<int64_t>() + space["pruned_count"].get<int64_t>());
  EXPECT_EQ(space["configs"].size(), space["valid"].get<size_t>());
  int defaults = 0;
  for (const json& entry : space["configs"]) defaults += entry["default"].get<bool>();
  EXPECT_EQ(defaults, 1);
  // Layout-free: the same space under each of {1,0}, {0,1} and {1,0:T(8,128)}.
  CommandRun free = Tilesmith("space " + Gelu() + " --target cuda:sm_89 --device l4 --json " +
                              "--free-layouts out0");
  ASSERT_EQ(free.exit_code, 0) << free.err;
  json free_space = json::parse(free.out);
  EXPECT_EQ(free_space["size"].get<int64_t>(), 3 * space["size"].get<int64_t>());
  std::set<std::string> layouts;
  for (const json& entry : free_space["configs"]) {
    layouts.insert(entry["config"]["layouts"]["out0"].get<std::string>());
  }
  EXPECT_EQ(layouts, (std::set<std::string>{"{1,0}", "{0,1}", "{1,0:T(8,128)}"}));
  EXPECT_EQ(Tilesmith("space " + Gelu() + " --free-layouts out1").exit_code, 1);
  CommandRun text = Tilesmith("space " + Gelu() + " --target host");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("<- default"), std::string::npos);
}

TEST_F(TuneCommandTest, SpaceCountsAReductionsSplitStrategies) {
  // An epilogue: atomics cannot combine its parts, the tree pass can.
  std::ofstream(File("epilogue.hlo"))
      << "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(a, b)\n}\n"
         "f {\n  p0 = f32[16,4096] parameter(0)\n  c0 = f32[] constant(0)\n"
         "  r = f32[16] reduce(p0, c0), dimensions={1}, to_apply=add\n"
         "  ROOT l = f32[16] log(r)\n}\n";
  CommandRun run = Tilesmith("space epilogue.hlo --target host --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json strategies = json::parse(run.out)["split_strategies"];
  EXPECT_GT(strategies.value("unsplit", 0), 0) << strategies;
  EXPECT_GT(strategies.value("tree", 0), 0) << strategies;
  EXPECT_EQ(strategies.value("atomic", 0), 0) << strategies;
  CommandRun text = Tilesmith("space epilogue.hlo --target host");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(
      text.out.find(" unsplit, 0 atomic, " + std::to_string(strategies["tree"].get<int64_t>()) +
                    " tree (valid configs by how a split's parts combine)"),
      std::string::npos)
      << text.out;
  // Not a reduction: no line, an empty object.
  CommandRun loop = Tilesmith("space " + Gelu() + " --target host --json");
  EXPECT_TRUE(json::parse(loop.out)["split_strategies"].empty());
}

// Each measured trial's status and the layout its config gave `name`.
std::vector<std::pair<std::string, std::string>> TrialLayouts(const std::string& path,
                                                              const std::string& name) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::vector<std::pair<std::string, std::string>> trials;
  sqlite3_stmt* statement = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT m.status, c.config_json FROM measurements m JOIN configs c "
                     "ON c.fingerprint = m.fingerprint AND c.config_hash = m.config_hash",
                     -1, &statement, nullptr);
  while (sqlite3_step(statement) == SQLITE_ROW) {
    json config = json::parse(reinterpret_cast<const char*>(sqlite3_column_text(statement, 1)));
    trials.push_back({reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)),
                      config["layouts"].value(name, std::string("(none)"))});
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return trials;
}

TEST_F(TuneCommandTest, AParameterLayoutCanBeFreeInTheSpaceAndTheTune) {
  if (!std::filesystem::exists(Corpus())) GTEST_SKIP() << "no corpus at " << Corpus();
  // f32[100,32,64]: its own layout, 5 other permutations and T(8,128) on the row-major order.
  std::string transpose = Corpus() + "/transpose/transpose_021.hlo";
  CommandRun fixed = Tilesmith("space " + transpose + " --target host --json");
  CommandRun free = Tilesmith("space " + transpose + " --target host --json --free-layouts p0");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  ASSERT_EQ(free.exit_code, 0) << free.err;
  EXPECT_EQ(json::parse(free.out)["size"].get<int64_t>(),
            7 * json::parse(fixed.out)["size"].get<int64_t>());
  CommandRun bad = Tilesmith("space " + transpose + " --free-layouts p7");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("'p7' is not a parameter (p0 … p0)"), std::string::npos) << bad.err;
  CommandRun neither = Tilesmith("space " + transpose + " --free-layouts x0");
  EXPECT_EQ(neither.exit_code, 1);
  EXPECT_NE(neither.err.find("names neither a parameter"), std::string::npos) << neither.err;

  // Every candidate is checked against the first verified one (as large outputs are): each
  // must read the same values, whatever layout it reads them in.
  CommandRun run =
      Tilesmith("tune " + transpose + " --target host --free-layouts p0 --db " + File("t.db") +
                " --budget 12 --strategy random --seed 3 --rep-ms 2 --warmup-ms 1"
                " --evaluator-max-elements 0 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json result = json::parse(run.out);
  EXPECT_EQ(result["measured"], 12);
  EXPECT_EQ(result["failed"], 0);
  EXPECT_TRUE(result["best"]["config"]["layouts"].contains("p0")) << result["best"].dump();
  std::set<std::string> layouts;
  for (const auto& [status, layout] : TrialLayouts(File("t.db"), "p0")) {
    EXPECT_EQ(status, "ok") << layout;
    layouts.insert(layout);
  }
  EXPECT_GE(layouts.size(), 3u);
  EXPECT_EQ(layouts.count("(none)"), 0u);
}

TEST_F(TuneCommandTest, BadOptionsAreUsageErrors) {
  // Refused before anything is opened: no database appears in the working directory.
  EXPECT_EQ(Tilesmith("tune " + Gelu() + " --strategy annealing").exit_code, 2);
  EXPECT_FALSE(fs::exists(File("tilesmith.db")));
  EXPECT_EQ(Tilesmith("tune " + Gelu() + " --budget lots").exit_code, 2);
  CommandRun flush = Tilesmith("tune " + Gelu() + " --flush sometimes");
  EXPECT_EQ(flush.exit_code, 2);
  EXPECT_NE(flush.err.find("buffers, cache or none"), std::string::npos) << flush.err;
  CommandRun timing = Tilesmith("tune " + Gelu() + " --timing wallclock");
  EXPECT_EQ(timing.exit_code, 2);
  EXPECT_NE(timing.err.find("--timing must be kernel or events"), std::string::npos) << timing.err;
  EXPECT_FALSE(fs::exists(File("tilesmith.db")));
  CommandRun wrong = Tilesmith("tune " + Gelu() + " --target cuda:sm_80 --device h100_sxm");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("not cuda:sm_80"), std::string::npos) << wrong.err;
  CommandRun help = Tilesmith("tune --help");
  for (const char* flag : {"--db", "--budget", "--time", "--strategy", "--seed", "--json",
                           "--timeout-ms", "--rep-ms", "--warmup-ms", "--flush", "--timing"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace tilesmith
