// Rankings predict a candidate's time before it is measured, so best-first search can
// measure the likely winners first. ModelRanking (model_ranking.h) answers with a cost
// model (costmodel/); tests rank with made-up landscapes through the same interface.
#pragma once

#include <vector>

#include "tuner/space.h"

namespace tilesmith::tuner {

class Ranking {
 public:
  virtual ~Ranking() = default;
  /// Predicted time in microseconds of every candidate of `space`, in order. Only the
  /// order matters to a strategy; a candidate that cannot be predicted gets +infinity.
  virtual std::vector<double> PredictUs(const Space& space) const = 0;
};

}  // namespace tilesmith::tuner
