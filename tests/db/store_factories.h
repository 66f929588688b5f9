// The store implementations every contract test runs against. A contract suite
// (tests/db/*_contract_test.cc) derives its fixture from StoreContractTest and is
// instantiated over StoreFactories(), so the next implementation of the store roles
// (db/store.h) runs every contract test by adding one line to StoreFactories(). What only
// one implementation promises (SQLite's migrations, WAL, files) is tested beside it
// (tests/db/sqlite_store_test.cc and the other SQLite tests), not here.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "db/open_store.h"
#include "db/postgres_store.h"
#include "db/store.h"
#include "tests/db/db_test_util.h"
#include "tests/db/postgres_test_server.h"

namespace tilesmith::db::testing {

/// Makes fresh, empty stores of one implementation.
struct StoreFactory {
  std::string name;  ///< Ends each test's name: `Stores/JobStoreContract.…/sqlite`.
  /// A fresh, empty store, or null (the test failed) when it cannot be made. `dir` is a new
  /// directory that outlives the store, for an implementation that keeps files.
  std::function<std::unique_ptr<Store>(const TempDir& dir)> open;
  /// Where a fresh, empty database of this implementation lives (a SQLite path in `dir`, a
  /// new PostgreSQL database's URL), for tests that open it more than once with OpenStore
  /// (db/open_store.h), as separate processes would; empty (the test failed) on failure.
  std::function<std::string(const TempDir& dir)> new_location;
  /// Why this implementation cannot run here (the test is skipped); empty when it can.
  std::function<std::string()> unavailable = [] { return std::string(); };
};

inline void PrintTo(const StoreFactory& factory, std::ostream* os) { *os << factory.name; }

/// A PostgresStore on a fresh database of the process's test server (postgres_test_server.h).
inline std::unique_ptr<Store> OpenPostgresStore() {
  std::string why_not;
  PostgresTestServer* server = PostgresTestServer::Get(&why_not);
  EXPECT_NE(server, nullptr) << why_not;
  if (server == nullptr) return nullptr;
  auto url = server->NewDatabase();
  EXPECT_TRUE(url.has_value()) << url.error().message;
  if (!url) return nullptr;
  auto store = PostgresStore::Open(*url);
  EXPECT_TRUE(store.has_value()) << store.error().message;
  return store ? std::move(*store) : nullptr;
}

/// A fresh database of the process's test server, as a URL (empty, the test failed, when none).
inline std::string NewPostgresLocation() {
  std::string why_not;
  PostgresTestServer* server = PostgresTestServer::Get(&why_not);
  EXPECT_NE(server, nullptr) << why_not;
  if (server == nullptr) return "";
  auto url = server->NewDatabase();
  EXPECT_TRUE(url.has_value()) << url.error().message;
  return url ? *url : "";
}

/// Every store implementation; a new one is added here, and every contract suite runs on it.
inline std::vector<StoreFactory> StoreFactories() {
  return {
      {"sqlite",
       [](const TempDir& dir) -> std::unique_ptr<Store> { return OpenStore(dir.File("store.db")); },
       [](const TempDir& dir) { return dir.File("shared.db"); }},
      {"postgres", [](const TempDir&) { return OpenPostgresStore(); },
       [](const TempDir&) { return NewPostgresLocation(); },
       [] {
         std::string why_not;
         PostgresTestServer::Get(&why_not);
         return why_not;
       }},
  };
}

/// Names each instantiation after its factory.
inline std::string StoreFactoryName(const ::testing::TestParamInfo<StoreFactory>& info) {
  return info.param.name;
}

/// The fixture of every contract suite, instantiated with
///   INSTANTIATE_TEST_SUITE_P(Stores, Suite, ::testing::ValuesIn(StoreFactories()),
///                            StoreFactoryName);
/// NewStore() gives a fresh store of the implementation under test, owned by the fixture
/// until the test ends.
class StoreContractTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  /// Skips the test where the implementation cannot run (a fixture overriding SetUp calls
  /// this first and returns when IsSkipped()).
  void SetUp() override {
    std::string why_not = GetParam().unavailable();
    if (!why_not.empty()) GTEST_SKIP() << GetParam().name << " store unavailable: " << why_not;
  }

  /// A fresh, empty store (null, with the test failed, when it cannot be opened).
  Store* NewStore() {
    dirs_.push_back(std::make_unique<TempDir>());
    std::unique_ptr<Store> store = GetParam().open(*dirs_.back());
    EXPECT_NE(store, nullptr) << GetParam().name << ": no store";
    stores_.push_back(std::move(store));
    return stores_.back().get();
  }

  /// Where a fresh, empty database lives, for opening it several times (OpenAt).
  std::string NewLocation() {
    dirs_.push_back(std::make_unique<TempDir>());
    return GetParam().new_location(*dirs_.back());
  }

  /// Another handle (its own connection) on the database at `location`, owned by the
  /// fixture; null, with the test failed, when it cannot be opened.
  Store* OpenAt(const std::string& location) {
    auto store = db::OpenStore(location);
    EXPECT_TRUE(store.has_value()) << store.error().message;
    if (!store) return nullptr;
    stores_.push_back(std::move(*store));
    return stores_.back().get();
  }

 private:
  std::vector<std::unique_ptr<TempDir>> dirs_;  // Declared first: outlives the stores.
  std::vector<std::unique_ptr<Store>> stores_;
};

}  // namespace tilesmith::db::testing
