#include "support/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tilesmith {

namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads, std::chrono::microseconds spin) : spin_us_(spin.count()) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

ThreadPool& ThreadPool::Default() {
  static ThreadPool pool;
  return pool;
}

int ThreadPool::sleeping() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sleeping_;
}

template <typename Done>
bool ThreadPool::Spin(Done done) const {
  int64_t spin_us = spin_us_.load();
  if (spin_us <= 0) return done();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
  while (!done()) {
    for (int i = 0; i < 64; ++i) CpuRelax();
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
  return true;
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    auto woken = [&] { return stopping_.load() || generation_.load() != seen; };
    if (!woken()) {
      if (spin_us_.load() > 0) {  // without a spin, no reason to let the lock go first
        lock.unlock();
        Spin(woken);
        lock.lock();
      }
      ++sleeping_;
      wake_.wait(lock, woken);
      --sleeping_;
    }
    if (stopping_) return;
    seen = generation_;
    if (active_ >= active_limit_) continue;
    ++active_;
    while (next_ < count_) {
      int64_t i = next_++;
      lock.unlock();
      (*task_)(i);
      lock.lock();
      if (++finished_ == count_) done_.notify_all();
    }
    --active_;
  }
}

void ThreadPool::ParallelFor(int64_t count, const std::function<void(int64_t)>& task,
                             int parallelism) {
  if (count <= 0) return;
  if (parallelism <= 0 || parallelism > size()) parallelism = size();
  std::lock_guard<std::mutex> turn(call_mutex_);
  std::unique_lock<std::mutex> lock(mutex_);
  task_ = &task;
  next_ = 0;
  count_ = count;
  finished_ = 0;
  active_limit_ = parallelism - 1;  // the caller is one of the threads
  ++generation_;
  if (sleeping_ > 0) wake_.notify_all();
  while (next_ < count_) {
    int64_t i = next_++;
    lock.unlock();
    task(i);
    lock.lock();
    ++finished_;
  }
  if (finished_ != count_ && spin_us_.load() > 0) {
    // A worker runs the last tasks: wait for it without sleeping first, as it does for us.
    lock.unlock();
    Spin([&] { return finished_.load() == count; });
    lock.lock();
  }
  done_.wait(lock, [&] { return finished_ == count_; });
  task_ = nullptr;
}

}  // namespace tilesmith
