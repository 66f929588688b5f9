// PostgresStore's jobs table (db/jobs.h): the service's durable job queue.
#include <utility>

#include "db/postgres_queries.h"
#include "db/postgres_store.h"

namespace tilesmith::db {
namespace {

using postgres::Params;
using postgres::Result;

constexpr std::string_view kJobColumns =
    "id, dedupe_key, state, fingerprint, device_key, compiler_version, target, source_format, "
    "fusion_text, options, progress, result, error, created_at, updated_at, unfinished_runs";

Expected<nlohmann::json> StoredJson(const Result& r, int row, int column, std::string_view name) {
  if (r.IsNull(row, column)) return nlohmann::json(nullptr);
  return postgres::ParseStoredJson(r.Text(row, column), "job " + std::string(name));
}

Expected<JobRecord> ReadJob(const Result& r, int row) {
  JobRecord job;
  job.id = r.Text(row, 0);
  job.dedupe_key = r.Text(row, 1);
  TS_ASSIGN_OR_RETURN(job.state, ParseJobState(r.Text(row, 2)));
  job.fingerprint = r.Text(row, 3);
  job.device_key = r.Text(row, 4);
  job.compiler_version = r.Text(row, 5);
  job.target = r.Text(row, 6);
  job.source_format = r.Text(row, 7);
  job.fusion_text = r.Text(row, 8);
  TS_ASSIGN_OR_RETURN(job.options, StoredJson(r, row, 9, "options"));
  TS_ASSIGN_OR_RETURN(job.progress, StoredJson(r, row, 10, "progress"));
  TS_ASSIGN_OR_RETURN(job.result, StoredJson(r, row, 11, "result"));
  job.error = r.Text(row, 12);
  job.created_at = r.Text(row, 13);
  job.updated_at = r.Text(row, 14);
  job.unfinished_runs = r.Int(row, 15);
  return job;
}

}  // namespace

Status PostgresStore::PutJob(const JobRecord& job) {
  TS_RETURN_IF_ERROR(ValidateJob(job));
  std::string now = UtcNow();
  Params params;
  params.AddAll(job.id, job.dedupe_key, JobStateName(job.state), job.fingerprint, job.device_key,
                job.compiler_version, job.target, job.source_format, job.fusion_text,
                job.options.dump(), job.progress.dump());
  if (job.result.is_null()) {
    params.Add(std::nullopt);
  } else {
    params.Add(job.result.dump());
  }
  params.AddAll(job.error, job.created_at.empty() ? now : job.created_at, now, job.unfinished_runs);
  std::lock_guard lock(mutex_);
  return connection_->Transaction("storing job " + job.id, [&]() -> Status {
    TS_ASSIGN_OR_RETURN(
        Result done,
        connection_->Execute(
            "INSERT INTO jobs (" + std::string(kJobColumns) +
                ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) "
                "ON CONFLICT (id) DO UPDATE SET dedupe_key = excluded.dedupe_key, "
                "state = excluded.state, fingerprint = excluded.fingerprint, "
                "device_key = excluded.device_key, compiler_version = excluded.compiler_version, "
                "target = excluded.target, source_format = excluded.source_format, "
                "fusion_text = excluded.fusion_text, options = excluded.options, "
                "progress = excluded.progress, result = excluded.result, error = excluded.error, "
                "updated_at = excluded.updated_at, unfinished_runs = excluded.unfinished_runs",
            params));
    return OkStatus();
  });
}

Expected<bool> PostgresStore::UpdateActiveJob(const JobRecord& job) {
  TS_RETURN_IF_ERROR(ValidateJob(job));
  Params params;
  params.AddAll(JobStateName(job.state), job.progress.dump());
  if (job.result.is_null()) {
    params.Add(std::nullopt);
  } else {
    params.Add(job.result.dump());
  }
  params.AddAll(job.error, UtcNow(), job.id);
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result updated,
                      connection_->Execute("UPDATE jobs SET state = $1, progress = $2, "
                                           "result = $3, error = $4, updated_at = $5 "
                                           "WHERE id = $6 AND state IN ('queued', 'running') "
                                           "RETURNING id",
                                           params));
  return updated.rows() > 0;
}

Expected<std::optional<JobRecord>> PostgresStore::GetJob(std::string_view id) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found, connection_->Execute("SELECT " + std::string(kJobColumns) +
                                                             " FROM jobs WHERE id = $1",
                                                         Params().Add(id)));
  if (found.rows() == 0) return std::optional<JobRecord>();
  TS_ASSIGN_OR_RETURN(JobRecord job, ReadJob(found, 0));
  return std::optional<JobRecord>(std::move(job));
}

Expected<std::vector<JobRecord>> PostgresStore::ListJobs(std::span<const JobState> states) {
  std::string sql = "SELECT " + std::string(kJobColumns) + " FROM jobs";
  Params params;
  for (JobState state : states) {
    params.Add(JobStateName(state));
    sql += (params.size() == 1 ? " WHERE state IN ($" : ", $") + std::to_string(params.size());
  }
  if (!states.empty()) sql += ")";
  sql += " ORDER BY created_at, rowid";
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found, connection_->Execute(sql, params));
  std::vector<JobRecord> jobs;
  for (int row = 0; row < found.rows(); ++row) {
    TS_ASSIGN_OR_RETURN(JobRecord job, ReadJob(found, row));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Expected<std::map<std::string, int64_t>> PostgresStore::CountJobs() {
  std::map<std::string, int64_t> counts;
  for (JobState state : AllJobStates()) counts[std::string(JobStateName(state))] = 0;
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(Result found,
                      connection_->Execute("SELECT state, count(*) FROM jobs GROUP BY state"));
  for (int row = 0; row < found.rows(); ++row) counts[found.Text(row, 0)] = found.Int(row, 1);
  return counts;
}

}  // namespace tilesmith::db
