#include "db/work_lock.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

namespace tilesmith::db {
namespace {

// A lock's units live in a job named after the lock; their device key is that name too,
// so claiming with it can only ever take this lock's unit.
std::string LockJob(const std::string& name) { return "lock:" + name; }

}  // namespace

Expected<std::unique_ptr<WorkLock>> WorkLock::TryAcquire(WorkQueue& queue, const std::string& name,
                                                         const std::string& owner,
                                                         int64_t lease_ms) {
  const std::string job = LockJob(name);
  const std::vector<std::string> keys = {job};
  // A released lock is a done unit; the next holder enqueues the next one. Two racing
  // processes enqueue the same (job, sequence) once, and only one of them claims it.
  TS_ASSIGN_OR_RETURN(UnitCounts counts, queue.CountUnits(job));
  if (counts.queued == 0 && (counts.leased == 0 || counts.expired > 0)) {
    if (counts.leased == 0) {
      WorkUnit unit;
      unit.job_id = job;
      unit.sequence = counts.total();
      unit.device_key = job;
      unit.fingerprint = name;
      unit.name = name;
      unit.fusion_text = "(a lock)";
      TS_ASSIGN_OR_RETURN(int64_t added, queue.EnqueueUnits(std::vector{unit}));
      (void)added;
    }
  }
  TS_ASSIGN_OR_RETURN(std::optional<WorkUnit> claimed, queue.ClaimUnit(owner, keys, lease_ms));
  if (!claimed) return std::unique_ptr<WorkLock>();
  return std::unique_ptr<WorkLock>(
      new WorkLock(queue, Lease{claimed->id, claimed->attempt, claimed->owner}, lease_ms));
}

Expected<std::string> WorkLock::Holder(WorkQueue& queue, const std::string& name) {
  TS_ASSIGN_OR_RETURN(std::vector<WorkUnit> units, queue.ListUnits(LockJob(name)));
  for (const WorkUnit& unit : units) {
    if (unit.state == UnitState::kLeased) return unit.owner;
  }
  return std::string();
}

WorkLock::~WorkLock() {
  if (!heartbeat_.lost()) (void)queue_.CompleteUnit(heartbeat_.lease(), {}, nullptr);
}

LeaseHeartbeat::LeaseHeartbeat(WorkQueue& queue, Lease lease, int64_t lease_ms)
    : queue_(queue), lease_(std::move(lease)), lease_ms_(lease_ms) {
  thread_ = std::thread([this] { Beat(); });
}

LeaseHeartbeat::~LeaseHeartbeat() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void LeaseHeartbeat::Beat() {
  std::unique_lock lock(mutex_);
  auto every = std::chrono::milliseconds(std::max<int64_t>(lease_ms_ / 3, 10));
  while (!wake_.wait_for(lock, every, [&] { return done_; })) {
    lock.unlock();
    Status renewed = queue_.RenewLease(lease_, lease_ms_);
    lock.lock();
    if (!renewed && renewed.error().code != ErrorCode::kIo) {
      lost_ = true;
      return;
    }
  }
}

std::string TuneLockName(const ResultKey& key) {
  return "tune " + key.fingerprint + " on " + key.device_key + " by " + key.compiler_version;
}

std::string HostName() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

std::string ProcessOwnerName(std::string_view kind) {
  return std::string(kind) + " " + HostName() + ":" + std::to_string(getpid());
}

}  // namespace tilesmith::db
