// One owner at a time for a named piece of work (a tune of one key, a service job), through
// the work queue (db/work_queue.h): the lock is a unit of a job of its own, leased to its
// holder and renewed by a heartbeat thread, and completed on release. Two processes on one
// database (two servers resuming the same job, two tunes of one fusion on one device) never
// work on it at once; a holder that dies leaves a lease that expires, so the next one takes
// over. Works alike on SQLite and PostgreSQL.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "db/work_queue.h"

namespace tilesmith::db {

/// Keeps a lease alive from a thread of its own, renewing it every third of `lease_ms`
/// through `queue` (a connection the caller's long work does not hold). lost() turns true
/// when the store refuses a renewal: the lease expired or was taken over. An unreachable
/// database is retried at the next beat.
class LeaseHeartbeat {
 public:
  LeaseHeartbeat(WorkQueue& queue, Lease lease, int64_t lease_ms);
  ~LeaseHeartbeat();
  LeaseHeartbeat(const LeaseHeartbeat&) = delete;
  LeaseHeartbeat& operator=(const LeaseHeartbeat&) = delete;
  bool lost() const { return lost_; }
  const Lease& lease() const { return lease_; }

 private:
  void Beat();

  WorkQueue& queue_;
  Lease lease_;
  int64_t lease_ms_;
  std::atomic<bool> lost_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

class WorkLock {
 public:
  /// Takes the lock named `name` for `owner`, or answers none when another owner holds a
  /// live lease on it. `queue` must outlive the lock; renewals go through it.
  static Expected<std::unique_ptr<WorkLock>> TryAcquire(WorkQueue& queue, const std::string& name,
                                                        const std::string& owner,
                                                        int64_t lease_ms = 30000);
  /// Who holds `name` now (empty when nobody does), for messages.
  static Expected<std::string> Holder(WorkQueue& queue, const std::string& name);

  /// Releases the lock (marks its unit done).
  ~WorkLock();
  WorkLock(const WorkLock&) = delete;
  WorkLock& operator=(const WorkLock&) = delete;

  /// True once a renewal was refused: another owner may have taken over.
  bool lost() const { return heartbeat_.lost(); }

 private:
  WorkLock(WorkQueue& queue, Lease lease, int64_t lease_ms)
      : queue_(queue), heartbeat_(queue, std::move(lease), lease_ms) {}

  WorkQueue& queue_;
  LeaseHeartbeat heartbeat_;
};

/// The lock every tune of one result key takes (the CLI's and the service's alike).
std::string TuneLockName(const ResultKey& key);

/// This machine's host name.
std::string HostName();

/// `KIND host:pid` (`tune`, `serve`, `agent`): a name for this process as a lease owner.
std::string ProcessOwnerName(std::string_view kind);

}  // namespace tilesmith::db
