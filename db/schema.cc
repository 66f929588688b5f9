#include "db/schema.h"

#include "db/records.h"

namespace tilesmith::db {
namespace {

// Plain tables (not STRICT) so any sqlite3 shell since 3.25 (window functions) reads them;
// CHECKs keep the types honest instead.
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE devices (
  device_key TEXT PRIMARY KEY,
  target TEXT NOT NULL,
  compute_capability TEXT NOT NULL,
  name TEXT NOT NULL,
  cores INTEGER NOT NULL CHECK (cores >= 0),
  clock_mhz INTEGER NOT NULL CHECK (clock_mhz >= 0),
  memory_bandwidth_gbps REAL NOT NULL CHECK (memory_bandwidth_gbps >= 0),
  cache_bytes INTEGER NOT NULL CHECK (cache_bytes >= 0),
  driver_version TEXT NOT NULL,
  toolkit_version TEXT NOT NULL
);

CREATE TABLE kernels (
  fingerprint TEXT PRIMARY KEY
    CHECK (length(fingerprint) = 64 AND fingerprint NOT GLOB '*[^0-9a-f]*'),
  source_format TEXT NOT NULL CHECK (source_format IN ('hlo', 'ascgraph')),
  name TEXT NOT NULL,
  canonical_text TEXT NOT NULL,
  created_at TEXT NOT NULL
);

-- One row per fusion + config; config_json is canonical (sorted keys, no spaces).
CREATE TABLE configs (
  fingerprint TEXT NOT NULL REFERENCES kernels (fingerprint),
  config_hash TEXT NOT NULL CHECK (length(config_hash) = 64),
  emitter TEXT NOT NULL,
  config_json TEXT NOT NULL CHECK (json_valid(config_json)),
  PRIMARY KEY (fingerprint, config_hash)
) WITHOUT ROWID;

-- Every trial, failures included. Times in microseconds.
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  fingerprint TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  device_key TEXT NOT NULL REFERENCES devices (device_key),
  compiler_version TEXT NOT NULL,
  is_default INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
  status TEXT NOT NULL CHECK (status IN ('ok', 'compile', 'launch', 'timeout', 'crash',
                                         'wrong_result', 'constraint', 'red_zone')),
  message TEXT NOT NULL DEFAULT '',
  median_us REAL,
  p20_us REAL,
  p80_us REAL,
  min_us REAL,
  max_us REAL,
  times_us TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(times_us)),
  compile_stats TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(compile_stats)),
  verification_error REAL,
  measured_at TEXT NOT NULL,
  job_id TEXT,
  FOREIGN KEY (fingerprint, config_hash) REFERENCES configs (fingerprint, config_hash),
  CHECK (status <> 'ok' OR median_us IS NOT NULL)
);
CREATE INDEX measurements_by_key
  ON measurements (fingerprint, device_key, compiler_version, status, median_us);
CREATE INDEX measurements_by_device ON measurements (device_key, compiler_version);

-- The best verified trial per (fingerprint, device, compiler version), by the tuner's rule
-- (tuner::PickBest) so that `tilesmith tune` and this view name the same winner: trials
-- within the fastest's noise (half its p20..p80 spread, kept between 1% and 5% of its
-- median) are ties, and ties go to fewer resources (registers x threads, unknown registers
-- last; shared bytes; threads per block), then the lower config hash. measured_at and uid
-- only make the row unique. default_median_us is the fastest verified trial marked
-- is_default.
)sql";

// The best_results view's query in two halves: BestResultsQuery puts a filter on the
// trials between them; the view itself has none.
constexpr std::string_view kBestResultsHead = R"sql(WITH verified AS (
  SELECT m.*, c.emitter, c.config_json,
         json_extract(m.compile_stats, '$.registers') AS registers,
         coalesce(json_extract(m.compile_stats, '$.threads_per_block'), 0) AS threads,
         coalesce(json_extract(m.compile_stats, '$.shared_bytes'), 0) AS shared_bytes
  FROM measurements AS m JOIN configs AS c USING (fingerprint, config_hash)
  WHERE m.status = 'ok')sql";
