// SqliteStore's jobs table (db/jobs.h): the service's durable job queue.
#include <utility>

#include "db/sqlite_store.h"

namespace tilesmith::db {
namespace {

using sqlite::Statement;

constexpr std::string_view kJobColumns =
    "id, dedupe_key, state, fingerprint, device_key, compiler_version, target, source_format, "
    "fusion_text, options, progress, result, error, created_at, updated_at, unfinished_runs";

Expected<nlohmann::json> StoredJson(const Statement& row, int column, std::string_view name) {
  if (row.IsNull(column)) return nlohmann::json(nullptr);
  nlohmann::json value = nlohmann::json::parse(row.Text(column), nullptr, false);
  if (value.is_discarded()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "stored job " + std::string(name) + " is not valid JSON");
  }
  return value;
}

Expected<JobRecord> ReadJob(const Statement& row) {
  JobRecord job;
  job.id = row.Text(0);
  job.dedupe_key = row.Text(1);
  TS_ASSIGN_OR_RETURN(job.state, ParseJobState(row.Text(2)));
  job.fingerprint = row.Text(3);
  job.device_key = row.Text(4);
  job.compiler_version = row.Text(5);
  job.target = row.Text(6);
  job.source_format = row.Text(7);
  job.fusion_text = row.Text(8);
  TS_ASSIGN_OR_RETURN(job.options, StoredJson(row, 9, "options"));
  TS_ASSIGN_OR_RETURN(job.progress, StoredJson(row, 10, "progress"));
  TS_ASSIGN_OR_RETURN(job.result, StoredJson(row, 11, "result"));
  job.error = row.Text(12);
  job.created_at = row.Text(13);
  job.updated_at = row.Text(14);
  job.unfinished_runs = row.Int(15);
  return job;
}

}  // namespace

Status SqliteStore::PutJob(const JobRecord& job) {
  TS_RETURN_IF_ERROR(ValidateJob(job));
  std::string now = UtcNow();
  std::lock_guard lock(mutex_);
  return connection_->WriteTransaction("storing job " + job.id, [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Statement upsert,
        connection_->Prepare(
            "INSERT INTO jobs (" + std::string(kJobColumns) +
            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE "
            "SET dedupe_key = excluded.dedupe_key, state = excluded.state, "
            "fingerprint = excluded.fingerprint, device_key = excluded.device_key, "
            "compiler_version = excluded.compiler_version, target = excluded.target, "
            "source_format = excluded.source_format, fusion_text = excluded.fusion_text, "
            "options = excluded.options, progress = excluded.progress, "
            "result = excluded.result, error = excluded.error, updated_at = excluded.updated_at, "
            "unfinished_runs = excluded.unfinished_runs"));
    upsert.BindAll(job.id, job.dedupe_key, JobStateName(job.state), job.fingerprint, job.device_key,
                   job.compiler_version, job.target, job.source_format, job.fusion_text,
                   job.options.dump(), job.progress.dump());
    if (job.result.is_null()) {
      upsert.Bind(12, std::nullopt);
    } else {
      upsert.Bind(12, job.result.dump());
    }
    upsert.Bind(13, job.error);
    upsert.Bind(14, job.created_at.empty() ? now : job.created_at);
    upsert.Bind(15, now);
    upsert.Bind(16, job.unfinished_runs);
    return upsert.Run();
  });
}

Expected<bool> SqliteStore::UpdateActiveJob(const JobRecord& job) {
  TS_RETURN_IF_ERROR(ValidateJob(job));
  std::lock_guard lock(mutex_);
  bool updated = false;
  TS_RETURN_IF_ERROR(connection_->WriteTransaction("updating job " + job.id, [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Statement update,
        connection_->Prepare("UPDATE jobs SET state = ?, progress = ?, result = ?, error = ?, "
                             "updated_at = ? WHERE id = ? AND state IN ('queued', 'running')"));
    update.Bind(1, JobStateName(job.state));
    update.Bind(2, job.progress.dump());
    if (job.result.is_null()) {
      update.Bind(3, std::nullopt);
    } else {
      update.Bind(3, job.result.dump());
    }
    update.Bind(4, job.error);
    update.Bind(5, UtcNow());
    update.Bind(6, job.id);
    TS_RETURN_IF_ERROR(update.Run());
    updated = sqlite3_changes(connection_->handle()) > 0;
    return OkStatus();
  }));
  return updated;
}

Expected<std::optional<JobRecord>> SqliteStore::GetJob(std::string_view id) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query, connection_->Prepare("SELECT " + std::string(kJobColumns) +
                                                            " FROM jobs WHERE id = ?"));
  query.Bind(1, id);
  TS_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return std::optional<JobRecord>();
  TS_ASSIGN_OR_RETURN(JobRecord job, ReadJob(query));
  return std::optional<JobRecord>(std::move(job));
}

Expected<std::vector<JobRecord>> SqliteStore::ListJobs(std::span<const JobState> states) {
  std::string sql = "SELECT " + std::string(kJobColumns) + " FROM jobs";
  for (size_t i = 0; i < states.size(); ++i) sql += i == 0 ? " WHERE state IN (?" : ", ?";
  if (!states.empty()) sql += ")";
  sql += " ORDER BY created_at, rowid";
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query, connection_->Prepare(sql));
  for (size_t i = 0; i < states.size(); ++i) {
    query.Bind(static_cast<int>(i) + 1, JobStateName(states[i]));
  }
  std::vector<JobRecord> jobs;
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return jobs;
    TS_ASSIGN_OR_RETURN(JobRecord job, ReadJob(query));
    jobs.push_back(std::move(job));
  }
}

Expected<std::map<std::string, int64_t>> SqliteStore::CountJobs() {
  std::map<std::string, int64_t> counts;
  for (JobState state : AllJobStates()) counts[std::string(JobStateName(state))] = 0;
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Statement query,
                      connection_->Prepare("SELECT state, count(*) FROM jobs GROUP BY state"));
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return counts;
    counts[query.Text(0)] = query.Int(1);
  }
}

}  // namespace tilesmith::db
