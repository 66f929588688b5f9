// The admin role of a store: sizes and counts, and reclaiming space. Moving results between
// databases (export, import) works over the results role (db/export.h). Nothing here names a
// database engine.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/status.h"

namespace tilesmith::db {

/// Sizes and counts, for `tilesmith db stats`.
struct StoreStats {
  int schema_version = 0;
  int64_t devices = 0;
  int64_t kernels = 0;
  int64_t configs = 0;
  int64_t measurements = 0;
  int64_t predictions = 0;   ///< Rows of the predictions table (never measurements).
  int64_t calibrations = 0;  ///< Host calibrations stored.
  std::map<std::string, int64_t> by_status;  ///< Every status name, zero counts included.
  std::vector<std::string> compiler_versions;
  int64_t database_bytes = 0;  ///< The database's own storage (pages in use and free).
  int64_t wal_bytes = 0;       ///< Its write-ahead log where kept apart, else 0.
};

/// Looking after a database as a whole.
class AdminStore {
 public:
  virtual ~AdminStore() = default;

  virtual Expected<StoreStats> Stats() = 0;
  /// `database_bytes + wal_bytes` of Stats, without its counts: cheap enough for every
  /// metrics scrape.
  virtual Expected<int64_t> StorageBytes() = 0;
  /// Reclaims the space of deleted rows and trims the write-ahead log.
  virtual Status Vacuum() = 0;
};

}  // namespace tilesmith::db
