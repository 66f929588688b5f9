// The schema version and its migrations: old files open in new code, files from newer code
// are refused by name, files that are not ours are refused, and a failed step changes nothing.
#include "db/schema.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/db/db_test_util.h"

namespace tilesmith::db {
namespace {

using testing::H100;
using testing::Kernel;
using testing::OpenStore;
using testing::TempDir;
using testing::Trial;

std::unique_ptr<sqlite::Connection> Raw(const std::string& path) {
  auto connection = sqlite::Connection::Open(path, sqlite::OpenMode::kCreate, 1000);
  EXPECT_TRUE(connection.has_value()) << connection.error().message;
  return connection ? std::move(*connection) : nullptr;
}

// The schema as SQLite stores it, to compare two files.
std::string SchemaText(sqlite::Connection& connection) {
  auto query = connection.Prepare(
      "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master ORDER BY name");
  std::string text;
  while (*query->Step()) text += query->Text(0) + "\n";
  return text;
}

// A version-2 step of the kind a real one would be: a new column with a default.
Status AddNotesColumn(sqlite::Connection& connection) {
  return connection.Execute("ALTER TABLE measurements ADD COLUMN notes TEXT NOT NULL DEFAULT ''");
}

Status FailHalfWay(sqlite::Connection& connection) {
  TS_RETURN_IF_ERROR(connection.Execute("CREATE TABLE half_done (x INTEGER)"));
  return InvalidArgument("migration failed on purpose");
}

TEST(SchemaTest, MigrationsAreNumberedOneToTheCurrentVersion) {
  std::span<const Migration> migrations = Migrations();
  ASSERT_EQ(migrations.size(), static_cast<size_t>(kSchemaVersion));
  for (size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].version, static_cast<int>(i + 1));
    EXPECT_FALSE(migrations[i].description.empty());
  }
}

TEST(SchemaTest, AnEmptyFileMigratesToTheCurrentVersion) {
  TempDir dir;
  auto connection = Raw(dir.File("new.db"));
  EXPECT_EQ(*ReadSchemaVersion(*connection), 0);
  ASSERT_TRUE(Migrate(*connection, Migrations()).has_value());
  EXPECT_EQ(*ReadSchemaVersion(*connection), kSchemaVersion);
  EXPECT_EQ(*connection->QueryInt("SELECT count(*) FROM schema_version"), kSchemaVersion);
  ASSERT_TRUE(Migrate(*connection, Migrations()).has_value()) << "migrating twice is a no-op";
  EXPECT_EQ(*connection->QueryInt("SELECT count(*) FROM schema_version"), kSchemaVersion);
}

TEST(SchemaTest, StepwiseMigrationGivesTheSameSchemaAsAFreshFile) {
  TempDir dir;
  auto stepwise = Raw(dir.File("stepwise.db"));
  std::span<const Migration> all = Migrations();
  for (size_t n = 1; n <= all.size(); ++n) {
    ASSERT_TRUE(Migrate(*stepwise, all.first(n)).has_value());
    EXPECT_EQ(*ReadSchemaVersion(*stepwise), static_cast<int>(n));
  }
  auto fresh = OpenStore(dir.File("fresh.db"));
  auto fresh_raw = Raw(dir.File("fresh.db"));
  EXPECT_EQ(SchemaText(*stepwise), SchemaText(*fresh_raw));
}

TEST(SchemaTest, AVersionOneFileKeepsItsDataThroughTheNextMigration) {
  TempDir dir;
  std::string path = dir.File("v1.db");
  KernelRecord gelu = Kernel("gelu");
  {
    auto store = OpenStore(path);
    ASSERT_TRUE(store->PutDevice(H100()) && store->PutKernel(gelu));
    ASSERT_TRUE(store->RecordBatch(std::vector{Trial(gelu, H100(), {{"v", 1}}, 3)}).has_value());
  }
  std::vector<Migration> with_v2(Migrations().begin(), Migrations().end());
  with_v2.push_back({kSchemaVersion + 1, "measurement notes", &AddNotesColumn});
  auto connection = Raw(path);
  ASSERT_TRUE(Migrate(*connection, with_v2).has_value());
  EXPECT_EQ(*ReadSchemaVersion(*connection), kSchemaVersion + 1);
  EXPECT_EQ(*connection->QueryInt("SELECT count(*) FROM measurements WHERE notes = ''"), 1);
  EXPECT_EQ(*connection->QueryInt("SELECT count(*) FROM best_results"), 1);
}

TEST(SchemaTest, AVersionFiveFileGainsVerdictsAndKeepsItsTrials) {
  TempDir dir;
  std::string path = dir.File("v5.db");
  KernelRecord gelu = Kernel("gelu");
  {
    auto connection = Raw(path);
    ASSERT_TRUE(Migrate(*connection, Migrations().first(5)).has_value());
    EXPECT_EQ(*connection->QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'verdicts'"),
              0);
  }
  {
    // A kernel written by a version-5 tilesmith, straight into its table.
    auto connection = Raw(path);
    auto insert = connection->Prepare(
        "INSERT INTO kernels (fingerprint, source_format, name, canonical_text, created_at) "
        "VALUES (?, 'hlo', 'gelu', ?, 't')");
    ASSERT_TRUE(insert.has_value());
    insert->BindAll(gelu.fingerprint, gelu.canonical_text);
    ASSERT_TRUE(insert->Run().has_value());
  }
  auto store = OpenStore(path);  // migrates to the current version
  ASSERT_NE(store, nullptr);
  auto kept = store->GetKernel(gelu.fingerprint);
  ASSERT_TRUE(kept.has_value() && kept->has_value());
  EXPECT_EQ((*kept)->name, "gelu");
  auto connection = Raw(path);
  EXPECT_EQ(*ReadSchemaVersion(*connection), kSchemaVersion);
  EXPECT_EQ(*connection->QueryInt("SELECT count(*) FROM verdicts"), 0);
  auto none = store->Verdicts(std::vector<ResultKey>{{gelu.fingerprint, H100().Key(), "c"}});
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE((*none)[0].has_value()) << "keys tuned before verdicts have none";
}

