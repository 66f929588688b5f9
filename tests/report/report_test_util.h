// Shared pieces of the report tests: one real results database per test binary, filled by
// two real tunes (`tilesmith tune` on the host: a fusion whose first configs vary in two
// parameters, and GELU, whose vary in three, with real worker faults) plus a kernel with a
// hostile name and one trial of every failure class (compile and launch failures cannot be
// caused on the host), written through the SqliteStore as the tuner would.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "db/sqlite_store.h"
#include "tests/db/db_test_util.h"

namespace tilesmith::report::testing {

/// What a command printed and how it ended.
struct CommandRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// Runs `command` through the shell in `dir`, stdout captured, stderr into a file.
inline CommandRun Shell(const std::string& dir, const std::string& command) {
  std::string err_path = dir + "/stderr.txt";
  std::string line = "cd '" + dir + "' && " + command + " 2>'" + err_path + "'";
  FILE* pipe = popen(line.c_str(), "r");
  CommandRun run;
  if (pipe == nullptr) return run;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) run.out.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.err = ReadFile(err_path);
  return run;
}

/// An elementwise f32[4,8] loop fusion: so small that its default is the space's first
/// config, so an exhaustive tune of 6 varies only `chunks` (1, 2, 4) and `vector` (1, 2).
inline std::string SmallFusion() {
  return "HloModule small\n\nsmall {\n  p = f32[4,8] parameter(0)\n  c = f32[] constant(1.5)\n"
         "  b = f32[4,8] broadcast(c), dimensions={}\n  a = f32[4,8] add(p, b)\n"
         "  ROOT e = f32[4,8] exponential(a)\n}\n\nENTRY main {\n  p = f32[4,8] parameter(0)\n"
         "  ROOT fusion = f32[4,8] fusion(p), kind=kLoop, calls=small\n}\n";
}

/// The kernel name the hostile kernel is stored under.
inline const char* kHostileName = "evil <&> \"kernel\" 'x' <script>alert(1)</script>";

/// The database every report test reads; built once per test binary.
class SharedDatabase {
 public:
  static const SharedDatabase& Get() {
    static const SharedDatabase database;  // Its directory goes at exit.
    return database;
  }
  std::string dir() const { return dir_.File(""); }
  std::string db() const { return dir_.File("results.db"); }
  std::string small_fingerprint;
  std::string gelu_fingerprint;
  std::string hostile_fingerprint;
  std::string setup_error;  ///< Non-empty when building the database failed.

 private:
  SharedDatabase() {
    {
      std::ofstream file(dir_.File("small.hlo"));
      file << SmallFusion();
    }
    // GELU's tune of 10 meets four real faults in its `tilesmith worker` (the tuner tests'
    // TILESMITH_WORKER_FAULT): a crash, a red-zone write, a wrong result and a hang.
    const std::string faults =
        R"(TILESMITH_WORKER_FAULT='{"crash": {"chunks": 2, "vector": 1}, )"
        R"("red_zone": {"chunks": 4, "vector": 2}, "wrong_result": {"chunks": 2, "vector": 4}, )"
        R"("hang": {"chunks": 1, "vector": 2}}' )";
    const struct {
      std::string file;
      std::string environment;
      int budget;
      std::string* fingerprint;
    } tunes[] = {{dir_.File("small.hlo"), "", 6, &small_fingerprint},
                 {TILESMITH_TEST_DATA_DIR "/tuner/gelu_f32.hlo", faults, 10, &gelu_fingerprint}};
    for (const auto& tune : tunes) {
      CommandRun run =
          Shell(dir_.File(""), tune.environment + TILESMITH_CLI + " tune '" + tune.file +
                                   "' --target host --strategy exhaustive --budget " +
                                   std::to_string(tune.budget) +
                                   " --db results.db --quiet --warmup-ms 1 "
                                   "--rep-ms 5 --no-flush --timeout-ms 1000 --json");
      nlohmann::json result = nlohmann::json::parse(run.out, nullptr, false);
      if (run.exit_code != 0 || result.is_discarded()) {
        setup_error = "tune " + tune.file + " failed: " + run.err + run.out;
        return;
      }
      *tune.fingerprint = result["fingerprint"];
    }
    AddHostileKernel();
  }

  // A kernel named with HTML metacharacters, three verified configs (varying in three
  // fields) and one trial of every failure class, on the host device the tunes wrote.
  void AddHostileKernel() {
    auto store = db::SqliteStore::Open(db());
    if (!store) {
      setup_error = store.error().message;
      return;
    }
    auto devices = (*store)->ListDevices();
    if (!devices || devices->size() != 1) {
      setup_error = "expected one device after the tunes";
      return;
    }
    const db::DeviceRecord& device = devices->front();
    db::KernelRecord kernel = db::testing::Kernel(kHostileName);
    hostile_fingerprint = kernel.fingerprint;
    std::vector<db::MeasurementRecord> trials;
    using nlohmann::json;
    auto config = [](int threads, int vector, const std::string& note) {
      return json{{"threads", threads}, {"vector", vector}, {"note", note}};
    };
    trials.push_back(db::testing::Trial(kernel, device, config(128, 1, "</svg><b>&amp;"), 42.5));
    trials.back().is_default = true;
    trials.push_back(db::testing::Trial(kernel, device, config(256, 2, "plain"), 31.25));
    trials.push_back(db::testing::Trial(kernel, device, config(64, 4, "x<y"), 55.0));
    const std::pair<db::TrialStatus, const char*> failures[] = {
        {db::TrialStatus::kCompile, "LLVM ERROR: <unsupported> & broken"},
        {db::TrialStatus::kLaunch, "too many resources requested for launch"},
        {db::TrialStatus::kCrash, "worker died with signal 11 (SIGSEGV)"},
        {db::TrialStatus::kTimeout, "still running after 5000 ms"},
        {db::TrialStatus::kTimeout, "still running after 5000 ms (again)"},
        {db::TrialStatus::kRedZone, "wrote 4 bytes past output 0"},
        {db::TrialStatus::kWrongResult, "max error 3.5 > tolerance 1e-05"},
    };
    int threads = 512;
    for (const auto& [status, message] : failures) {
      trials.push_back(
          db::testing::Failure(kernel, device, config(threads, 8, "fail"), status, message));
      threads += 32;
    }
    // Measurement order is measured_at order: one millisecond apart, like a real tune.
    for (size_t i = 0; i < trials.size(); ++i) {
      char stamp[64];
      std::snprintf(stamp, sizeof(stamp), "2026-01-02T03:04:%02zu.000Z", i);
      trials[i].measured_at = stamp;
      trials[i].key.compiler_version = compiler_version();
    }
    auto put = (*store)->PutKernel(kernel);
    auto batch = (*store)->RecordBatch(trials);
    if (!put || !batch) setup_error = "writing the hostile kernel failed";
  }

  // The compiler version of the tunes' rows, so every key shares it.
  std::string compiler_version() {
    auto store = db::SqliteStore::Open(db());
    if (!store) return "";
    auto stats = (*store)->Stats();
    return stats && !stats->compiler_versions.empty() ? stats->compiler_versions.front() : "";
  }

  db::testing::TempDir dir_;
};

/// Fails the calling test when the shared database could not be built.
#define REPORT_REQUIRE_DATABASE()                                \
  const ::tilesmith::report::testing::SharedDatabase& database = \
      ::tilesmith::report::testing::SharedDatabase::Get();       \
  ASSERT_TRUE(database.setup_error.empty()) << database.setup_error

/// How often `needle` occurs in `text`.
inline int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace tilesmith::report::testing
