#include "db/open_store.h"

#include "db/postgres_store.h"
#include "db/sqlite_store.h"

namespace tilesmith::db {

bool IsPostgresLocation(std::string_view location) { return postgres::IsUrl(location); }

Expected<std::unique_ptr<Store>> OpenStore(std::string_view location, StoreAccess access) {
  if (IsPostgresLocation(location)) {
    TS_ASSIGN_OR_RETURN(
        auto store, PostgresStore::Open(std::string(location), access == StoreAccess::kReadOnly));
    return std::unique_ptr<Store>(std::move(store));
  }
  SqliteOptions options;
  switch (access) {
    case StoreAccess::kCreate:
      options.mode = sqlite::OpenMode::kCreate;
      break;
    case StoreAccess::kReadWrite:
      options.mode = sqlite::OpenMode::kReadWrite;
      break;
    case StoreAccess::kReadOnly:
      options.mode = sqlite::OpenMode::kReadOnly;
      break;
  }
  TS_ASSIGN_OR_RETURN(auto store, SqliteStore::Open(std::string(location), options));
  return std::unique_ptr<Store>(std::move(store));
}

std::string DescribeLocation(std::string_view location) {
  if (IsPostgresLocation(location)) return postgres::RedactedUrl(location);
  return std::string(location);
}

}  // namespace tilesmith::db
