// StorePool lends each borrower a read connection of its own, on a real SQLite file: never
// more than its capacity, each store back in the pool when its lease ends, the shared store
// when the pool is exhausted or cannot open one, and a lent connection reads what another
// connection committed after it was opened (a batch sees results tuned since the last one).
#include "service/store_pool.h"

#include <gtest/gtest.h>

#include "tests/db/db_test_util.h"

namespace tilesmith::service::testing {
namespace {

using db::testing::Host;
using db::testing::Kernel;
using db::testing::OpenStore;
using db::testing::TempDir;
using db::testing::Trial;

StorePool::Opener OpenerOf(const std::string& path, int* opens) {
  return [path, opens]() -> Expected<std::unique_ptr<db::Store>> {
    ++*opens;
    TS_ASSIGN_OR_RETURN(auto store, db::SqliteStore::Open(path));
    return std::unique_ptr<db::Store>(std::move(store));
  };
}

// A pool of capacity 2 over a real SQLite file, counting the stores it opens.
class TwoStorePool : public ::testing::Test {
 protected:
  TempDir dir;
  std::string path = dir.File("pool.db");
  std::unique_ptr<db::SqliteStore> shared = OpenStore(path);
  int opens = 0;
  StorePool pool{OpenerOf(path, &opens), 2, *shared};
};

TEST_F(TwoStorePool, LendsEachBorrowerItsOwnStoreUpToTheCapacity) {
  db::Store* first_store = nullptr;
  {
    StorePool::Lease first = pool.Borrow();
    StorePool::Lease second = pool.Borrow();
    StorePool::Lease third = pool.Borrow();  // both lent: the shared store
    first_store = &first.store();
    EXPECT_NE(&first.store(), shared.get());
    EXPECT_NE(&second.store(), shared.get());
    EXPECT_NE(&first.store(), &second.store());
    EXPECT_EQ(&third.store(), shared.get());
    EXPECT_EQ(opens, 2);
  }
  // Given back: lent again, nothing more opened.
  StorePool::Lease again = pool.Borrow();
  StorePool::Lease moved = std::move(again);
  StorePool::Lease other = pool.Borrow();
  EXPECT_TRUE(&moved.store() == first_store || &other.store() == first_store);
  EXPECT_NE(&moved.store(), &other.store());
  EXPECT_EQ(opens, 2);
  EXPECT_EQ(pool.opened(), 2u);
}

TEST_F(TwoStorePool, FillOpensEveryStoreBeforeTheFirstBorrower) {
  pool.Fill();
  EXPECT_EQ(opens, 2);
  EXPECT_EQ(pool.opened(), 2u);
  pool.Fill();  // full already: nothing more
  EXPECT_EQ(opens, 2);
  StorePool::Lease first = pool.Borrow();
  StorePool::Lease second = pool.Borrow();
  EXPECT_NE(&first.store(), shared.get());
  EXPECT_NE(&second.store(), shared.get());
  EXPECT_NE(&first.store(), &second.store());
  EXPECT_EQ(opens, 2);
}

TEST(StorePoolTest, FallsBackToTheSharedStoreWhenItCannotOpen) {
  TempDir dir;
  auto shared = OpenStore(dir.File("shared.db"));
  int opens = 0;
  StorePool pool(
      [&opens]() -> Expected<std::unique_ptr<db::Store>> {
        ++opens;
        return MakeError(ErrorCode::kIo, "no more connections");
      },
      4, *shared);
  EXPECT_EQ(&pool.Borrow().store(), shared.get());
  EXPECT_EQ(&pool.Borrow().store(), shared.get());
  EXPECT_EQ(opens, 1);  // tried once, then the shared store for good
  EXPECT_EQ(pool.opened(), 0u);

  StorePool without({}, 4, *shared);
  EXPECT_EQ(&without.Borrow().store(), shared.get());
}

TEST(StorePoolTest, ALentStoreReadsWhatAnotherConnectionCommittedSince) {
  TempDir dir;
  std::string path = dir.File("pool.db");
  auto writer = OpenStore(path);
  ASSERT_TRUE(writer->PutDevice(Host()).has_value());
  db::KernelRecord kernel = Kernel("late");
  ASSERT_TRUE(writer->PutKernel(kernel).has_value());
  db::MeasurementRecord trial = Trial(kernel, Host(), {{"block", 128}}, 10.0);
  std::vector<db::ResultKey> keys = {trial.key};
  int opens = 0;
  StorePool pool(OpenerOf(path, &opens), 1, *writer);
  {
    StorePool::Lease reader = pool.Borrow();
    ASSERT_NE(&reader.store(), writer.get());
    auto before = reader.store().BestMany(keys);
    ASSERT_TRUE(before.has_value()) << before.error().message;
    EXPECT_FALSE((*before)[0].has_value());
  }
  ASSERT_TRUE(writer->RecordBatch(std::vector<db::MeasurementRecord>{trial}).has_value());
  StorePool::Lease reader = pool.Borrow();
  auto after = reader.store().BestMany(keys);
  ASSERT_TRUE(after.has_value()) << after.error().message;
  ASSERT_TRUE((*after)[0].has_value());
  EXPECT_EQ((*after)[0]->measurement.timing->median_us, 10.0);
  EXPECT_EQ(opens, 1);
}

}  // namespace
}  // namespace tilesmith::service::testing
