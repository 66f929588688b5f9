// The SQLite schema and its forward migrations. Version N is reached by running migrations
// 1…N in order, each in its own transaction and recorded in `schema_version`, so a database
// written by any older tilesmith opens in a newer one. Adding version 2: write a function,
// append it to the list in schema.cc, bump kSchemaVersion, add a test that migrates a
// version-1 file.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "db/sqlite_connection.h"
#include "support/status.h"

namespace tilesmith::db {

/// One step of the schema: brings a database at `version - 1` to `version`. Runs inside a
/// write transaction; must not commit.
struct Migration {
  int version;
  std::string_view description;
  Status (*apply)(sqlite::Connection& connection);
};

/// The query behind the `best_results` view, with `filter` (SQL over the trials `m`, e.g.
/// `m.fingerprint = ?`; empty: none) applied before ranking. Filtering on key columns gives
/// the view's rows for those keys, without the scan of every trial that SQLite does when a
/// WHERE meets the view's window functions.
std::string BestResultsQuery(std::string_view filter);

/// Every migration of this code, version 1 first; the last is kSchemaVersion.
std::span<const Migration> Migrations();

/// The version a database is at: 0 for an empty file. A file with tables but no
/// `schema_version` is not ours and is an error.
Expected<int> ReadSchemaVersion(sqlite::Connection& connection);

/// Brings the database to the last version of `migrations`. A database at a newer version
/// than that is refused with both versions named, never opened silently.
Status Migrate(sqlite::Connection& connection, std::span<const Migration> migrations);

}  // namespace tilesmith::db
