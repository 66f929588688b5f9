#include "db/verdicts.h"

#include <cmath>

namespace tilesmith::db {

Status ValidateVerdict(const VerdictRecord& verdict) {
  const std::string what = "verdict of " + verdict.key.fingerprint.substr(0, 12);
  if (verdict.key.fingerprint.size() != 64) return InvalidArgument(what + ": bad fingerprint");
  if (verdict.key.device_key.empty()) return InvalidArgument(what + ": no device key");
  if (verdict.key.compiler_version.empty()) return InvalidArgument(what + ": no compiler version");
  if (!verdict.best_config.is_object() || !verdict.chosen_config.is_object()) {
    return InvalidArgument(what + ": best_config and chosen_config must be objects");
  }
  if (!(verdict.confidence > 0 && verdict.confidence < 1)) {
    return InvalidArgument(what + ": confidence must be between 0 and 1");
  }
  if (!(verdict.speedup > 0) || std::isnan(verdict.speedup_low) ||
      std::isnan(verdict.speedup_high) || verdict.speedup_low > verdict.speedup_high) {
    return InvalidArgument(what + ": speedup needs a value > 0 and an ordered interval");
  }
  if (verdict.rounds < 0) return InvalidArgument(what + ": rounds must be >= 0");
  if (!verdict.details.is_object()) return InvalidArgument(what + ": details must be an object");
  return OkStatus();
}

nlohmann::json VerdictJson(const VerdictRecord& verdict) {
  auto bound = [](double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
  };
  return {{"significant", verdict.significant},
          {"speedup", verdict.speedup},
          {"speedup_low", bound(verdict.speedup_low)},
          {"speedup_high", bound(verdict.speedup_high)},
          {"confidence", verdict.confidence},
          {"rounds", verdict.rounds},
          {"reason", verdict.reason},
          {"method", verdict.method},
          {"reported_as_default", verdict.chosen_is_default},
          {"chosen_config", verdict.chosen_config},
          {"default_median_us", verdict.default_median_us},
          {"chosen_median_us", verdict.chosen_median_us},
          {"decided_at", verdict.decided_at}};
}

}  // namespace tilesmith::db
