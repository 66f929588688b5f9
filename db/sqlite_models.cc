// SqliteStore's models table (db/models.h): trained cost models, newest answering.
#include <sqlite3.h>

#include "db/sqlite_store.h"

namespace tilesmith::db {

Expected<int64_t> SqliteStore::PutModel(const ModelRecord& model) {
  TS_RETURN_IF_ERROR(ValidateModel(model));
  std::string created_at = model.created_at.empty() ? UtcNow() : model.created_at;
  std::lock_guard lock(mutex_);
  int64_t id = 0;
  TS_RETURN_IF_ERROR(connection_->WriteTransaction(
      "storing model " + model.name + " for " + model.device_key, [&]() -> Status {
        TS_ASSIGN_OR_RETURN(
            sqlite::Statement insert,
            connection_->Prepare("INSERT INTO models (name, device_key, compiler_version, "
                                 "feature_schema, format, data, training_rows, fusions, meta, "
                                 "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
        insert.BindAll(model.name, model.device_key, model.compiler_version, model.feature_schema,
                       model.format, model.data, model.training_rows, model.fusions,
                       model.meta.dump(), created_at);
        TS_RETURN_IF_ERROR(insert.Run());
        id = sqlite3_last_insert_rowid(connection_->handle());
        return OkStatus();
      }));
  return id;
}

Expected<std::optional<ModelRecord>> SqliteStore::LatestModel(std::string_view name,
                                                              std::string_view device_key,
                                                              std::string_view compiler_version,
                                                              int64_t feature_schema) {
  std::lock_guard lock(mutex_);
  TS_ASSIGN_OR_RETURN(
      sqlite::Statement query,
      connection_->Prepare("SELECT id, name, device_key, compiler_version, feature_schema, "
                           "format, data, training_rows, fusions, meta, created_at FROM models "
                           "WHERE name = ? AND device_key = ? AND compiler_version = ? AND "
                           "feature_schema = ? ORDER BY id DESC LIMIT 1"));
  query.BindAll(name, device_key, compiler_version, feature_schema);
  TS_ASSIGN_OR_RETURN(bool found, query.Step());
  if (!found) return std::optional<ModelRecord>();
  ModelRecord model;
  model.id = query.Int(0);
  model.name = query.Text(1);
  model.device_key = query.Text(2);
  model.compiler_version = query.Text(3);
  model.feature_schema = query.Int(4);
  model.format = query.Text(5);
  model.data = query.Text(6);
  model.training_rows = query.Int(7);
  model.fusions = query.Int(8);
  model.meta = nlohmann::json::parse(query.Text(9), nullptr, false);
  if (model.meta.is_discarded()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "stored model " + std::to_string(model.id) + ": meta is not valid JSON");
  }
  model.created_at = query.Text(10);
  return std::optional<ModelRecord>(std::move(model));
}

}  // namespace tilesmith::db