constexpr std::string_view kBestResultsTail = R"sql(
),
fastest AS (
  SELECT fingerprint, device_key, compiler_version, median_us AS fastest_us,
         max(0.01 * median_us, min(0.05 * median_us,
             (coalesce(p80_us, median_us) - coalesce(p20_us, median_us)) / 2)) AS noise_us,
         row_number() OVER (
           PARTITION BY fingerprint, device_key, compiler_version
           ORDER BY median_us, config_hash, measured_at, uid) AS position
  FROM verified
),
ranked AS (
  SELECT v.*, row_number() OVER (
           PARTITION BY v.fingerprint, v.device_key, v.compiler_version
           ORDER BY v.registers IS NULL, coalesce(v.registers, 0) * max(v.threads, 1),
                    v.shared_bytes, v.threads, v.config_hash, v.measured_at, v.uid) AS position
  FROM verified AS v JOIN fastest AS f USING (fingerprint, device_key, compiler_version)
  WHERE f.position = 1 AND v.median_us <= f.fastest_us + f.noise_us
)
SELECT r.fingerprint, k.name AS kernel_name, r.device_key, r.compiler_version, r.emitter,
       r.config_json, r.config_hash, r.median_us, r.p20_us, r.p80_us, r.min_us, r.max_us,
       r.registers, r.is_default, r.status, r.message, r.times_us, r.compile_stats,
       r.verification_error, r.measured_at, r.job_id, r.uid,
       (SELECT min(d.median_us) FROM measurements AS d
         WHERE d.fingerprint = r.fingerprint AND d.device_key = r.device_key
           AND d.compiler_version = r.compiler_version AND d.status = 'ok'
           AND d.is_default = 1) AS default_median_us
FROM ranked AS r JOIN kernels AS k USING (fingerprint)
WHERE r.position = 1)sql";

Status CreateVersion1(sqlite::Connection& connection) {
  return connection.Execute(std::string(kSchemaV1) + "CREATE VIEW best_results AS\n" +
                            BestResultsQuery("") + ";\n");
}

// The service's tuning jobs (db/jobs.h). No foreign keys: a job exists before its kernel
// and device rows, which the tuner puts when the job starts.
constexpr std::string_view kSchemaV2 = R"sql(
CREATE TABLE jobs (
  id TEXT PRIMARY KEY CHECK (length(id) = 32),
  dedupe_key TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  fingerprint TEXT NOT NULL CHECK (length(fingerprint) = 64),
  device_key TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  target TEXT NOT NULL,
  source_format TEXT NOT NULL CHECK (source_format IN ('hlo', 'ascgraph')),
  fusion_text TEXT NOT NULL,
  options TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(options)),
  progress TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(progress)),
  result TEXT CHECK (result IS NULL OR json_valid(result)),
  error TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX jobs_by_state ON jobs (state, created_at);
CREATE INDEX jobs_by_dedupe_key ON jobs (dedupe_key, state);
)sql";

Status CreateVersion2(sqlite::Connection& connection) { return connection.Execute(kSchemaV2); }

// Learned cost models (db/models.h). The model is TEXT because its one format so far is
// XGBoost's JSON, which the sqlite3 shell and Python's xgboost read as they are. No foreign
// key to devices: a model may be imported before the measurements it came from.
constexpr std::string_view kSchemaV3 = R"sql(
CREATE TABLE models (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  device_key TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  feature_schema INTEGER NOT NULL CHECK (feature_schema >= 1),
  format TEXT NOT NULL,
  data TEXT NOT NULL,
  training_rows INTEGER NOT NULL CHECK (training_rows >= 0),
  fusions INTEGER NOT NULL CHECK (fusions >= 0),
  meta TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(meta)),
  created_at TEXT NOT NULL
);
CREATE INDEX models_by_key ON models (name, device_key, compiler_version, feature_schema, id);
)sql";

Status CreateVersion3(sqlite::Connection& connection) { return connection.Execute(kSchemaV3); }

