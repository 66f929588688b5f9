// SqliteStore::BestMany: the best results of a batch of keys (a /v1/query:batch) in three
// queries per device and compiler version, instead of one best_results query per key.
//
// The best_results view ranks with two window functions joined to each other; asked for
// many keys at once that costs a sort per key and, for the join, time that grows with the
// square of the keys. The same rule (schema.cc) is applied here in three steps, each one
// sort over the whole batch:
//   1. every verified trial of the keys, fastest first per key, with its noise band: the
//      first row of a key is the view's `fastest`, and the trials within its band are the
//      view's candidates (`ranked` before its row_number);
//   2. for keys with more than one candidate, the candidates in the view's resource order:
//      the first per key wins;
//   3. the winners' rows, kernel names and default times, read as Best reads them.
// SQLite evaluates every expression and ordering, so values compare with SQLite's own
// types; C++ only takes the first row of each key and tests `median <= fastest + noise`
// with the doubles SQLite returned, as the view's REAL arithmetic does.
// tests/db/best_many_contract_test.cc holds the result to Best key by key.
#include <map>
#include <unordered_map>
#include <utility>

#include "db/sqlite_queries.h"
#include "db/sqlite_store.h"

namespace tilesmith::db {
namespace {

using sqlite::Statement;

// Step 1. ?1: a JSON array of fingerprints; ?2, ?3: the device key and compiler version.
// The noise band is the view's expression (schema.cc, `fastest`).
constexpr std::string_view kFastestFirst = R"sql(
SELECT m.id, m.fingerprint, m.median_us,
       max(0.01 * m.median_us, min(0.05 * m.median_us,
           (coalesce(m.p80_us, m.median_us) - coalesce(m.p20_us, m.median_us)) / 2)) AS noise_us
FROM measurements AS m JOIN configs AS c USING (fingerprint, config_hash)
WHERE m.status = 'ok' AND m.fingerprint IN (SELECT value FROM json_each(?1))
  AND m.device_key = ?2 AND m.compiler_version = ?3
ORDER BY m.fingerprint, m.median_us, m.config_hash, m.measured_at, m.uid)sql";

// Step 2. ?1: a JSON array of trial ids. The columns and order are the view's `verified`
// and `ranked` (schema.cc).
constexpr std::string_view kFewestResourcesFirst = R"sql(
SELECT id, fingerprint FROM (
  SELECT m.id, m.fingerprint, m.config_hash, m.measured_at, m.uid,
         json_extract(m.compile_stats, '$.registers') AS registers,
         coalesce(json_extract(m.compile_stats, '$.threads_per_block'), 0) AS threads,
         coalesce(json_extract(m.compile_stats, '$.shared_bytes'), 0) AS shared_bytes
  FROM measurements AS m WHERE m.id IN (SELECT value FROM json_each(?1)))
ORDER BY fingerprint, registers IS NULL, coalesce(registers, 0) * max(threads, 1),
         shared_bytes, threads, config_hash, measured_at, uid)sql";

// Step 3. ?1: a JSON array of trial ids. The view's last SELECT, by trial id.
std::string WinnersQuery() {
  return "SELECT " + std::string(kMeasurementColumns) + R"sql(, k.name AS kernel_name,
       (SELECT min(d.median_us) FROM measurements AS d
         WHERE d.fingerprint = m.fingerprint AND d.device_key = m.device_key
           AND d.compiler_version = m.compiler_version AND d.status = 'ok'
           AND d.is_default = 1) AS default_median_us
FROM measurements AS m JOIN configs AS c USING (fingerprint, config_hash)
  JOIN kernels AS k USING (fingerprint)
WHERE m.id IN (SELECT value FROM json_each(?1)))sql";
}

// Candidate trial ids per fingerprint (step 1's output).
using Candidates = std::unordered_map<std::string, std::vector<int64_t>>;

Expected<Candidates> FindCandidates(sqlite::Connection& connection,
                                    const nlohmann::json& fingerprints,
                                    const std::string& device_key,
                                    const std::string& compiler_version) {
  TS_ASSIGN_OR_RETURN(Statement query, connection.PrepareCached(std::string(kFastestFirst)));
  query.BindAll(fingerprints.dump(), device_key, compiler_version);
  Candidates candidates;
  std::string key;       // the fingerprint whose rows are being read
  bool banded = false;   // whether `key`'s fastest trial has a band (not NULL)
  double threshold = 0;  // fastest + noise of `key`
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return candidates;
    std::string fingerprint = query.Text(1);
    if (fingerprint != key) {
      key = std::move(fingerprint);
      // A NULL band makes the view's comparison NULL, so that key has no candidate.
      banded = !query.IsNull(3);
      threshold = query.Double(2) + query.Double(3);
    }
    if (banded && query.Double(2) <= threshold) candidates[key].push_back(query.Int(0));
  }
}

