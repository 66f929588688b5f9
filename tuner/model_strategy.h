// Model-guided search (strategy `model`): rank the space with a cost model, measure the
// predicted best, refit a correction of the predictions to what was measured, repeat; stop
// when the budget is spent or, once a batch brought no gain and the corrected model predicted
// that batch well, when no unmeasured config is predicted to beat the best measured one by
// more than the measurement noise.
#pragma once

#include <cstdint>
#include <memory>

#include "tuner/ranking.h"
#include "tuner/strategy.h"

namespace tilesmith::tuner {

struct ModelGuidedOptions {
  /// No convergence stop before this many verified measurements: a model's first guesses
  /// need a few measurements around them before its corrections can be trusted.
  int64_t min_measured = 8;
  /// A predicted gain below this fraction of the best measured time is noise, not a reason
  /// to measure on.
  double noise = 0.03;
  /// Ridge penalty of the correction's fit (per log2 step of a field): keeps a handful of
  /// measurements from tilting the model wildly.
  double ridge = 0.5;
  /// No convergence stop while the corrected model was off by more than this on the last
  /// batch (mean |log(measured / predicted)|): a model that cannot predict what it just
  /// measured cannot be trusted to say nothing unmeasured is faster. Infinity: always
  /// trusted.
  double trust = 0.10;
  /// The times told are predictions of compiled configs, not measurements (StrategyOptions).
  bool told_predictions = false;
};

/// The `model` strategy over `ranking`'s predictions (which must outlive it).
std::unique_ptr<Strategy> MakeModelGuidedStrategy(const Space& space, int64_t budget,
                                                  const Ranking& ranking,
                                                  ModelGuidedOptions options = {});

}  // namespace tilesmith::tuner