// Cost-model predictions (db/predictions.h): configs compiled for real but not timed (a CUDA
// target without a GPU), kept out of `measurements` so nothing predicted passes for measured.
// And the host model's calibrations, measured once per machine and reused.
constexpr std::string_view kSchemaV4 = R"sql(
CREATE TABLE predictions (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  device_key TEXT NOT NULL REFERENCES devices (device_key),
  compiler_version TEXT NOT NULL,
  is_default INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
  model TEXT NOT NULL,
  model_description TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK (status IN ('ok', 'compile')),
  message TEXT NOT NULL DEFAULT '',
  predicted_us REAL,
  breakdown TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(breakdown)),
  compile_stats TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(compile_stats)),
  predicted_at TEXT NOT NULL,
  job_id TEXT,
  FOREIGN KEY (fingerprint, config_hash) REFERENCES configs (fingerprint, config_hash),
  UNIQUE (fingerprint, device_key, compiler_version, model, config_hash),
  CHECK (status <> 'ok' OR predicted_us IS NOT NULL)
);
CREATE TABLE calibrations (
  id INTEGER PRIMARY KEY,
  device_key TEXT NOT NULL,
  figures TEXT NOT NULL CHECK (json_valid(figures)),
  measured_at TEXT NOT NULL
);
CREATE INDEX calibrations_by_device ON calibrations (device_key, id);
)sql";

Status CreateVersion4(sqlite::Connection& connection) { return connection.Execute(kSchemaV4); }

// How often a server found a job left `running` by a process that ended mid-job (killed or
// crashed), so a job that takes its process down is failed instead of resumed forever.
Status CreateVersion5(sqlite::Connection& connection) {
  return connection.Execute(
      "ALTER TABLE jobs ADD COLUMN unfinished_runs INTEGER NOT NULL DEFAULT 0 "
      "CHECK (unfinished_runs >= 0);");
}

// Noise-aware verdicts (db/verdicts.h): a table of their own, so no trial or best result
// changes; the newest row of a key answers.
constexpr std::string_view kSchemaV6 = R"sql(
CREATE TABLE verdicts (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL REFERENCES kernels (fingerprint),
  device_key TEXT NOT NULL REFERENCES devices (device_key),
  compiler_version TEXT NOT NULL,
  best_config_hash TEXT NOT NULL,
  best_config TEXT NOT NULL CHECK (json_valid(best_config)),
  chosen_config_hash TEXT NOT NULL,
  chosen_config TEXT NOT NULL CHECK (json_valid(chosen_config)),
  chosen_is_default INTEGER NOT NULL CHECK (chosen_is_default IN (0, 1)),
  chosen_median_us REAL NOT NULL,
  default_median_us REAL NOT NULL,
  speedup REAL NOT NULL CHECK (speedup > 0),
  speedup_low REAL NOT NULL,
  speedup_high REAL NOT NULL,
  confidence REAL NOT NULL CHECK (confidence > 0 AND confidence < 1),
  significant INTEGER NOT NULL CHECK (significant IN (0, 1)),
  rounds INTEGER NOT NULL CHECK (rounds >= 0),
  method TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  details TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details)),
  decided_at TEXT NOT NULL,
  job_id TEXT
);
CREATE INDEX verdicts_by_key ON verdicts (fingerprint, device_key, compiler_version, id);
)sql";

Status CreateVersion6(sqlite::Connection& connection) { return connection.Execute(kSchemaV6); }

// The work queue (db/work_queue.h): units claimed under leases, and the agents seen. Lease
// times are milliseconds since the epoch on the store's clock.
constexpr std::string_view kSchemaV7 = R"sql(
CREATE TABLE work_units (
  id INTEGER PRIMARY KEY,
  job_id TEXT NOT NULL,
  sequence INTEGER NOT NULL CHECK (sequence >= 0),
  device_key TEXT NOT NULL,
  match_prefix INTEGER NOT NULL DEFAULT 0 CHECK (match_prefix IN (0, 1)),
  fingerprint TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  fusion_text TEXT NOT NULL,
  payload TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
  state TEXT NOT NULL CHECK (state IN ('queued', 'leased', 'done', 'failed')),
  owner TEXT NOT NULL DEFAULT '',
  attempt INTEGER NOT NULL DEFAULT 0,
  reclaims INTEGER NOT NULL DEFAULT 0,
  lease_expires_ms INTEGER NOT NULL DEFAULT 0,
  failures TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(failures)),
  error TEXT NOT NULL DEFAULT '',
  result TEXT CHECK (result IS NULL OR json_valid(result)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (job_id, sequence)
);
CREATE INDEX work_units_claimable ON work_units (state, id);
CREATE TABLE agents (
  name TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  device_keys TEXT NOT NULL CHECK (json_valid(device_keys)),
  started_at TEXT NOT NULL,
  last_seen_ms INTEGER NOT NULL,
  units_done INTEGER NOT NULL DEFAULT 0,
  units_failed INTEGER NOT NULL DEFAULT 0
);
)sql";

