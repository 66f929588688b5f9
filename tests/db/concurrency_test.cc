// Several writers on one file: processes (each its own connection, queuing on the lock),
// threads with a connection each, and threads sharing one store. Nothing may be lost.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "tests/db/db_test_util.h"

namespace tilesmith::db {
namespace {

using testing::H100;
using testing::Kernel;
using testing::OpenStore;
using testing::TempDir;
using testing::Trial;

constexpr int kBatches = 30;
constexpr int kBatchSize = 10;

const KernelRecord& Gelu() {
  static const KernelRecord kernel = Kernel("gelu");
  return kernel;
}

// Writes kBatches batches whose configs are unique to `writer`; false on any error.
bool WriteBatches(Store& store, int writer) {
  for (int batch = 0; batch < kBatches; ++batch) {
    std::vector<MeasurementRecord> trials;
    for (int i = 0; i < kBatchSize; ++i) {
      trials.push_back(Trial(Gelu(), H100(), {{"writer", writer}, {"batch", batch}, {"i", i}},
                             1.0 + (writer * 7 + batch + i) % 13));
    }
    auto result = store.RecordBatch(trials);
    if (!result) {
      ADD_FAILURE() << "writer " << writer << ": " << result.error().message;
      return false;
    }
  }
  return true;
}

class ConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStore(path_);
    ASSERT_TRUE(store->PutDevice(H100()) && store->PutKernel(Gelu()));
  }

  void ExpectEverythingStored(int writers) {
    auto store = OpenStore(path_);
    auto stats = store->Stats();
    ASSERT_TRUE(stats.has_value());
    EXPECT_EQ(stats->measurements, writers * kBatches * kBatchSize);
    EXPECT_EQ(stats->configs, writers * kBatches * kBatchSize);
    auto best = store->ListBest({});
    ASSERT_TRUE(best.has_value());
    ASSERT_EQ(best->size(), 1u);
    EXPECT_EQ(best->front().measurement.timing->median_us, 1.0);
  }

  TempDir dir_;
  std::string path_ = dir_.File("shared.db");
};

TEST_F(ConcurrencyTest, ProcessesWritingAtOnceLoseNothing) {
  constexpr int kWriters = 4;
  // Children wait on a pipe so they all start writing together.
  int start[2];
  ASSERT_EQ(pipe(start), 0);
  std::vector<pid_t> children;
  for (int writer = 0; writer < kWriters; ++writer) {
    pid_t pid = fork();
    if (pid == 0) {
      close(start[1]);
      char go;
      if (read(start[0], &go, 1) != 0) _exit(2);  // EOF when the parent closes its end
      // A short busy timeout makes the retry path run, not just SQLite's busy handler.
      auto store = SqliteStore::Open(path_, {.busy_timeout_ms = 100});
      _exit(store && WriteBatches(**store, writer) ? 0 : 1);
    }
    ASSERT_GT(pid, 0);
    children.push_back(pid);
  }
  close(start[0]);
  close(start[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer failed: " << status;
  }
  ExpectEverythingStored(kWriters);
}

TEST_F(ConcurrencyTest, ThreadsWithAConnectionEachLoseNothing) {
  constexpr int kWriters = 4;
  std::vector<std::thread> threads;
  for (int writer = 0; writer < kWriters; ++writer) {
    threads.emplace_back([this, writer] {
      auto store = OpenStore(path_);
      if (store) WriteBatches(*store, writer);
    });
  }
  for (std::thread& thread : threads) thread.join();
  ExpectEverythingStored(kWriters);
}

TEST_F(ConcurrencyTest, ThreadsSharingOneStoreLoseNothing) {
  constexpr int kWriters = 4;
  auto store = OpenStore(path_);
  std::vector<std::thread> threads;
  for (int writer = 0; writer < kWriters; ++writer) {
    threads.emplace_back([&store, writer] {
      WriteBatches(*store, writer);
      // Readers interleave with the writers on the same connection.
      auto best = store->Best({Gelu().fingerprint, H100().Key(), "tilesmith-test-1"});
      EXPECT_TRUE(best.has_value() && best->has_value());
    });
  }
  for (std::thread& thread : threads) thread.join();
  ExpectEverythingStored(kWriters);
}

TEST(ConcurrentOpenTest, ManyProcessesOpeningOneNewFileAtOnceAllSucceed) {
  // Switching a file to write-ahead logging takes a lock no busy handler waits for; two
  // tunes started together used to fail on it with "database is locked".
  for (int round = 0; round < 5; ++round) {
    testing::TempDir dir;
    std::string path = dir.File("fresh.db");
    std::vector<pid_t> children;
    for (int i = 0; i < 8; ++i) {
      pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        auto store = SqliteStore::Open(path);
        if (!store) std::fprintf(stderr, "open failed: %s\n", store.error().message.c_str());
        _exit(store ? 0 : 1);
      }
      children.push_back(pid);
    }
    int failed = 0;
    for (pid_t child : children) {
      int status = 0;
      waitpid(child, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    EXPECT_EQ(failed, 0) << "round " << round << ": opens failed";
  }
}

}  // namespace
}  // namespace tilesmith::db
