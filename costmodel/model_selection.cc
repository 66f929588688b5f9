#include "costmodel/model_selection.h"

#include <algorithm>
#include <cmath>

#include "costmodel/features.h"

namespace tilesmith::costmodel {

HostCalibrationChoice HostCalibrationFor(db::Store* store, const std::string& device_key,
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

Expected<std::vector<db::DeviceRecord>> SameArchitectureDevices(db::Store& store,
                                                                const db::DeviceRecord& device) {
  if (device.target != "cuda") return std::vector<db::DeviceRecord>{};
  TS_ASSIGN_OR_RETURN(std::vector<db::DeviceRecord> devices, store.ListDevices());
  std::string own_key = device.Key();
  std::erase_if(devices, [&](const db::DeviceRecord& other) {
    return other.target != device.target || other.compute_capability != device.compute_capability ||
           other.Key() == own_key;
  });
  auto log_ratio = [](double a, double b) {
    return a > 0 && b > 0 ? std::abs(std::log(a / b)) : 1.0;
  };
  auto distance = [&](const db::DeviceRecord& other) {
    return 4 * log_ratio(other.memory_bandwidth_gbps, device.memory_bandwidth_gbps) +
           log_ratio(static_cast<double>(other.cores), static_cast<double>(device.cores));
  };
  std::stable_sort(devices.begin(), devices.end(),
                   [&](const db::DeviceRecord& a, const db::DeviceRecord& b) {
                     double to_a = distance(a), to_b = distance(b);
                     return to_a != to_b ? to_a < to_b : a.Key() < b.Key();
                   });
  return devices;
}

ModelChoice BestModelFor(const emitters::Target& target, int64_t cache_bytes, db::Store* store,
                         const std::string& device_key, const std::string& compiler_version,
                         const LearnedModelOptions& options) {
  ModelChoice choice;
  HostCalibration host;
  if (!target.is_cuda()) {
    HostCalibrationChoice calibration = HostCalibrationFor(store, device_key, cache_bytes);
    host = calibration.calibration;
    choice.calibration = calibration.source;
  }
  auto analytic = [&] {
    return target.is_cuda() ? AnalyticModelFor(target, cache_bytes)
                            : AnalyticModelFor(target, host);
  };
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
