#include "support/thread_pool.h"

namespace tilesmith {

ThreadPool::ThreadPool(int threads) {
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

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
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
  wake_.notify_all();
  while (next_ < count_) {
    int64_t i = next_++;
    lock.unlock();
    task(i);
    lock.lock();
    ++finished_;
  }
  done_.wait(lock, [&] { return finished_ == count_; });
  task_ = nullptr;
}

}  // namespace tilesmith
