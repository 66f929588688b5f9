// What the learned model sees of one (fusion, config, device): a fixed, named and versioned
// vector of numbers read off the candidate's Kernel IR with the same facts the analytic
// models use (kernel_facts.h, gpu_model.h), plus the analytic prediction itself. A stored
// model is only used with the schema version it was trained on.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"

namespace tilesmith::costmodel {

/// Bumped whenever a feature is added, removed, reordered or computed differently: stored
/// models of another version are ignored (and retrained), never fed the wrong columns.
inline constexpr int kFeatureSchemaVersion = 10;

/// The feature names in column order (`cfg.vector`, `bytes.read`, `analytic.log_us`, …).
std::span<const std::string> FeatureNames();

/// The column of `name`, or -1.
int FeatureIndex(std::string_view name);

/// The features of `kernel` on `device` (`usage` null: no cubin), with `analytic` the
/// analytic model's prediction of the same kernel. Absent values (a config field the
/// emitter does not have, a GPU figure on the host) are NaN, which XGBoost treats as missing.
/// Deterministic: the same inputs give the same vector bit for bit.
std::vector<float> KernelFeatures(const emitters::KernelIR& kernel, const DeviceFigures& device,
                                  const ResourceUsage* usage, const Prediction& analytic);

}  // namespace tilesmith::costmodel
