#include "db/jobs.h"

#include "support/sha256.h"

namespace tilesmith::db {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kDone:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

const std::vector<JobState>& AllJobStates() {
  static const std::vector<JobState> states = {JobState::kQueued, JobState::kRunning,
                                               JobState::kDone, JobState::kFailed,
                                               JobState::kCancelled};
  return states;
}

Expected<JobState> ParseJobState(std::string_view name) {
  for (JobState state : AllJobStates()) {
    if (JobStateName(state) == name) return state;
  }
  return InvalidArgument("unknown job state '" + std::string(name) +
                         "' (queued, running, done, failed, cancelled)");
}

Status ValidateJob(const JobRecord& job) {
  auto is_hex = [](const std::string& text) {
    return text.find_first_not_of("0123456789abcdef") == std::string::npos;
  };
  if (job.id.size() != 32 || !is_hex(job.id)) {
    return InvalidArgument("job id must be 32 lowercase hex digits, not '" + job.id + "'");
  }
  if (!IsSha256Hex(job.fingerprint)) {
    return InvalidArgument("job fingerprint must be 64 lowercase hex digits");
  }
  if (job.dedupe_key.empty()) return InvalidArgument("job dedupe_key is empty");
  if (job.device_key.empty()) return InvalidArgument("job device_key is empty");
  if (job.compiler_version.empty()) return InvalidArgument("job compiler_version is empty");
  if (job.target.empty()) return InvalidArgument("job target is empty");
  if (job.source_format != "hlo" && job.source_format != "ascgraph") {
    return InvalidArgument("job source_format must be hlo or ascgraph");
  }
  if (job.fusion_text.empty()) return InvalidArgument("job fusion_text is empty");
  if (!job.options.is_object()) return InvalidArgument("job options must be a JSON object");
  if (!job.progress.is_object()) return InvalidArgument("job progress must be a JSON object");
  return OkStatus();
}

}  // namespace tilesmith::db
