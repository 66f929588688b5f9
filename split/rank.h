// Ranking split strategies by per-step time: the per-device kernel's time (predicted by the
// target's cost model, or measured by a tune) plus the collectives', with a separate
// collective-matmul estimate where a dot's communication can hide behind its compute.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "split/dim_labels.h"
#include "split/mesh.h"
#include "split/strategy.h"
#include "support/status.h"
#include "tuner/device.h"
#include "tuner/model_ranking.h"

namespace tilesmith::split {

/// The time of one per-device kernel.
struct KernelTime {
  double us = 0;
  std::string source;  ///< `predicted (analytic-host)`, `measured (host, 12 configs)`.
  nlohmann::json config;
  std::string emitter;
};

/// Times per-device fusions. Implementations memoize: strategies often share block shapes.
class KernelTimer {
 public:
  virtual ~KernelTimer() = default;
  /// The best time over the fusion's configs on the timer's device.
  virtual Expected<KernelTime> Time(const hlo::HloModule& shard) = 0;
};

/// Predicts with the target's analytic cost model over the fusion's whole search space
/// (tuner::ModelRanking, as `tilesmith predict`), taking the best config's prediction.
class PredictedKernelTimer : public KernelTimer {
 public:
  /// `max_compiled`: configs compiled for what the compiler made of them (cubin resources,
  /// host code counts; 0: none, faster).
  explicit PredictedKernelTimer(tuner::Device device, int64_t max_compiled = 0);
  Expected<KernelTime> Time(const hlo::HloModule& shard) override;

 private:
  tuner::Device device_;
  tuner::ModelRanking ranking_;
  std::map<std::string, KernelTime> cache_;
};

/// Times every strategy's per-device fusion with `timer`, fills in kernel, total and
/// overlap figures, and sorts fastest first (ties: fewer collective bytes, then fewer split
/// axes, then enumeration order).
Status RankStrategies(const hlo::HloModule& module, const DimLabels& labels, const Mesh& mesh,
                      KernelTimer& timer, std::vector<Strategy>& strategies);

/// Fills `strategy.overlap` when its fusion's root is a dot whose operand is all-gathered
/// along a free dim, or whose result is psum_scattered: the collective-matmul schedule
/// (n steps of 1/n of the kernel, n-1 ppermutes each hidden behind one). Needs kernel_us.
void EstimateOverlap(const hlo::HloComputation& fusion, const Mesh& mesh, Strategy& strategy);

/// A strategy as JSON (specs, blocks, collectives, times), as `tilesmith split --json`
/// prints it.
nlohmann::json StrategyToJson(const Strategy& strategy);

}  // namespace tilesmith::split
