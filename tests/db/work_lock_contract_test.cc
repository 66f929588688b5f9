// WorkLock on every store (store_factories.h): one holder at a time, released for the
// next, and of two processes racing for a free lock on their own connections exactly one
// gets it.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "db/work_lock.h"
#include "tests/db/store_factories.h"

namespace tilesmith::db::testing {
namespace {

class WorkLockContract : public StoreContractTest {};

TEST_P(WorkLockContract, OneHolderAtATimeAndTheNextAfterARelease) {
  Store* store = NewStore();
  ASSERT_NE(store, nullptr);
  ResultKey key{"abc123", "host, test", "tilesmith-test"};
  std::string name = TuneLockName(key);
  EXPECT_NE(name.find("abc123"), std::string::npos);
  {
    auto first = WorkLock::TryAcquire(*store, name, "tune a:1");
    ASSERT_TRUE(first.has_value()) << first.error().message;
    ASSERT_NE(*first, nullptr);
    auto second = WorkLock::TryAcquire(*store, name, "tune b:2");
    ASSERT_TRUE(second.has_value()) << second.error().message;
    EXPECT_EQ(*second, nullptr) << "two holders of one lock";
    EXPECT_EQ(*WorkLock::Holder(*store, name), "tune a:1");
    auto other = WorkLock::TryAcquire(*store, name + " (another key)", "tune b:2");
    ASSERT_TRUE(other.has_value());
    EXPECT_NE(*other, nullptr) << "another key's lock is free";
  }  // released
  EXPECT_EQ(*WorkLock::Holder(*store, name), "");
  for (int round = 0; round < 3; ++round) {
    auto next = WorkLock::TryAcquire(*store, name, "tune b:2");
    ASSERT_TRUE(next.has_value()) << next.error().message;
    EXPECT_NE(*next, nullptr) << "round " << round << ": a released lock stayed taken";
  }
}

TEST_P(WorkLockContract, OfTwoRacingProcessesExactlyOneHoldsTheLock) {
  std::string location = NewLocation();
  ASSERT_FALSE(location.empty());
  Store* a = OpenAt(location);
  Store* b = OpenAt(location);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  for (int round = 0; round < 5; ++round) {
    std::string name = "race " + std::to_string(round);
    std::unique_ptr<WorkLock> held_a, held_b;
    std::string error_a, error_b;
    std::thread ta([&] {
      auto lock = WorkLock::TryAcquire(*a, name, "a");
      if (lock)
        held_a = std::move(*lock);
      else
        error_a = lock.error().message;
    });
    std::thread tb([&] {
      auto lock = WorkLock::TryAcquire(*b, name, "b");
      if (lock)
        held_b = std::move(*lock);
      else
        error_b = lock.error().message;
    });
    ta.join();
    tb.join();
    EXPECT_EQ(error_a, "");
    EXPECT_EQ(error_b, "");
    EXPECT_EQ((held_a != nullptr) + (held_b != nullptr), 1) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, WorkLockContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db::testing
