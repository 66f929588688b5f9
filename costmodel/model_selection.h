// Which model answers for a target: the learned model when the database holds one trained
// for exactly this device, compiler version and feature schema, else the analytic model of
// the target. `tilesmith predict`, the service and the `model` tuning strategy ask here, and
// report the choice's description.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "costmodel/host_model.h"
#include "costmodel/learned_model.h"
#include "db/store.h"

namespace tilesmith::costmodel {

/// The model that answers and why (`learned-xgboost (1203 measurements, …)`, or
/// `analytic-host (no learned model stored for this device and compiler)`).
struct ModelChoice {
  std::unique_ptr<CostModel> model;
  std::string description;
  /// `model` as a LearnedModel, for a tuner to Retrain after each measured batch: loaded
  /// from the store, or untrained (the analytic model answering until enough rows arrive).
  LearnedModel* learned = nullptr;
  bool stored = false;  ///< A stored model was loaded (and answers).
  /// Host targets: where the analytic host model's figures came from (HostCalibrationFor).
  std::string calibration;
};

/// The host model's figures for one machine and where they came from.
struct HostCalibrationChoice {
  HostCalibration calibration;
  /// `stored 2026-11-25T10:00:00.000Z`, `measured now, stored`, or `measured now (…why not
  /// stored)`.
  std::string source;
};

/// The host model's figures for the device `device_key`: the newest calibration stored for it,
/// else this process's measurement (CachedHostCalibration), then stored so that every later
/// process on this machine — tunes, predictions, the service, training — predicts from the
/// same figures. `tilesmith model calibrate` measures afresh. A store that cannot be read or
/// written (null, read-only) is reported in `source`, and the measurement answers.
HostCalibrationChoice HostCalibrationFor(db::ModelStore* store, const std::string& device_key,
                                         int64_t cache_bytes);

/// Same target and compute capability: results of one may stand in for the other's.
bool SameArchitecture(const db::DeviceRecord& a, const db::DeviceRecord& b);

/// How far apart two devices of one architecture are: memory bandwidth first (weight 4: most
/// fusions are memory-bound, so it moves the best config most), then core count, each as
/// the absolute log of their ratio (1 where a figure is unknown). 0 for the same card.
double DeviceDistance(const db::DeviceRecord& a, const db::DeviceRecord& b);

/// The other devices of `store` with `device`'s GPU architecture (target and compute
/// capability), nearest first: by memory bandwidth, then SM count, on a log scale (most
/// fusions are memory-bound). The same GPU under another driver is nearest of all. Empty for
/// the host: one CPU's timings say little about another's.
Expected<std::vector<db::DeviceRecord>> SameArchitectureDevices(db::ResultStore& store,
                                                                const db::DeviceRecord& device);

/// The best available model for `target` on the device `device_key` given `store` (null:
/// no database): always a LearnedModel, trained from the newest stored model when there is
/// one for this device, compiler version and feature schema, else untrained so the analytic
/// model answers (its name is then the analytic one). A stored model that fails to load is
/// reported in the description and the analytic model answers: a bad model must not stop
/// predictions.
ModelChoice BestModelFor(const emitters::Target& target, int64_t cache_bytes, db::ModelStore* store,
                         const std::string& device_key, const std::string& compiler_version,
                         const LearnedModelOptions& options = {});

/// As above for `device`; when no model is stored for it, a GPU takes the newest model of
/// the nearest device of its architecture that has one (SameArchitectureDevices: the same
/// card timed under another driver, say), and the description names that device.
ModelChoice BestModelFor(const emitters::Target& target, int64_t cache_bytes, db::Store* store,
                         const db::DeviceRecord& device, const std::string& compiler_version,
                         const LearnedModelOptions& options = {});

}  // namespace tilesmith::costmodel
