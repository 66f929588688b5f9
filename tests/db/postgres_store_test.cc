// What only the PostgreSQL store promises, on a real server (postgres_test_server.h):
// processes and threads sharing one database, migrations run once, schemas that are not ours
// or newer refused, read-only sessions, and URLs that never show their password.
#include "db/postgres_store.h"

#include <gtest/gtest.h>

#include <thread>

#include "db/open_store.h"
#include "tests/db/db_test_util.h"
#include "tests/db/postgres_test_server.h"

namespace tilesmith::db::testing {
namespace {

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    server_ = PostgresTestServer::Get(&why_not);
    if (server_ == nullptr) GTEST_SKIP() << "no PostgreSQL server: " << why_not;
    auto url = server_->NewDatabase();
    ASSERT_TRUE(url.has_value()) << url.error().message;
    url_ = *url;
  }

  std::unique_ptr<postgres::Connection> Admin() {
    auto connection = postgres::Connection::Open(url_);
    EXPECT_TRUE(connection.has_value()) << connection.error().message;
    return connection ? std::move(*connection) : nullptr;
  }

  PostgresTestServer* server_ = nullptr;
  std::string url_;
};

TEST_F(PostgresStoreTest, StoresOpenedTogetherMigrateOnce) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(6);
  for (size_t i = 0; i < errors.size(); ++i) {
    threads.emplace_back([&, i] {
      auto store = PostgresStore::Open(url_);
      if (!store) errors[i] = store.error().message;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  auto admin = Admin();
  ASSERT_NE(admin, nullptr);
  EXPECT_EQ(*admin->QueryInt("SELECT count(*) FROM schema_version"), kSchemaVersion);
}

TEST_F(PostgresStoreTest, WritersOnTheirOwnConnectionsLoseNothing) {
  KernelRecord kernel = Kernel("shared");
  {
    auto store = PostgresStore::Open(url_);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    ASSERT_TRUE((*store)->PutDevice(Host()) && (*store)->PutKernel(kernel));
  }
  constexpr int kWriters = 4, kBatches = 10, kPerBatch = 5;
  std::vector<std::string> errors(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto store = PostgresStore::Open(url_);
      if (!store) {
        errors[w] = store.error().message;
        return;
      }
      for (int b = 0; b < kBatches; ++b) {
        std::vector<MeasurementRecord> batch;
        // The same configs from every writer: their config rows race.
        for (int i = 0; i < kPerBatch; ++i) {
          batch.push_back(Trial(kernel, Host(), {{"v", i}}, 10 + w + b * 0.1));
        }
        auto written = (*store)->RecordBatch(batch);
        if (!written) errors[w] = written.error().message;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  auto store = PostgresStore::Open(url_);
  ASSERT_TRUE(store.has_value());
  auto stats = (*store)->Stats();
  ASSERT_TRUE(stats.has_value()) << stats.error().message;
  EXPECT_EQ(stats->measurements, kWriters * kBatches * kPerBatch);
  EXPECT_EQ(stats->configs, kPerBatch);
}

TEST_F(PostgresStoreTest, ASchemaThatIsNotOursOrNewerIsRefused) {
  {
    auto admin = Admin();
    ASSERT_NE(admin, nullptr);
    ASSERT_TRUE(admin->Execute("CREATE TABLE inventory (item TEXT)").has_value());
  }
  auto refused = PostgresStore::Open(url_);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("not a tilesmith results database"), std::string::npos)
      << refused.error().message;

  auto fresh = server_->NewDatabase();
  ASSERT_TRUE(fresh.has_value());
  url_ = *fresh;
  ASSERT_TRUE(PostgresStore::Open(url_).has_value());
  {
    auto admin = Admin();
    ASSERT_TRUE(admin
                    ->Execute("INSERT INTO schema_version VALUES ($1, 'future', 'now')",
                              postgres::Params().Add(kSchemaVersion + 1))
                    .has_value());
  }
  auto newer = PostgresStore::Open(url_);
  ASSERT_FALSE(newer.has_value());
  EXPECT_NE(newer.error().message.find("schema version " + std::to_string(kSchemaVersion + 1) +
                                       ", newer than this tilesmith understands (" +
                                       std::to_string(kSchemaVersion) + ")"),
            std::string::npos)
      << newer.error().message;
}

TEST_F(PostgresStoreTest, AReadOnlyStoreNeitherMigratesNorWrites) {
  auto unmigrated = db::OpenStore(url_, StoreAccess::kReadOnly);
  ASSERT_FALSE(unmigrated.has_value());
  EXPECT_NE(unmigrated.error().message.find("needs migrating"), std::string::npos)
      << unmigrated.error().message;
  ASSERT_TRUE(db::OpenStore(url_).has_value());
  auto reader = db::OpenStore(url_, StoreAccess::kReadOnly);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  EXPECT_TRUE((*reader)->ListDevices().has_value());
  auto write = (*reader)->PutDevice(Host());
  ASSERT_FALSE(write.has_value());
  EXPECT_NE(write.error().message.find("read-only"), std::string::npos) << write.error().message;
}

TEST_F(PostgresStoreTest, TextPostgresCannotHoldIsRefusedNotCut) {
  auto store = PostgresStore::Open(url_);
  ASSERT_TRUE(store.has_value());
  KernelRecord kernel = Kernel("nul");
  ASSERT_TRUE((*store)->PutDevice(Host()) && (*store)->PutKernel(kernel));
  MeasurementRecord trial = Failure(kernel, Host(), {{"v", 1}}, TrialStatus::kCrash, "");
  trial.message = std::string("before\0after", 12);
  auto refused = (*store)->RecordBatch(std::vector{trial});
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("NUL byte"), std::string::npos) << refused.error().message;
  EXPECT_EQ((*store)->Stats()->measurements, 0);
}

TEST(PostgresLocationTest, UrlsAreToldFromPathsAndPrintedWithoutPasswords) {
  EXPECT_TRUE(IsPostgresLocation("postgresql://u@h/db"));
  EXPECT_TRUE(IsPostgresLocation("postgres://h:5432/db"));
  EXPECT_FALSE(IsPostgresLocation("results.db"));
  EXPECT_FALSE(IsPostgresLocation("./postgresql://x"));
  EXPECT_EQ(DescribeLocation("postgresql://tuner:s3cret@db.lan:5433/results?sslmode=require"),
            "postgresql://tuner@db.lan:5433/results?sslmode=require");
  EXPECT_EQ(DescribeLocation("postgres://db.lan/results?password=s3cret&sslmode=verify-full"),
            "postgres://db.lan/results?sslmode=verify-full");
  EXPECT_EQ(DescribeLocation("results.db"), "results.db");
}

}  // namespace
}  // namespace tilesmith::db::testing
