// Opening a store from where it lives, as `--db` names it: a `postgresql://` or
// `postgres://` URL opens the shared PostgreSQL store (db/postgres_store.h); anything else is
// the path of a SQLite file (db/sqlite_store.h). The command line and the service open every
// database through OpenStore, so each accepts both.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "db/store.h"
#include "support/status.h"

namespace tilesmith::db {

/// What the opener may do to the database.
enum class StoreAccess {
  kCreate,     ///< Read-write; a missing SQLite file is created.
  kReadWrite,  ///< Read-write; a missing SQLite file is an error.
  kReadOnly,   ///< Never writes (and refuses a database that would need migrating).
};

/// Whether `location` is a PostgreSQL URL rather than a SQLite path.
bool IsPostgresLocation(std::string_view location);

/// Opens the store at `location` and migrates it to kSchemaVersion (unless read-only).
Expected<std::unique_ptr<Store>> OpenStore(std::string_view location,
                                           StoreAccess access = StoreAccess::kCreate);

/// `location` fit for logs and messages: a URL without its password; a path as it is.
std::string DescribeLocation(std::string_view location);

}  // namespace tilesmith::db
