// Learned cost models as the database keeps them (schema version 3): one row per trained
// model, the model itself an opaque buffer (db/ knows nothing of XGBoost), with what it is
// valid for — device, compiler version and feature schema — so a stale model is never used.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "support/status.h"

namespace tilesmith::db {

/// One trained model. Older rows are kept (the newest answers), so a bad retrain can be
/// inspected and rolled back with `sqlite3`.
struct ModelRecord {
  int64_t id = 0;                ///< Assigned by the store.
  std::string name;              ///< The cost model's name: `learned-xgboost`.
  std::string device_key;        ///< The device it was trained for (DeviceRecord::Key()).
  std::string compiler_version;  ///< Its training rows' compiler version.
  int64_t feature_schema = 0;    ///< costmodel::kFeatureSchemaVersion it was trained with.
  std::string format;            ///< How `data` is encoded: `xgboost-json`.
  std::string data;              ///< The model buffer.
  int64_t training_rows = 0;     ///< Measurements it has seen.
  int64_t fusions = 0;           ///< Distinct fusions among them.
  nlohmann::json meta = nlohmann::json::object();  ///< Objective, rounds, training time, ….
  std::string created_at;                          ///< ISO 8601 UTC; now when empty.
  bool operator==(const ModelRecord&) const = default;
};

/// Checks a model before it is written; messages name the field.
Status ValidateModel(const ModelRecord& model);

}  // namespace tilesmith::db
