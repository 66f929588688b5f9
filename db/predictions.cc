#include "db/predictions.h"

namespace tilesmith::db {

Status ValidatePrediction(const PredictionRecord& prediction) {
  const std::string what = "prediction of " + prediction.key.fingerprint.substr(0, 12);
  if (prediction.key.fingerprint.size() != 64) return InvalidArgument(what + ": bad fingerprint");
  if (prediction.key.device_key.empty()) return InvalidArgument(what + ": no device key");
  if (prediction.key.compiler_version.empty()) {
    return InvalidArgument(what + ": no compiler version");
  }
  if (prediction.emitter.empty()) return InvalidArgument(what + ": no emitter");
  if (!prediction.config.is_object()) return InvalidArgument(what + ": config is not an object");
  if (prediction.model.empty()) return InvalidArgument(what + ": no model name");
  if (prediction.status != TrialStatus::kOk && prediction.status != TrialStatus::kCompile) {
    return InvalidArgument(what + ": status must be ok or compile, not " +
                           std::string(TrialStatusName(prediction.status)));
  }
  if (prediction.status == TrialStatus::kOk &&
      (!prediction.predicted_us || !(*prediction.predicted_us >= 0))) {
    return InvalidArgument(what + ": an ok prediction needs a time >= 0");
  }
  if (!prediction.breakdown.is_object() || !prediction.compile_stats.is_object()) {
    return InvalidArgument(what + ": breakdown and compile_stats must be objects");
  }
  return OkStatus();
}

Status ValidateCalibration(const CalibrationRecord& calibration) {
  if (calibration.device_key.empty()) return InvalidArgument("calibration: no device key");
  if (!calibration.figures.is_object() || calibration.figures.empty()) {
    return InvalidArgument("calibration of " + calibration.device_key + ": no figures");
  }
  return OkStatus();
}

}  // namespace tilesmith::db
