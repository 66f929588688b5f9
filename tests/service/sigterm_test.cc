// `tilesmith serve` as a real process: it prints its URL, serves, and on SIGTERM commits
// what its job measured, marks the job queued again and exits 0.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <tuple>

#include "db/sqlite_store.h"
#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

// The child's pid and its stdout.
struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
};

Child StartServe(const std::vector<std::string>& arguments) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> argv;
    for (const std::string& argument : arguments)
      argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  return {pid, fdopen(pipe_fds[0], "r")};
}

// Waits up to `seconds` for the child; its wait status, or -1 when it is still running.
int WaitForExit(pid_t pid, double seconds) {
  int status = 0;
  bool exited = WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, seconds);
  return exited ? status : -1;
}

TEST(SigtermTest, ServeFinishesTheCandidateInFlightRequeuesAndExitsZero) {
  TempDir dir;
  std::string db_path = dir.File("data/tilesmith.db");
  Child child =
      StartServe({TILESMITH_CLI, "--log-level", "warning", "serve", "--port", "0", "--db", db_path,
                  "--workers", "1", "--batch", "1", "--warmup-ms", "1", "--rep-ms", "15"});
  ASSERT_GT(child.pid, 0);
  char line[512] = {0};
  ASSERT_NE(fgets(line, sizeof(line), child.out), nullptr) << "serve printed nothing";
  std::string text = line;
  size_t colon = text.rfind(':');
  ASSERT_NE(text.find("serving on http://127.0.0.1:"), std::string::npos) << text;
  int port = std::stoi(text.substr(colon + 1));

  Reply submitted =
      Client(port).Send("POST", "/v1/tune", json{{"fusion", TinyFusion(21)}, {"budget", 0}}.dump());
  ASSERT_EQ(submitted.status, 202) << submitted.body;
  std::string id = submitted.Json()["job"]["id"];
  ASSERT_TRUE(WaitFor(
      [&] {
        return Client(port).Send("GET", "/v1/jobs/" + id).Json()["progress"]["measured"] >= 2;
      },
      60));

  ASSERT_EQ(kill(child.pid, SIGTERM), 0);
  int status = WaitForExit(child.pid, 30);
  ASSERT_NE(status, -1) << "serve did not exit within 30 s of SIGTERM";
  EXPECT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  fclose(child.out);

  auto store = db::SqliteStore::Open(db_path);
  ASSERT_TRUE(store.has_value()) << store.error().message;
  auto job = (*store)->GetJob(id);
  ASSERT_TRUE(job.has_value() && job->has_value());
  EXPECT_EQ((*job)->state, db::JobState::kQueued);
  auto trials = (*store)->Measurements({(*job)->fingerprint});
  ASSERT_TRUE(trials.has_value());
  EXPECT_GE(trials->size(), 2u) << "committed trials survive";
  EXPECT_LT(trials->size(), 72u) << "it stopped early";
  EXPECT_EQ((*job)->progress["measured"].get<size_t>(), trials->size())
      << "the job's progress matches what was committed";
  for (const db::MeasurementRecord& trial : *trials) {
    EXPECT_NE(trial.status, db::TrialStatus::kCrash)
        << "no candidate was killed: " << trial.message;
  }
}

TEST(ServeCommandTest, BadFlagsAreClearErrorsAndNoServer) {
  TempDir dir;
  auto run = [&](const std::string& flags) {
    std::string command = std::string(TILESMITH_CLI) + " serve --db " + dir.File("t.db") + " " +
                          flags + " 2>" + dir.File("err.txt") + " >/dev/null";
    int status = std::system(command.c_str());
    return std::pair{WEXITSTATUS(status), ReadFile(dir.File("err.txt"))};
  };
  auto [code, err] = run("--port 70000");
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("--port expects an integer in 0..65535"), std::string::npos) << err;
  std::tie(code, err) = run("--token-file " + dir.File("missing"));
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("--token-file: cannot read"), std::string::npos) << err;
  std::ofstream(dir.File("empty")) << "\n";
  std::tie(code, err) = run("--token-file " + dir.File("empty"));
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("holds no token"), std::string::npos) << err;
  std::tie(code, err) = run("--targets host,warp:9");
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("warp:9"), std::string::npos) << err;
}

}  // namespace
}  // namespace tilesmith::service::testing
