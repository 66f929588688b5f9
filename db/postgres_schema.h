// The PostgreSQL schema: the SQLite schema (db/schema.cc) translated table for table, with
// the same versions and migrations, so both stores hold the same records and name the same
// best results. Private to db/.
#pragma once

#include <string>
#include <string_view>

#include "db/postgres_connection.h"
#include "support/status.h"

namespace tilesmith::db::postgres {

/// The best_results view's query with `filter` (SQL over the trials `m`, placeholders $1…)
/// applied before ranking; the same rule as SQLite's view.
std::string BestResultsQuery(std::string_view filter);

/// The version of the database's current schema: 0 when it has no tables. A schema with
/// tables but no `schema_version` is not ours and is an error.
Expected<int> ReadSchemaVersion(Connection& connection);

/// Brings the current schema to kSchemaVersion, one transaction per version under an
/// advisory lock so processes starting together migrate once. A newer schema is refused
/// naming both versions; with `read_only` an older one is refused too.
Status Migrate(Connection& connection, bool read_only);

}  // namespace tilesmith::db::postgres
