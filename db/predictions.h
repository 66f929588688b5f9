// Cost-model predictions and host calibrations as the database keeps them (schema version 4).
// A prediction is what a model said a compiled config would take where nothing could time
// it (a CUDA target on a machine without a GPU). It lives in its own table, never among the
// measurements, so no view, best result or training set can take a prediction for a time.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "db/records.h"
#include "support/status.h"

namespace tilesmith::db {

/// One config compiled for real and predicted, not timed. One row per (fusion, config,
/// device, compiler version, model): predicting again replaces it.
struct PredictionRecord {
  ResultKey key;
  std::string emitter;
  nlohmann::json config = nlohmann::json::object();
  std::string config_hash;  ///< Filled by the store.
  bool is_default = false;
  std::string model;              ///< The model that answered: `analytic-gpu`, `learned-xgboost`.
  std::string model_description;  ///< Why that one (costmodel::ModelChoice::description).
  /// kOk (compiled and predicted) or kCompile (the compiler rejected it: nothing predicted).
  TrialStatus status = TrialStatus::kOk;
  std::string message;                                  ///< Why it failed; empty when ok.
  std::optional<double> predicted_us;                   ///< Required when ok.
  nlohmann::json breakdown = nlohmann::json::object();  ///< The model's terms.
  /// What the compiler assigned: registers, shared_bytes, spill_bytes, threads_per_block….
  nlohmann::json compile_stats = nlohmann::json::object();
  std::string predicted_at;  ///< ISO 8601 UTC; now when empty.
  std::string job_id;
  bool operator==(const PredictionRecord&) const = default;
};

/// A machine's figures for the host cost model (costmodel::HostCalibration as JSON), measured
/// once and reused; the newest row of a device answers.
struct CalibrationRecord {
  int64_t id = 0;  ///< Assigned by the store.
  std::string device_key;
  nlohmann::json figures = nlohmann::json::object();
  std::string measured_at;  ///< ISO 8601 UTC; now when empty.
  bool operator==(const CalibrationRecord&) const = default;
};

/// Checks a record before it is written; messages name the field.
Status ValidatePrediction(const PredictionRecord& prediction);
Status ValidateCalibration(const CalibrationRecord& calibration);

}  // namespace tilesmith::db
