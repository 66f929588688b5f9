// What only the SQLite store promises, beside the contract every store keeps
// (tests/db/*_contract_test.cc): files written by other tools or older versions, the write-ahead
// log, query plans. Durability, concurrency and schema migrations have their own files.
#include "db/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "db/schema.h"
#include "tests/db/db_test_util.h"

namespace tilesmith::db::testing {
namespace {

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenStore(path_);
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->PutDevice(Host()).has_value());
    ASSERT_TRUE(store_->PutKernel(gelu_).has_value());
  }

  // Runs `sql` on the file through a connection of its own, as another tool would.
  void Edit(const std::string& sql) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    char* error = nullptr;
    int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &error);
    std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(raw);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }

  TempDir dir_;
  std::string path_ = dir_.File("results.db");
  std::unique_ptr<SqliteStore> store_;
  KernelRecord gelu_ = Kernel("gelu");
};

// A list of repetition times written by another tool (spaces, exponents) reads as JSON says.
TEST_F(SqliteStoreTest, RepetitionTimesWrittenByAnotherToolReadAsJsonSays) {
  ASSERT_TRUE(store_->RecordBatch(std::vector{Trial(gelu_, Host(), {{"v", 2}}, 3)}).has_value());
  Edit("UPDATE measurements SET times_us = '[ 1.5, 2E+1 ,3 ]'");
  auto read = store_->Measurements({});
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].timing->times_us, (std::vector<double>{1.5, 20, 3}));
}

// A field corrupted behind the store's back (a disk fault, a hand edit) is reported on one
// line of printable text, whatever bytes it holds.
TEST_F(SqliteStoreTest, ACorruptedJsonFieldIsReportedOnOnePrintableLine) {
  ASSERT_TRUE(store_->RecordBatch(std::vector{Trial(gelu_, Host(), {{"v", 1}}, 5)}).has_value());
  Edit(
      "PRAGMA ignore_check_constraints = 1; UPDATE measurements SET "
      "compile_stats = CAST(x'7b0a22ff010d0a5c7d' AS TEXT);");
  auto measurements = store_->Measurements({});
  ASSERT_FALSE(measurements.has_value());
  const std::string& message = measurements.error().message;
  EXPECT_NE(message.find("compile_stats is not valid JSON"), std::string::npos) << message;
  for (char c : message) {
    EXPECT_TRUE(c >= 0x20 && c < 0x7f)
        << "byte " << static_cast<int>(static_cast<unsigned char>(c)) << " in: " << message;
  }
  EXPECT_NE(message.find("\\xff"), std::string::npos) << message;
}

TEST_F(SqliteStoreTest, VacuumTruncatesTheWriteAheadLog) {
  ASSERT_TRUE(store_
                  ->RecordBatch(std::vector{Trial(gelu_, Host(), {{"v", 1}}, 5),
                                            Trial(gelu_, Host(), {{"v", 2}}, 4)})
                  .has_value());
  EXPECT_GT(store_->Stats()->database_bytes, 0);
  ASSERT_TRUE(store_->Vacuum().has_value());
  EXPECT_EQ(store_->Stats()->wal_bytes, 0) << "vacuum truncates the log";
  EXPECT_EQ(store_->Measurements({})->size(), 2u);
}

TEST_F(SqliteStoreTest, AKeyFilterReadsThatKeysTrialsThroughTheIndex) {
  auto connection = sqlite::Connection::Open(path_, sqlite::OpenMode::kReadOnly, 100);
  ASSERT_TRUE(connection.has_value());
  auto plan = (*connection)
                  ->Prepare("EXPLAIN QUERY PLAN SELECT * FROM (" +
                            BestResultsQuery("m.fingerprint = ? AND m.device_key = ? AND "
                                             "m.compiler_version = ?") +
                            ")");
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  std::string steps;
  while (*plan->Step()) steps += plan->Text(3) + "\n";
  EXPECT_NE(steps.find("SEARCH m USING INDEX measurements_by_key"), std::string::npos) << steps;
  EXPECT_EQ(steps.find("SCAN m"), std::string::npos) << steps;
}

