// What the `tilesmith sweep` tests share: a temp folder per test, the real command run in
// it, and readers of the SQLite file a sweep writes.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/cli/cli_run.h"

namespace tilesmith::sweep_testing {

namespace fs = std::filesystem;

inline std::string Gelu() { return TILESMITH_TEST_DATA_DIR "/tuner/gelu_f32.hlo"; }
inline std::string Examples() { return TILESMITH_SOURCE_DIR "/configs/examples"; }
inline std::string CorpusRoot() {
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
inline std::vector<std::vector<std::string>> TextRows(const std::string& path, const char* sql) {
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
inline std::vector<std::pair<std::string, std::string>> Trials(const std::string& path,
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
inline std::vector<std::tuple<std::string, std::string, double>> Predictions(
    const std::string& path) {
  std::vector<std::tuple<std::string, std::string, double>> predictions;
  for (const auto& row :
       TextRows(path, "SELECT device_key, status, predicted_us FROM predictions")) {
    predictions.emplace_back(row[0], row[1], row[2].empty() ? 0.0 : std::stod(row[2]));
  }
  return predictions;
}

inline void ExpectNoConfigMeasuredTwice(
    const std::vector<std::pair<std::string, std::string>>& trials) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& trial : trials) {
    EXPECT_TRUE(seen.insert(trial).second) << "config " << trial.second << " measured twice";
  }
}

}  // namespace tilesmith::sweep_testing
