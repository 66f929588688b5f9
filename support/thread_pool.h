// A fixed pool of worker threads for data-parallel loops (host kernels run their blocks
// on it). One pool per process, created on first use.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tilesmith {

class ThreadPool {
 public:
  /// How long an idle worker polls for the next loop before it sleeps, by default: not at
  /// all. Polling lets a loop that follows another within the spin start without waking a
  /// thread (the OS's wake-up takes microseconds and varies), at the price of the CPU it
  /// burns; model_bench's `--pool-spin-us` measures with it, and under load it did not make
  /// timings repeat better (costmodel/README.md), so the pool sleeps at once unless asked.
  static constexpr std::chrono::microseconds kDefaultSpin{0};

  /// A pool with `threads` workers (0: one per core) that poll for `spin` after each loop
  /// (0: sleep at once); the caller polls as long for the workers' last tasks.
  explicit ThreadPool(int threads = 0, std::chrono::microseconds spin = kDefaultSpin);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool.
  static ThreadPool& Default();

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Changes how long idle workers poll from the next loop on (a benchmark compares
  /// timings with and without polling).
  void set_spin(std::chrono::microseconds spin) { spin_us_ = spin.count(); }

  /// Workers blocked, asleep, waiting for a loop (for tests: an idle pool ends up with all).
  int sleeping() const;

  /// Calls `task(i)` for every i in [0, count), on at most `parallelism` threads (0: all),
  /// the calling thread included; returns when all are done. Calls from several threads
  /// take turns.
  void ParallelFor(int64_t count, const std::function<void(int64_t)>& task, int parallelism = 0);

 private:
  void WorkerLoop();
  // Polls, without the lock, until `done()` or `spin_` has passed; true when done.
  template <typename Done>
  bool Spin(Done done) const;

  std::atomic<int64_t> spin_us_;
  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // one ParallelFor at a time
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t next_ = 0;
  int64_t count_ = 0;
  // Written under `mutex_`; atomic so that spinning threads may read them without it.
  std::atomic<int64_t> finished_ = 0;
  std::atomic<uint64_t> generation_ = 0;
  std::atomic<bool> stopping_ = false;
  int active_limit_ = 0;
  int active_ = 0;
  int sleeping_ = 0;
};

}  // namespace tilesmith