// The winning trial id per fingerprint.
Expected<std::unordered_map<std::string, int64_t>> PickWinners(sqlite::Connection& connection,
                                                               const Candidates& candidates) {
  std::unordered_map<std::string, int64_t> winners;
  nlohmann::json tied = nlohmann::json::array();
  for (const auto& [fingerprint, ids] : candidates) {
    if (ids.size() == 1) {
      winners[fingerprint] = ids.front();
    } else {
      for (int64_t id : ids) tied.push_back(id);
    }
  }
  if (tied.empty()) return winners;
  TS_ASSIGN_OR_RETURN(Statement query,
                      connection.PrepareCached(std::string(kFewestResourcesFirst)));
  query.Bind(1, tied.dump());
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return winners;
    winners.try_emplace(query.Text(1), query.Int(0));  // the first row of a key wins
  }
}

// Reads the winners' rows into `found`, by fingerprint.
Status ReadWinners(sqlite::Connection& connection,
                   const std::unordered_map<std::string, int64_t>& winners,
                   std::unordered_map<std::string, BestResult>& found) {
  if (winners.empty()) return OkStatus();
  nlohmann::json ids = nlohmann::json::array();
  for (const auto& [fingerprint, id] : winners) ids.push_back(id);
  TS_ASSIGN_OR_RETURN(Statement query, connection.PrepareCached(WinnersQuery()));
  query.Bind(1, ids.dump());
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return OkStatus();
    TS_ASSIGN_OR_RETURN(MeasurementRecord measurement, ReadMeasurement(query));
    std::string fingerprint = measurement.key.fingerprint;
    found[fingerprint] = {std::move(measurement), query.Text(kMeasurementColumnCount),
                          query.OptionalDouble(kMeasurementColumnCount + 1)};
  }
}

}  // namespace

Expected<std::vector<std::optional<BestResult>>> SqliteStore::BestMany(
    std::span<const ResultKey> keys) {
  // Keys by device and compiler version (a batch usually has one of each); each group's
  // distinct fingerprints are looked up together.
  std::map<std::pair<std::string, std::string>, nlohmann::json> groups;
  std::map<std::pair<std::string, std::string>, std::unordered_map<std::string, BestResult>> found;
  for (const ResultKey& key : keys) {
    nlohmann::json& fingerprints = groups[{key.device_key, key.compiler_version}];
    if (fingerprints.is_null()) fingerprints = nlohmann::json::array();
    fingerprints.push_back(key.fingerprint);  // json_each's IN list ignores repeats
  }
  std::lock_guard lock(mutex_);
  // One read transaction: every step sees the same snapshot, as one query would.
  TS_RETURN_IF_ERROR(connection_->Execute("BEGIN"));
  Status looked_up = [&]() -> Status {
    for (const auto& [group, fingerprints] : groups) {
      TS_ASSIGN_OR_RETURN(Candidates candidates,
                          FindCandidates(*connection_, fingerprints, group.first, group.second));
      TS_ASSIGN_OR_RETURN(auto winners, PickWinners(*connection_, candidates));
      TS_RETURN_IF_ERROR(ReadWinners(*connection_, winners, found[group]));
    }
    return OkStatus();
  }();
  Status ended = connection_->Execute(looked_up ? "COMMIT" : "ROLLBACK");
  TS_RETURN_IF_ERROR(looked_up);
  TS_RETURN_IF_ERROR(ended);
  // A key's first answer is moved out of `found`; a repeat copies that answer.
  std::vector<std::optional<BestResult>> results;
  results.reserve(keys.size());
  std::map<std::pair<std::string, std::string>, std::unordered_map<std::string, size_t>> first;
  for (const ResultKey& key : keys) {
    auto& answered = first[{key.device_key, key.compiler_version}];
    auto earlier = answered.find(key.fingerprint);
    if (earlier != answered.end()) {
      std::optional<BestResult> repeat = results[earlier->second];
      results.push_back(std::move(repeat));
      continue;
    }
    answered.emplace(key.fingerprint, results.size());
    auto& group = found[{key.device_key, key.compiler_version}];
    auto best = group.find(key.fingerprint);
    if (best == group.end()) {
      results.push_back(std::nullopt);
    } else {
      results.push_back(std::move(best->second));
    }
  }
  return results;
}

}  // namespace tilesmith::db