TEST(SchemaTest, AVersionSixFileGainsAnEmptyWorkQueue) {
  TempDir dir;
  std::string path = dir.File("v6.db");
  {
    auto connection = Raw(path);
    ASSERT_TRUE(Migrate(*connection, Migrations().first(6)).has_value());
    EXPECT_EQ(*connection->QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'work_units'"),
              0);
  }
  auto store = OpenStore(path);  // migrates to the current version
  ASSERT_NE(store, nullptr);
  auto counts = store->CountUnits("");
  ASSERT_TRUE(counts.has_value()) << counts.error().message;
  EXPECT_EQ(counts->total(), 0);
  auto agents = store->ListAgents(0);
  ASSERT_TRUE(agents.has_value());
  EXPECT_TRUE(agents->empty());
  EXPECT_EQ(*ReadSchemaVersion(*Raw(path)), kSchemaVersion);
}

TEST(SchemaTest, AFailedMigrationLeavesTheOldVersion) {
  TempDir dir;
  std::string path = dir.File("v1.db");
  ASSERT_NE(OpenStore(path), nullptr);
  std::vector<Migration> with_v2(Migrations().begin(), Migrations().end());
  with_v2.push_back({kSchemaVersion + 1, "broken", &FailHalfWay});
  auto connection = Raw(path);
  auto migrated = Migrate(*connection, with_v2);
  ASSERT_FALSE(migrated.has_value());
  EXPECT_NE(migrated.error().message.find("migration failed on purpose"), std::string::npos);
  EXPECT_EQ(*ReadSchemaVersion(*connection), kSchemaVersion);
  EXPECT_EQ(*connection->QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'"),
            0);
}

TEST(SchemaTest, ANewerSchemaIsRefusedNamingBothVersions) {
  TempDir dir;
  std::string path = dir.File("future.db");
  ASSERT_NE(OpenStore(path), nullptr);
  {
    auto connection = Raw(path);
    ASSERT_TRUE(connection
                    ->Execute("INSERT INTO schema_version VALUES (" +
                              std::to_string(kSchemaVersion + 1) +
                              ", 'from the future', '2030-01-01T00:00:00.000Z')")
                    .has_value());
  }
  auto store = SqliteStore::Open(path);
  ASSERT_FALSE(store.has_value());
  const std::string& message = store.error().message;
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("schema version " + std::to_string(kSchemaVersion + 1)), std::string::npos)
      << message;
  EXPECT_NE(message.find("understands (" + std::to_string(kSchemaVersion) + ")"), std::string::npos)
      << message;
}

TEST(SchemaTest, FilesThatAreNotOursAreRefused) {
  TempDir dir;
  std::string garbage = dir.File("garbage.db");
  std::ofstream(garbage) << std::string(8192, 'x');
  auto not_sqlite = SqliteStore::Open(garbage);
  ASSERT_FALSE(not_sqlite.has_value());
  EXPECT_NE(not_sqlite.error().message.find("not a database"), std::string::npos)
      << not_sqlite.error().message;

  std::string foreign = dir.File("foreign.db");
  ASSERT_TRUE(Raw(foreign)->Execute("CREATE TABLE photos (id INTEGER)").has_value());
  auto not_ours = SqliteStore::Open(foreign);
  ASSERT_FALSE(not_ours.has_value());
  EXPECT_NE(not_ours.error().message.find("not a tilesmith results database"), std::string::npos);

  auto missing = SqliteStore::Open(dir.File("missing.db"), {.mode = sqlite::OpenMode::kReadWrite});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir.File("missing.db"))) << "not created";
}

TEST(SchemaTest, TheSqlite3ShellReadsTheFile) {
  if (std::system("command -v sqlite3 >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no sqlite3 shell installed";
  }
  TempDir dir;
  std::string path = dir.File("shell.db");
  KernelRecord gelu = Kernel("gelu");
  {
    auto store = OpenStore(path);
    ASSERT_TRUE(store->PutDevice(H100()) && store->PutKernel(gelu));
    ASSERT_TRUE(store
                    ->RecordBatch(std::vector{Trial(gelu, H100(), {{"vector", 4}}, 3),
                                              Trial(gelu, H100(), {{"vector", 2}}, 2)})
                    .has_value());
  }
  std::string command = "sqlite3 -readonly '" + path +
                        "' \"SELECT kernel_name, config_json, median_us FROM best_results\"";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[256] = {};
  std::string out;
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) out += buffer;
  EXPECT_EQ(pclose(pipe), 0);
  EXPECT_EQ(out, "gelu|{\"vector\":2}|2.0\n");
}

}  // namespace
}  // namespace tilesmith::db