Status CreateVersion7(sqlite::Connection& connection) { return connection.Execute(kSchemaV7); }

constexpr Migration kMigrations[] = {
    {1, "devices, kernels, configs, measurements, best_results", &CreateVersion1},
    {2, "jobs", &CreateVersion2},
    {3, "models", &CreateVersion3},
    {4, "predictions, calibrations", &CreateVersion4},
    {5, "jobs.unfinished_runs", &CreateVersion5},
    {6, "verdicts", &CreateVersion6},
    {7, "work_units, agents", &CreateVersion7},
};
static_assert(std::size(kMigrations) == kSchemaVersion, "one migration per schema version");

Status RecordVersion(sqlite::Connection& connection, const Migration& migration) {
  TS_ASSIGN_OR_RETURN(auto statement,
                      connection.Prepare("INSERT INTO schema_version (version, description, "
                                         "applied_at) VALUES (?, ?, ?)"));
  statement.BindAll(migration.version, migration.description, UtcNow());
  return statement.Run();
}

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

std::string BestResultsQuery(std::string_view filter) {
  std::string query(kBestResultsHead);
  if (!filter.empty()) query += " AND " + std::string(filter);
  return query + std::string(kBestResultsTail);
}

Expected<int> ReadSchemaVersion(sqlite::Connection& connection) {
  // Both facts from one statement, so from one snapshot: between two, another process
  // opening the same new file can commit its first migration, and the file would seem to
  // have tables but no schema_version.
  TS_ASSIGN_OR_RETURN(auto facts, connection.Prepare("SELECT (SELECT count(*) FROM sqlite_master "
                                                     "WHERE name = 'schema_version'), "
                                                     "(SELECT count(*) FROM sqlite_master)"));
  TS_ASSIGN_OR_RETURN(bool counted, facts.Step());
  bool versioned = counted && facts.Int(0) > 0;
  int64_t objects = counted ? facts.Int(1) : 0;
  if (versioned) {
    TS_ASSIGN_OR_RETURN(
        int64_t version,
        connection.QueryInt("SELECT coalesce(max(version), 0) FROM schema_version"));
    return static_cast<int>(version);
  }
  if (objects > 0) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     connection.path() +
                         ": not a tilesmith results database (it has tables but no "
                         "schema_version)");
  }
  return 0;
}

Status Migrate(sqlite::Connection& connection, std::span<const Migration> migrations) {
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  TS_ASSIGN_OR_RETURN(int version, ReadSchemaVersion(connection));
  if (version > latest) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     connection.path() + ": the database has schema version " +
                         std::to_string(version) + ", newer than this tilesmith understands (" +
                         std::to_string(latest) + "); use a newer tilesmith");
  }
  if (version == latest) return OkStatus();
  if (connection.read_only()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     connection.path() + ": the database has schema version " +
                         std::to_string(version) + " and needs migrating to " +
                         std::to_string(latest) + ", but it is open read-only");
  }
  for (const Migration& migration : migrations) {
    if (migration.version <= version) continue;
    TS_RETURN_IF_ERROR(connection.WriteTransaction(
        "migrating to schema version " + std::to_string(migration.version), [&]() -> Status {
          // Another process may have migrated while we waited for the lock.
          TS_ASSIGN_OR_RETURN(int current, ReadSchemaVersion(connection));
          if (current >= migration.version) return OkStatus();
          if (current == 0) {
            TS_RETURN_IF_ERROR(
                connection.Execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                                   "description TEXT NOT NULL, applied_at TEXT NOT NULL)"));
          }
          TS_RETURN_IF_ERROR(migration.apply(connection));
          return RecordVersion(connection, migration);
        }));
  }
  return OkStatus();
}

}  // namespace tilesmith::db
