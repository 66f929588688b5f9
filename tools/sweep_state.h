// What `tilesmith sweep --resume` skips: the (fusion, target) pairs a sweep finished, kept in
// a small JSON file beside the results database. It is only a shortcut — the database is the
// truth, and a pair it lacks is simply tuned again (measuring only what is missing).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "support/status.h"

namespace tilesmith::tools {

/// Finished pairs by key, each with the table row it ended with.
class SweepState {
 public:
  /// The state file of the database at `db_path`: `<db_path>.sweeps.json`; for a PostgreSQL
  /// URL, a file in the current folder named after its server and database (never its
  /// credentials): `postgresql_host_5432_db.sweeps.json`.
  static std::string PathFor(const std::string& db_path);

  /// Reads `path`; a missing file is an empty state, a damaged one an error naming it.
  static Expected<SweepState> Load(const std::string& path);

  /// The row recorded for `key`, or null.
  const nlohmann::json* Find(const std::string& key) const;

  /// Records `row` under `key` and rewrites the file atomically (write, fsync, rename),
  /// keeping what other sweeps recorded since it was read.
  Status Record(const std::string& key, const nlohmann::json& row);

 private:
  std::string path_;
  nlohmann::json pairs_ = nlohmann::json::object();
};

}  // namespace tilesmith::tools
