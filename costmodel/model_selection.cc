#include "costmodel/model_selection.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "costmodel/features.h"

namespace tilesmith::costmodel {

HostCalibrationChoice HostCalibrationFor(db::ModelStore* store, const std::string& device_key,
                                         int64_t cache_bytes) {
  HostCalibrationChoice choice;
  std::string unread;
  if (store != nullptr) {
    auto stored = store->LatestCalibration(device_key);
    if (stored && stored->has_value()) {
      auto figures = HostCalibration::FromJson((*stored)->figures);
      if (figures) {
        choice.calibration = *figures;
        choice.source = "stored " + (*stored)->measured_at;
        return choice;
      }
      unread = "; the stored one is unusable: " + figures.error().message;
    } else if (!stored) {
      unread = "; reading the stored one failed: " + stored.error().message;
    }
  }
  choice.calibration = CachedHostCalibration(cache_bytes);
  if (store == nullptr) {
    choice.source = "measured now (no results database to store it in)";
    return choice;
  }
  auto put = store->PutCalibration({0, device_key, choice.calibration.ToJson(), ""});
  choice.source = put ? "measured now, stored" + unread
                      : "measured now (not stored: " + put.error().message + ")" + unread;
  return choice;
}

bool SameArchitecture(const db::DeviceRecord& a, const db::DeviceRecord& b) {
  return a.target == b.target && a.compute_capability == b.compute_capability;
}

double DeviceDistance(const db::DeviceRecord& a, const db::DeviceRecord& b) {
  auto log_ratio = [](double x, double y) {
    return x > 0 && y > 0 ? std::abs(std::log(x / y)) : 1.0;
  };
  return 4 * log_ratio(a.memory_bandwidth_gbps, b.memory_bandwidth_gbps) +
         log_ratio(static_cast<double>(a.cores), static_cast<double>(b.cores));
}

Expected<std::vector<db::DeviceRecord>> SameArchitectureDevices(db::ResultStore& store,
                                                                const db::DeviceRecord& device) {
  if (device.target != "cuda") return std::vector<db::DeviceRecord>{};
  TS_ASSIGN_OR_RETURN(std::vector<db::DeviceRecord> devices, store.ListDevices());
  std::string own_key = device.Key();
  std::erase_if(devices, [&](const db::DeviceRecord& other) {
    return !SameArchitecture(other, device) || other.Key() == own_key;
  });
  std::stable_sort(devices.begin(), devices.end(),
                   [&](const db::DeviceRecord& a, const db::DeviceRecord& b) {
                     double to_a = DeviceDistance(a, device), to_b = DeviceDistance(b, device);
                     return to_a != to_b ? to_a < to_b : a.Key() < b.Key();
                   });
  return devices;
}

ModelChoice BestModelFor(const emitters::Target& target, int64_t cache_bytes, db::ModelStore* store,
                         const std::string& device_key, const std::string& compiler_version,
                         const LearnedModelOptions& options) {
  ModelChoice choice;
  // The host's figures, looked up (and measured if none is stored) once, for a host target.
  std::optional<HostCalibration> host;
  auto calibrated = [&] {
    if (!host) {
      HostCalibrationChoice calibration = HostCalibrationFor(store, device_key, cache_bytes);
      host = calibration.calibration;
      choice.calibration = calibration.source;
    }
    return *host;
  };
  auto analytic = [&] { return AnalyticModelFor(target, calibrated); };
  auto untrained = [&](const std::string& why) {
    auto model = std::make_unique<LearnedModel>(analytic(), options);
    choice.learned = model.get();
    choice.description = std::string(model->name()) + " (" + why + ")";
    choice.model = std::move(model);
    return std::move(choice);
  };
  if (store == nullptr) return untrained("no results database");
  auto stored =
      store->LatestModel(kLearnedModelName, device_key, compiler_version, kFeatureSchemaVersion);
  if (!stored) return untrained("reading the stored model failed: " + stored.error().message);
  if (!stored->has_value()) {
    return untrained(
        "no learned model stored for this device, compiler version and feature schema " +
        std::to_string(kFeatureSchemaVersion) + "; `tilesmith model train` makes one");
  }
  auto learned = LearnedModel::FromRecord(**stored, analytic(), options);
  if (!learned) return untrained("the stored model did not load: " + learned.error().message);
  choice.learned = learned->get();
  choice.stored = true;
  choice.description = (*learned)->Describe() + ", stored " + (*stored)->created_at;
  choice.model = std::move(*learned);
  return choice;
}

ModelChoice BestModelFor(const emitters::Target& target, int64_t cache_bytes, db::Store* store,
                         const db::DeviceRecord& device, const std::string& compiler_version,
                         const LearnedModelOptions& options) {
  ModelChoice own =
      BestModelFor(target, cache_bytes, store, device.Key(), compiler_version, options);
  if (own.stored || store == nullptr || !target.is_cuda()) return own;
  auto nearest = SameArchitectureDevices(*store, device);
  if (!nearest) return own;
  for (const db::DeviceRecord& other : *nearest) {
    ModelChoice borrowed =
        BestModelFor(target, cache_bytes, store, other.Key(), compiler_version, options);
    if (!borrowed.stored) continue;
    borrowed.description += "; trained on '" + other.Key() +
                            "', the nearest device of this architecture with a stored model";
    return borrowed;
  }
  return own;
}

}  // namespace tilesmith::costmodel
