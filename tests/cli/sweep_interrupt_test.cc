// `tilesmith sweep` interrupted: Ctrl-C finishes the batch and prints the partial table, a
// SIGKILL leaves a clean database, and `--resume` completes either without measuring a config
// twice.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/sweep_test_util.h"

namespace tilesmith::sweep_testing {
namespace {

using nlohmann::json;

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
}  // namespace tilesmith::sweep_testing
