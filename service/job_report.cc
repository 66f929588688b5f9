#include "service/job_report.h"

#include "service/jobs.h"
#include "support/log.h"

namespace tilesmith::service {
namespace {

constexpr auto kProgressPeriod = std::chrono::milliseconds(500);
constexpr auto kCancelCheckPeriod = std::chrono::seconds(1);

}  // namespace

JobReport::JobReport(db::Store& store, std::string job_id)
    : store_(store), job_id_(std::move(job_id)) {}

Expected<bool> JobReport::Begin(const std::string& agent) {
  TS_ASSIGN_OR_RETURN(std::optional<db::JobRecord> stored, store_.GetJob(job_id_));
  if (!stored) return MakeError(ErrorCode::kNotFound, "its job " + job_id_ + " does not exist");
  record_ = std::move(*stored);
  if (!db::IsActive(record_.state)) {
    cancelled_ = true;
    return false;
  }
  record_.state = db::JobState::kRunning;
  record_.error.clear();
  record_.progress["agent"] = agent;
  record_.progress["stage"] = "claimed by " + agent;
  Write();
  last_check_ = Clock::now();
  return !cancelled_;
}

void JobReport::Write() {
  auto updated = store_.UpdateActiveJob(record_);
  last_write_ = Clock::now();
  if (!updated) {
    TS_LOG(kWarning) << "job " << job_id_ << ": " << updated.error().message;
  } else if (!*updated) {
    cancelled_ = true;
  }
}

void JobReport::Progress(const tuner::TuneProgress& progress) {
  nlohmann::json& shown = record_.progress;
  shown["compiled"] = progress.compiled;
  shown["measured"] = progress.measured;
  shown["failed"] = progress.failed;
  shown["total"] = progress.planned;
  shown["best_median_us"] =
      progress.best_median_us ? nlohmann::json(*progress.best_median_us) : nlohmann::json();
  shown["best_config"] = progress.best_median_us ? progress.best_config : nlohmann::json();
  if (Clock::now() - last_write_ >= kProgressPeriod) Write();
}

void JobReport::Stage(const std::string& stage) {
  record_.progress["stage"] = stage;
  Write();
}

bool JobReport::Cancelled() {
  if (cancelled_) return true;
  if (Clock::now() - last_check_ < kCancelCheckPeriod) return false;
  last_check_ = Clock::now();
  if (auto stored = store_.GetJob(job_id_); stored && *stored && !db::IsActive((*stored)->state)) {
    cancelled_ = true;
  }
  return cancelled_;
}

void JobReport::Done(const nlohmann::json& result_json) {
  SetFinalProgress(record_.progress, result_json);
  record_.state = db::JobState::kDone;
  record_.result = result_json;
  Write();
}

void JobReport::Requeued(const std::string& reason) {
  record_.state = db::JobState::kQueued;
  record_.progress["stage"] = "queued again after a failed attempt: " + reason;
  record_.progress.erase("agent");
  Write();
}

void JobReport::Failed(const std::string& error) {
  record_.state = db::JobState::kFailed;
  record_.error = error;
  record_.progress.erase("stage");
  Write();
}

}  // namespace tilesmith::service
