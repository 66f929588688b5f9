// The jobs role of a store: tuning jobs as the service keeps them, so a restarted server
// resumes what was queued or running. The work queue (units claimed under a lease) is to
// join this role. Nothing here names a database engine.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/jobs.h"
#include "support/status.h"

namespace tilesmith::db {

/// Tuning jobs, one record per job id.
class JobStore {
 public:
  virtual ~JobStore() = default;

  /// Inserts or replaces the job with `job.id` (created_at kept from the first write,
  /// updated_at set now). Durable when it returns.
  virtual Status PutJob(const JobRecord& job) = 0;
  /// Writes `job`'s state, progress, result and error only while the stored job is still
  /// queued or running, in one statement, so that an update racing a cancellation (or a
  /// late one from a worker that lost its job) never overwrites a final state. Returns
  /// whether the job was updated (false: it is final, or unknown).
  virtual Expected<bool> UpdateActiveJob(const JobRecord& job) = 0;
  virtual Expected<std::optional<JobRecord>> GetJob(std::string_view id) = 0;
  /// Jobs in one of `states` (every job when empty), oldest first.
  virtual Expected<std::vector<JobRecord>> ListJobs(std::span<const JobState> states) = 0;
  /// Jobs per state name, every state included (zero counts too).
  virtual Expected<std::map<std::string, int64_t>> CountJobs() = 0;
};

}  // namespace tilesmith::db
