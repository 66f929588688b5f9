// Tuning jobs as the service keeps them: one row per job in the `jobs` table (schema
// version 2), so a restarted server resumes the jobs that were queued or running.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace tilesmith::db {

/// Where a job is. kQueued and kRunning are active; the rest are final.
enum class JobState { kQueued, kRunning, kDone, kFailed, kCancelled };

/// The database spelling: "queued", "running", "done", "failed", "cancelled".
std::string_view JobStateName(JobState state);
Expected<JobState> ParseJobState(std::string_view name);
const std::vector<JobState>& AllJobStates();
inline bool IsActive(JobState state) {
  return state == JobState::kQueued || state == JobState::kRunning;
}

/// One tuning job: what to tune, how, and how far it got.
struct JobRecord {
  std::string id;          ///< 32 hex digits.
  std::string dedupe_key;  ///< Identical requests have the same key and share an active job.
  JobState state = JobState::kQueued;
  std::string fingerprint;
  std::string device_key;
  std::string compiler_version;
  std::string target;         ///< The target as the server names it ("host", "cuda:sm_90").
  std::string source_format;  ///< "hlo" or "ascgraph".
  std::string fusion_text;    ///< The HLO module tuned (an AscGraph request lowered).
  nlohmann::json options = nlohmann::json::object();   ///< budget, strategy, free_layouts, seed
  nlohmann::json progress = nlohmann::json::object();  ///< compiled, measured, failed, total, best
  nlohmann::json result = nullptr;                     ///< The tune's summary once done.
  std::string error;                                   ///< Why it failed.
  /// Runs of this job whose process ended before the job did (found `running` at a start).
  int64_t unfinished_runs = 0;
  std::string created_at;  ///< UtcNow() when empty on first write.
  std::string updated_at;  ///< Set on every write.
  bool operator==(const JobRecord&) const = default;
};

/// Checks a job before it is written; messages name the field.
Status ValidateJob(const JobRecord& job);

}  // namespace tilesmith::db
