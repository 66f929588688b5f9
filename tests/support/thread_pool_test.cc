// The thread pool (support/thread_pool.h): every index runs exactly once whatever the
// parallelism, back-to-back loops (which find workers still polling) and loops from several
// threads stay correct, and an idle pool's workers end up asleep rather than polling.
#include "support/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tilesmith {
namespace {

// Waits (up to a generous bound) until every worker of `pool` sleeps.
bool AllAsleep(const ThreadPool& pool) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pool.sleeping() == pool.size() - 1) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

void ExpectEachOnce(ThreadPool& pool, int64_t count, int parallelism) {
  std::vector<std::atomic<int>> hits(count);
  pool.ParallelFor(
      count, [&](int64_t i) { hits[i].fetch_add(1); }, parallelism);
  for (int64_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
}

TEST(ThreadPoolTest, RunsEveryIndexOnceAtAnyParallelism) {
  for (auto spin : {std::chrono::microseconds(0), std::chrono::microseconds(200)}) {
    ThreadPool pool(4, spin);
    for (int parallelism : {0, 1, 2, 3, 4, 9}) {
      for (int64_t count : {1, 3, 4, 100}) ExpectEachOnce(pool, count, parallelism);
    }
  }
}

TEST(ThreadPoolTest, BackToBackLoopsFindPollingWorkers) {
  // Long spin: later loops start while workers still poll, the path the timing relies on.
  ThreadPool pool(3, std::chrono::milliseconds(50));
  for (int round = 0; round < 2000; ++round) ExpectEachOnce(pool, 1 + round % 7, 0);
}

TEST(ThreadPoolTest, LoopsFromSeveralThreadsTakeTurns) {
  ThreadPool pool(3, std::chrono::microseconds(200));
  std::atomic<int64_t> sum = 0;
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        pool.ParallelFor(10, [&](int64_t i) { sum.fetch_add(i); });
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(sum.load(), 4 * 200 * 45);
}

TEST(ThreadPoolTest, IdleWorkersSleep) {
  ThreadPool pool(3, std::chrono::milliseconds(1));
  EXPECT_TRUE(AllAsleep(pool)) << "workers still polling with nothing to do";
  ExpectEachOnce(pool, 50, 0);
  EXPECT_TRUE(AllAsleep(pool)) << "workers still polling after a loop";
  // Asleep workers are woken for the next loop.
  ExpectEachOnce(pool, 50, 0);
}

TEST(ThreadPoolTest, WithoutSpinWorkersSleepAtOnce) {
  ThreadPool pool(2, std::chrono::microseconds(0));
  EXPECT_TRUE(AllAsleep(pool));
  ExpectEachOnce(pool, 8, 0);
  EXPECT_TRUE(AllAsleep(pool));
}

TEST(ThreadPoolTest, SpinCanBeTurnedOff) {
  ThreadPool pool(3, std::chrono::milliseconds(20));
  pool.set_spin(std::chrono::microseconds(0));
  ExpectEachOnce(pool, 30, 0);
  EXPECT_TRUE(AllAsleep(pool));
  ExpectEachOnce(pool, 30, 0);
}

TEST(ThreadPoolTest, DestroysWhileWorkersPoll) {
  for (int i = 0; i < 20; ++i) {
    ThreadPool pool(3, std::chrono::seconds(5));
    ExpectEachOnce(pool, 6, 0);
  }  // joins workers mid-poll: must not wait out the spin
}

}  // namespace
}  // namespace tilesmith
