// A fixed pool of worker threads for data-parallel loops (host kernels run their blocks
// on it). One pool per process, created on first use.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tilesmith {

class ThreadPool {
 public:
  /// A pool with `threads` workers (0: one per core).
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool.
  static ThreadPool& Default();

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls `task(i)` for every i in [0, count), on at most `parallelism` threads (0: all),
  /// the calling thread included; returns when all are done. Calls from several threads
  /// take turns.
  void ParallelFor(int64_t count, const std::function<void(int64_t)>& task, int parallelism = 0);

 private:
  void WorkerLoop();

  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // one ParallelFor at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t next_ = 0;
  int64_t count_ = 0;
  int64_t finished_ = 0;
  int active_limit_ = 0;
  int active_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
};

}  // namespace tilesmith
