// What an agent writes into the record of a job a server queued for the fleet (POST
// /v1/tune on a queued server, service/jobs.h): that it runs, its progress, its end. Every
// write is conditional on the job still being active (JobStore::UpdateActiveJob), so a
// cancellation always wins, and the agent learns of it to stop.
#pragma once

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "db/jobs.h"
#include "db/store.h"
#include "tuner/session.h"

namespace tilesmith::service {

class JobReport {
 public:
  JobReport(db::Store& store, std::string job_id);

  /// Reads the job and marks it running on `agent`. False when it is no longer active (it
  /// was cancelled): the unit has nothing to do. An unknown job is an error.
  Expected<bool> Begin(const std::string& agent);
  /// The tune's counts, written at most twice a second.
  void Progress(const tuner::TuneProgress& progress);
  void Stage(const std::string& stage);
  /// Whether the job was cancelled; looks at the store at most once a second.
  bool Cancelled();
  /// The job's end: done, with the tune's result (as JobResultJson writes it).
  void Done(const nlohmann::json& result_json);
  /// The unit was given back after a failed attempt: queued again, with the reason shown.
  void Requeued(const std::string& reason);
  /// The unit failed for good: so does the job, with the unit's error.
  void Failed(const std::string& error);

 private:
  // Writes the record; a false answer means the job became final (cancelled).
  void Write();

  using Clock = std::chrono::steady_clock;
  db::Store& store_;
  std::string job_id_;
  db::JobRecord record_;
  std::atomic<bool> cancelled_ = false;
  Clock::time_point last_write_{};
  Clock::time_point last_check_{};
};

}  // namespace tilesmith::service
