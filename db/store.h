// A whole database: every role of a store in one object, for code that opens a database
// (db::OpenStore, the service's store pool, `tilesmith` subcommands) or needs several
// roles at once. Code that needs one role takes that role: ResultStore (db/result_store.h),
// JobStore (db/job_store.h), ModelStore (db/model_store.h), AdminStore (db/admin_store.h),
// WorkQueue (db/work_queue.h). SQLite is the embedded implementation (db/sqlite_store.h);
// PostgreSQL the shared one (db/postgres_store.h).
#pragma once

#include "db/admin_store.h"
#include "db/job_store.h"
#include "db/model_store.h"
#include "db/result_store.h"
#include "db/work_queue.h"

namespace tilesmith::db {

/// Every role over one database; adds no methods of its own.
class Store : public ResultStore,
              public JobStore,
              public ModelStore,
              public AdminStore,
              public WorkQueue {
 public:
  ~Store() override = default;
};

}  // namespace tilesmith::db