TEST(SqliteMigrationTest, AVersionOneFileGainsTheJobsTableAndKeepsItsResults) {
  TempDir dir;
  std::string path = dir.File("v1.db");
  KernelRecord gelu = Kernel("gelu");
  {
    auto connection = sqlite::Connection::Open(path, sqlite::OpenMode::kCreate, 1000);
    ASSERT_TRUE(connection.has_value());
    ASSERT_TRUE(Migrate(**connection, Migrations().first(1)).has_value());
    EXPECT_EQ(*ReadSchemaVersion(**connection), 1);
  }
  auto store = OpenStore(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Stats()->schema_version, kSchemaVersion);
  ASSERT_TRUE(store->PutDevice(H100()) && store->PutKernel(gelu));
  ASSERT_TRUE(store->RecordBatch(std::vector{Trial(gelu, H100(), {{"v", 1}}, 3)}).has_value());
  JobRecord job;
  job.id = NewUid();
  job.dedupe_key = "key-gelu";
  job.fingerprint = gelu.fingerprint;
  job.device_key = H100().Key();
  job.compiler_version = "tilesmith-test";
  job.target = "cuda:sm_90";
  job.source_format = "hlo";
  job.fusion_text = "ENTRY e { ROOT p = f32[4] parameter(0) }";
  ASSERT_TRUE(store->PutJob(job).has_value());
  EXPECT_EQ(store->ListJobs({})->size(), 1u);
  EXPECT_EQ(store->ListBest({})->size(), 1u);
}

TEST(SqliteMigrationTest, AVersionTwoFileGainsTheModelsTableAndKeepsItsResults) {
  TempDir dir;
  std::string path = dir.File("v2.db");
  KernelRecord gelu = Kernel("gelu");
  {
    auto connection = sqlite::Connection::Open(path, sqlite::OpenMode::kCreate, 1000);
    ASSERT_TRUE(connection.has_value());
    ASSERT_TRUE(Migrate(**connection, Migrations().first(2)).has_value());
    EXPECT_EQ(*ReadSchemaVersion(**connection), 2);
    EXPECT_EQ(*(*connection)->QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'models'"),
              0);
  }
  {
    // A result written by version-2 code, row by row as it wrote them.
    auto connection = sqlite::Connection::Open(path, sqlite::OpenMode::kReadWrite, 1000);
    ASSERT_TRUE(connection.has_value());
    std::string hash(64, 'a');
    ASSERT_TRUE((*connection)
                    ->Execute("INSERT INTO devices VALUES ('" + Host().Key() +
                              "', 'host', 'host', 'cpu', 16, 2450, 40, 33554432, '', 'llvm');"
                              "INSERT INTO kernels VALUES ('" +
                              gelu.fingerprint + "', 'hlo', 'gelu', 'text', '2024-01-01');" +
                              "INSERT INTO configs VALUES ('" + gelu.fingerprint + "', '" + hash +
                              "', 'loop', '{\"v\":1}');" +
                              "INSERT INTO measurements (uid, fingerprint, config_hash, "
                              "device_key, compiler_version, status, median_us, measured_at) "
                              "VALUES ('u1', '" +
                              gelu.fingerprint + "', '" + hash + "', '" + Host().Key() +
                              "', 'tilesmith-test-1', 'ok', 3.0, '2024-01-01T00:00:00.000Z');")
                    .has_value());
  }
  auto store = OpenStore(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Stats()->schema_version, kSchemaVersion);
  auto best = store->ListBest({});
  ASSERT_TRUE(best.has_value());
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].measurement.timing->median_us, 3.0);
  ModelRecord model;
  model.name = "learned-xgboost";
  model.device_key = Host().Key();
  model.compiler_version = "tilesmith-test-1";
  model.feature_schema = 1;
  model.format = "xgboost-json";
  model.data = "{}";
  ASSERT_TRUE(store->PutModel(model).has_value());
  EXPECT_TRUE((*store->LatestModel("learned-xgboost", Host().Key(), "tilesmith-test-1", 1)));
}

TEST(SqliteMigrationTest, AVersionThreeFileGainsBothTablesAndKeepsItsModels) {
  TempDir dir;
  std::string path = dir.File("v3.db");
  {
    auto connection = sqlite::Connection::Open(path, sqlite::OpenMode::kCreate, 1000);
    ASSERT_TRUE(connection.has_value());
    ASSERT_TRUE(Migrate(**connection, Migrations().first(3)).has_value());
    ASSERT_TRUE((*connection)
                    ->Execute("INSERT INTO models (name, device_key, compiler_version, "
                              "feature_schema, format, data, training_rows, fusions, "
                              "created_at) VALUES ('learned-xgboost', 'k', 'c', 1, "
                              "'xgboost-json', '{}', 1, 1, '2026-01-01')")
                    .has_value());
  }
  auto store = OpenStore(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Stats()->schema_version, kSchemaVersion);
  EXPECT_TRUE(store->LatestModel("learned-xgboost", "k", "c", 1)->has_value());
  ASSERT_TRUE(store->PutCalibration({0, Host().Key(), {{"threads", 2}}, ""}).has_value());
}

}  // namespace
}  // namespace tilesmith::db::testing
