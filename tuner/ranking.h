// Rankings predict a candidate's time before it is measured, so best-first search can
// measure the likely winners first. AnalyticRanking is a small roofline-and-waves stand-in;
// the cost models (costmodel/) plug in through the same interface.
#pragma once

#include <vector>

#include "compiler/emitters/target.h"
#include "tuner/space.h"

namespace tilesmith::tuner {

class Ranking {
 public:
  virtual ~Ranking() = default;
  /// Predicted time in microseconds of every candidate of `space`, in order. Only the
  /// order matters to a strategy; a candidate that cannot be predicted gets +infinity.
  virtual std::vector<double> PredictUs(const Space& space) const = 0;
};

/// Memory time (bytes / bandwidth) stretched by how badly the launch fills the device (too
/// few threads, a partial last wave) plus a per-block overhead (scheduling on a GPU, a task
/// on the host) and ~1 µs launch cost.
class AnalyticRanking : public Ranking {
 public:
  explicit AnalyticRanking(const emitters::DeviceInfo& device) : device_(device) {}
  std::vector<double> PredictUs(const Space& space) const override;

 private:
  const emitters::DeviceInfo& device_;
};

}  // namespace tilesmith::tuner
