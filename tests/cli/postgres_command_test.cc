// `--db postgresql://…`, run as a user would: `tilesmith db` moves results from a SQLite file
// into a real PostgreSQL server (tests/db/postgres_test_server.h) and back, losing nothing,
// and an unreachable server is named without its password.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/db/db_test_util.h"
#include "tests/db/postgres_test_server.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CliRun {
  int exit_code;
  std::string out;
  std::string err;
};

class PostgresCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    server_ = db::testing::PostgresTestServer::Get(&why_not);
    if (server_ == nullptr) GTEST_SKIP() << "no PostgreSQL server: " << why_not;
  }

  // Runs `tilesmith db ARGUMENTS` in the temp dir.
  CliRun Db(const std::string& arguments) {
    std::string err_path = dir_.File("stderr.txt");
    std::string command = "cd '" + dir_.File("") + "' && env -u TILESMITH_DB " + TILESMITH_CLI +
                          " db " + arguments + " 2>'" + err_path + "'";
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
    int status = pclose(pipe);
    std::ifstream err_file(err_path);
    std::string err((std::istreambuf_iterator<char>(err_file)), std::istreambuf_iterator<char>());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err};
  }

  static json Read(const std::string& path) {
    std::ifstream in(path);
    json document = json::parse(in);
    document.erase("exported_at");
    return document;
  }

  db::testing::PostgresTestServer* server_ = nullptr;
  db::testing::TempDir dir_;
};

TEST_F(PostgresCommandTest, ResultsGoFromSqliteToPostgresAndBackUnchanged) {
  using db::testing::H100;
  using db::testing::Host;
  std::string source = dir_.File("source.db");
  {
    auto store = db::SqliteStore::Open(source);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    db::KernelRecord gelu = db::testing::Kernel("gelu");
    db::KernelRecord softmax = db::testing::Kernel("softmax");
    ASSERT_TRUE((*store)->PutDevice(H100()) && (*store)->PutDevice(Host()));
    ASSERT_TRUE((*store)->PutKernel(gelu) && (*store)->PutKernel(softmax));
    db::MeasurementRecord default_trial = db::testing::Trial(gelu, H100(), {{"v", 4}}, 10);
    default_trial.is_default = true;
    default_trial.job_id = "job-1";
    std::vector<db::MeasurementRecord> trials = {
        default_trial, db::testing::Trial(gelu, H100(), {{"v", 8}, {"tile", {2, 64}}}, 4),
        db::testing::Failure(gelu, H100(), {{"v", 16}}, db::TrialStatus::kCompile, "registers"),
        db::testing::Trial(softmax, Host(), {{"rows", 2}}, 70.125)};
    ASSERT_TRUE((*store)->RecordBatch(trials).has_value());
  }
  auto url = server_->NewDatabase();
  ASSERT_TRUE(url.has_value()) << url.error().message;

  CliRun run = Db("export source.json --db " + source);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  run = Db("import source.json --json --db " + *url);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["measurements_added"], 4);
  run = Db("import source.json --json --db " + *url);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["measurements_present"], 4) << "the second import adds nothing";

  // Both stores name the same winners.
  CliRun best_sqlite = Db("best --json --db " + source);
  CliRun best_postgres = Db("best --json --db " + *url);
  ASSERT_EQ(best_postgres.exit_code, 0) << best_postgres.err;
  EXPECT_EQ(json::parse(best_postgres.out), json::parse(best_sqlite.out));

  run = Db("export postgres.json --db " + *url);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  run = Db("import postgres.json --db back.db");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  run = Db("export back.json --db back.db");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Read(dir_.File("postgres.json")), Read(dir_.File("source.json")));
  EXPECT_EQ(Read(dir_.File("back.json")), Read(dir_.File("source.json")));

  run = Db("stats --json --db " + *url);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json stats = json::parse(run.out);
  EXPECT_EQ(stats["measurements"], 4);
  EXPECT_EQ(stats["schema_version"], db::kSchemaVersion);
}

TEST_F(PostgresCommandTest, AnUnreachableServerIsNamedWithoutItsPassword) {
  // A port nothing listens on: taken and released.
  int port = 0;
  {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
    port = ntohs(address.sin_port);
    close(fd);
  }
  std::string where = "127.0.0.1:" + std::to_string(port) + "/results";
  CliRun run = Db("stats --db postgresql://tuner:s3cret-word@" + where + "?connect_timeout=5");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cannot connect to PostgreSQL at " + where), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("Connection refused"), std::string::npos) << "libpq's reason: " << run.err;
  EXPECT_EQ(run.err.find("s3cret-word"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace tilesmith
