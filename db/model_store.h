// The models role of a store: trained cost models, predictions of configs compiled but not
// timed, and host calibrations. Kept apart from the results role so that nothing predicted
// passes for measured. Nothing here names a database engine.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "db/models.h"
#include "db/predictions.h"
#include "db/records.h"
#include "support/status.h"

namespace tilesmith::db {

/// Cost models, their predictions and the host model's calibrations.
class ModelStore {
 public:
  virtual ~ModelStore() = default;

  /// Stores a trained cost model as a new row (older ones are kept); returns its id.
  /// Durable when it returns.
  virtual Expected<int64_t> PutModel(const ModelRecord& model) = 0;
  /// The newest model called `name` for exactly this device, compiler version and feature
  /// schema; none when nothing was trained for them.
  virtual Expected<std::optional<ModelRecord>> LatestModel(std::string_view name,
                                                           std::string_view device_key,
                                                           std::string_view compiler_version,
                                                           int64_t feature_schema) = 0;

  /// Writes predictions (and their config rows) in one transaction, replacing an earlier
  /// prediction of the same config, key and model; returns the rows written. Kernel and
  /// device must have been put first (through the results role of the same database).
  virtual Expected<int64_t> RecordPredictions(std::span<const PredictionRecord> batch) = 0;
  /// Every prediction the filter admits, by fingerprint, device, compiler version, then
  /// fastest first (failed ones last).
  virtual Expected<std::vector<PredictionRecord>> Predictions(const ResultFilter& filter) = 0;

  /// Stores a host calibration as a new row; returns its id. Durable when it returns.
  virtual Expected<int64_t> PutCalibration(const CalibrationRecord& calibration) = 0;
  /// The newest calibration of the device, if any.
  virtual Expected<std::optional<CalibrationRecord>> LatestCalibration(
      std::string_view device_key) = 0;
};

}  // namespace tilesmith::db
