// `tilesmith db`, run as a user would, on a database the Store API filled.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "db/sqlite_store.h"
#include "support/sha256.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Result {
  int exit_code;
  std::string out;
  std::string err;
};

class DbCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tilesmith_db_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    path_ = File("results.db");
    auto store = db::SqliteStore::Open(path_);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    ASSERT_TRUE((*store)->PutDevice(h100_) && (*store)->PutDevice(host_));
    ASSERT_TRUE((*store)->PutKernel(gelu_) && (*store)->PutKernel(softmax_));
    db::MeasurementRecord default_trial = Trial(gelu_, h100_, 4, 10);
    default_trial.is_default = true;
    db::MeasurementRecord crash = Trial(gelu_, h100_, 16, 1);
    crash.status = db::TrialStatus::kCrash;
    crash.message = "worker died: SIGSEGV";
    crash.timing.reset();
    auto batch = (*store)->RecordBatch(std::vector{default_trial, Trial(gelu_, h100_, 8, 4), crash,
                                                   Trial(softmax_, host_, 2, 70)});
    ASSERT_TRUE(batch.has_value()) << batch.error().message;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  // Runs `tilesmith db ARGUMENTS` in the temp dir with `environment` (`NAME=value …`) set.
  Result Db(const std::string& arguments, const std::string& environment = "") {
    std::string err_path = File("stderr.txt");
    std::string command = "cd '" + dir_.string() + "' && env -u TILESMITH_DB " + environment + " " +
                          TILESMITH_CLI + " db " + arguments + " 2>'" + err_path + "'";
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
    int status = pclose(pipe);
    std::ifstream err_file(err_path);
    std::string err((std::istreambuf_iterator<char>(err_file)), std::istreambuf_iterator<char>());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err};
  }

  static db::KernelRecord Kernel(const std::string& name) {
    std::string text = "fusion {\n  tmp_0 = f32[64]{0} parameter(0)  // " + name + "\n}\n";
    return {*Sha256Hex(text), "hlo", name, text};
  }

  static db::MeasurementRecord Trial(const db::KernelRecord& kernel, const db::DeviceRecord& device,
                                     int vector, double median_us) {
    db::MeasurementRecord m;
    m.key = {kernel.fingerprint, device.Key(), "tilesmith-test-1"};
    m.emitter = "loop";
    m.config = {{"vector", vector}};
    m.timing = db::Timing{median_us, median_us, median_us, median_us, median_us, {median_us}};
    m.compile_stats = {{"registers", 24}};
    return m;
  }

  fs::path dir_;
  std::string path_;
  db::DeviceRecord h100_{"cuda", "sm_90", "NVIDIA H100", 132, 1980, 3352, 52428800, "550", "12.4"};
  db::DeviceRecord host_{"host", "host", "Some CPU", 8, 3000, 50, 8388608, "", "llvm-16"};
  db::KernelRecord gelu_ = Kernel("gelu");
  db::KernelRecord softmax_ = Kernel("softmax");
};

TEST_F(DbCommandTest, BestListsTheWinnerWithItsSpeedup) {
  Result run = Db("best --db " + path_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("gelu"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("2.50x"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("cuda:sm_90, NVIDIA H100"), std::string::npos) << run.out;

  run = Db("best --db " + path_ + " --device cuda:sm_90 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json best = json::parse(run.out);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0]["fingerprint"], gelu_.fingerprint);
  EXPECT_EQ(best[0]["device"], h100_.Key());
  EXPECT_EQ(best[0]["config"], json({{"vector", 8}}));
  EXPECT_EQ(best[0]["median_us"], 4);
  EXPECT_EQ(best[0]["default_median_us"], 10);
  EXPECT_EQ(best[0]["speedup"], 2.5);

  run = Db("best " + softmax_.fingerprint.substr(0, 10) + " --db " + path_ + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)[0]["kernel"], "softmax");
  run = Db("best --db " + path_ + " --json --compiler-version tilesmith-other");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out), json::array());
}

TEST_F(DbCommandTest, ListShowAndStats) {
  Result run = Db("list --db " + path_ + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json kernels = json::parse(run.out);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0]["name"], "gelu");
  EXPECT_EQ(kernels[0]["measurements"], 3);
  EXPECT_EQ(kernels[0]["failed"], 1);
  run = Db("list --db " + path_ + " --device host");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find("gelu"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("softmax"), std::string::npos) << run.out;

  run = Db("show " + gelu_.fingerprint.substr(0, 8) + " --db " + path_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("worker died: SIGSEGV"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("ok*"), std::string::npos) << "the default config is marked: " << run.out;
  run = Db("show " + gelu_.fingerprint + " --db " + path_ + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json shown = json::parse(run.out);
  EXPECT_EQ(shown["canonical_text"], gelu_.canonical_text);
  EXPECT_EQ(shown["measurements"].size(), 3u);
  EXPECT_EQ(shown["measurements"][2]["status"], "crash");
  EXPECT_EQ(shown["best"].size(), 1u);

  run = Db("stats --json", "TILESMITH_DB='" + path_ + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json stats = json::parse(run.out);
  EXPECT_EQ(stats["path"], path_) << "$TILESMITH_DB names the database";
  EXPECT_EQ(stats["measurements"], 4);
  EXPECT_EQ(stats["by_status"]["crash"], 1);
  EXPECT_EQ(stats["by_status"]["ok"], 3);
  run = Db("stats --db " + path_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("measurements:   4"), std::string::npos) << run.out;
  run = Db("vacuum --db " + path_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("vacuumed"), std::string::npos) << run.out;
}

TEST_F(DbCommandTest, ExportAndImportMoveResultsOnce) {
  std::string exported = File("results.json");
  Result run = Db("export " + exported + " --db " + path_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Without --db the default is ./tilesmith.db, which import creates.
  run = Db("import results.json --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["measurements_added"], 4);
  EXPECT_TRUE(fs::exists(File("tilesmith.db")));
  run = Db("import results.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("imported 0 measurements (4 already present)"), std::string::npos)
      << run.out;

  run = Db("export --db " + path_ + " --device host");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json document = json::parse(run.out);
  EXPECT_EQ(document["format"], "tilesmith-results");
  EXPECT_EQ(document["measurements"].size(), 1u);
  document["schema_version"] = 99;
  std::ofstream(File("future.json")) << document.dump();
  run = Db("import future.json");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("schema version 99"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("is version " + std::to_string(db::kSchemaVersion)), std::string::npos)
      << run.err;
}

TEST_F(DbCommandTest, MistakesAreExplained) {
  Result run = Db("stats --db missing.db");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("missing.db: no results database there"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(File("missing.db"))) << "reading never creates a database";
  run = Db("frobnicate --db " + path_);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown db action 'frobnicate'"), std::string::npos) << run.err;
  run = Db("show --db " + path_);
  EXPECT_EQ(run.exit_code, 2);
  run = Db("best --db " + path_ + " --device cuda:sm_80");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find(h100_.Key()), std::string::npos) << "lists the devices: " << run.err;
  run = Db("--help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("TILESMITH_DB"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace tilesmith
