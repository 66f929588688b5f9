#include "tuner/model_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tilesmith::tuner {
namespace {

// A config as coordinates: numeric fields on a log2 scale (tile sizes and widths act by
// factors, so 64 is as far from 32 as 32 is from 16), every other field value (layouts,
// flags) as a 0/1 column of its own.
std::vector<std::vector<double>> ConfigCoordinates(const Space& space) {
  std::map<std::string, size_t> columns;
  auto column = [&](const std::string& name) {
    return columns.emplace(name, columns.size()).first->second;
  };
  std::vector<std::vector<std::pair<size_t, double>>> sparse;
  for (const Candidate& candidate : space.candidates) {
    auto& row = sparse.emplace_back();
    for (const auto& [field, value] : candidate.config.items()) {
      if (value.is_number()) {
        row.emplace_back(column(field), std::log2(1.0 + std::abs(value.get<double>())));
      } else {
        row.emplace_back(column(field + "=" + value.dump()), 1.0);
      }
    }
  }
  std::vector<std::vector<double>> coordinates;
  for (const auto& row : sparse) {
    std::vector<double>& dense = coordinates.emplace_back(columns.size(), 0.0);
    for (const auto& [index, value] : row) dense[index] = value;
  }
  return coordinates;
}

// Solves (A + ridge I) x = b for a small symmetric positive semi-definite A.
std::vector<double> SolveRidge(std::vector<std::vector<double>> a, std::vector<double> b,
                               double ridge) {
  size_t n = b.size();
  for (size_t i = 0; i < n; ++i) a[i][i] += ridge;
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t row = col + 1; row < n; ++row) {
      if (std::abs(a[row][col]) > std::abs(a[pivot][col])) pivot = row;
    }
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t row = col + 1; row < n; ++row) {
      double factor = a[row][col] / a[col][col];
      for (size_t k = col; k < n; ++k) a[row][k] -= factor * a[col][k];
      b[row] -= factor * b[col];
    }
  }
  std::vector<double> x(n, 0.0);
  for (size_t col = n; col-- > 0;) {
    double sum = b[col];
    for (size_t k = col + 1; k < n; ++k) sum -= a[col][k] * x[k];
    x[col] = sum / a[col][col];
  }
  return x;
}

// The model's predictions, corrected by a ridge regression of log(measured / predicted) on
// the config's coordinates, refitted after every batch. A model that is right up to a
// constant keeps its order; one that is wrong about a field's effect (it believes small
// tiles are fast, measurements say the opposite) is corrected along that field, including
// for configs far from anything measured, which a local correction could not reach.
class ModelGuidedStrategy : public Strategy {
 public:
  ModelGuidedStrategy(const Space& space, int64_t budget, const Ranking& ranking,
                      ModelGuidedOptions options)
      : Strategy(space, budget),
        ranking_(ranking),
        options_(options),
        coordinates_(ConfigCoordinates(space)) {}

  std::string_view name() const override { return "model"; }
  std::string stop_reason() const override { return stop_reason_; }

 protected:
  std::vector<int64_t> Pick(int64_t count) override {
    Predicted();
    std::vector<std::pair<double, int64_t>> ranked;
    for (int64_t candidate : Unseen()) ranked.emplace_back(Corrected(candidate), candidate);
    std::stable_sort(ranked.begin(), ranked.end());
    if (!ranked.empty() && Converged(ranked.front().first)) return {};
    std::vector<int64_t> batch;
    for (const auto& [time, candidate] : ranked) {
      if (static_cast<int64_t>(batch.size()) == count) break;
      batch.push_back(candidate);
    }
    return batch;
  }

  void Learn(std::span<const TrialOutcome> outcomes) override {
    const std::vector<double>& predicted = Predicted();
    double best_before = best_measured_us_;
    double error_sum = 0;
    int64_t errors = 0;
    for (const TrialOutcome& outcome : outcomes) {
      if (!outcome.ok || outcome.median_us <= 0) continue;
      ++measured_ok_;
      double expected = Corrected(outcome.candidate);  // before this batch refits it
      if (std::isfinite(expected) && expected > 0) {
        error_sum += std::abs(std::log(outcome.median_us / expected));
        ++errors;
      }
      best_measured_us_ = std::min(best_measured_us_, outcome.median_us);
      double prediction = predicted[outcome.candidate];
      if (!std::isfinite(prediction) || prediction <= 0) continue;
      residuals_.push_back({outcome.candidate, std::log(outcome.median_us / prediction)});
    }
    last_batch_improved_ = best_measured_us_ < best_before * (1.0 - options_.noise);
    if (errors > 0) last_batch_error_ = error_sum / static_cast<double>(errors);
    Refit();
  }

 private:
  struct Residual {
    int64_t candidate;
    double log_ratio;  // log(measured / predicted)
  };

  const std::vector<double>& Predicted() {
    if (predicted_.empty() && !space_.candidates.empty()) predicted_ = ranking_.PredictUs(space_);
    return predicted_;
  }

  void Refit() {
    if (residuals_.empty() || coordinates_.empty()) return;
    size_t dims = coordinates_.front().size();
    double count = static_cast<double>(residuals_.size());
    mean_coordinates_.assign(dims, 0.0);
    mean_residual_ = 0;
    for (const Residual& residual : residuals_) {
      for (size_t d = 0; d < dims; ++d) mean_coordinates_[d] += coordinates_[residual.candidate][d];
      mean_residual_ += residual.log_ratio;
    }
    for (double& mean : mean_coordinates_) mean /= count;
    mean_residual_ /= count;
    std::vector<std::vector<double>> gram(dims, std::vector<double>(dims, 0.0));
    std::vector<double> moment(dims, 0.0);
    for (const Residual& residual : residuals_) {
      const std::vector<double>& x = coordinates_[residual.candidate];
      for (size_t i = 0; i < dims; ++i) {
        double xi = x[i] - mean_coordinates_[i];
        moment[i] += xi * (residual.log_ratio - mean_residual_);
        for (size_t j = 0; j < dims; ++j) gram[i][j] += xi * (x[j] - mean_coordinates_[j]);
      }
    }
    weights_ = SolveRidge(std::move(gram), std::move(moment), options_.ridge);
  }

  double Corrected(int64_t candidate) const {
    double prediction = predicted_[candidate];
    if (!std::isfinite(prediction) || weights_.empty()) return prediction;
    double log_ratio = mean_residual_;
    const std::vector<double>& x = coordinates_[candidate];
    for (size_t d = 0; d < weights_.size(); ++d) {
      log_ratio += weights_[d] * (x[d] - mean_coordinates_[d]);
    }
    return prediction * std::exp(log_ratio);
  }

  // Stops only once enough was measured, the last batch found nothing better, and the
  // corrected model sees no unmeasured config beating the best by more than the noise.
  bool Converged(double best_unmeasured_us) {
    if (measured_ok_ < options_.min_measured || !std::isfinite(best_measured_us_)) return false;
    if (last_batch_improved_) return false;
    if (!(last_batch_error_ <= options_.trust)) return false;
    if (best_unmeasured_us < best_measured_us_ * (1.0 - options_.noise)) return false;
    std::ostringstream reason;
    reason.precision(6);
    const char* told = options_.told_predictions ? "compiled" : "measured";
    reason << "converged: the best un" << told << " config is predicted at " << best_unmeasured_us
           << " us, not " << options_.noise * 100 << "% faster than the best " << told << " "
           << best_measured_us_ << " us (the last batch was predicted within "
           << std::round(100 * (std::exp(last_batch_error_) - 1)) << "%)";
    stop_reason_ = reason.str();
    return true;
  }

  const Ranking& ranking_;
  ModelGuidedOptions options_;
  std::vector<std::vector<double>> coordinates_;
  std::vector<double> predicted_;
  std::vector<Residual> residuals_;
  std::vector<double> mean_coordinates_;
  double mean_residual_ = 0;
  std::vector<double> weights_;
  int64_t measured_ok_ = 0;
  bool last_batch_improved_ = true;
  double last_batch_error_ = std::numeric_limits<double>::infinity();
  double best_measured_us_ = std::numeric_limits<double>::infinity();
  std::string stop_reason_;
};

}  // namespace

std::unique_ptr<Strategy> MakeModelGuidedStrategy(const Space& space, int64_t budget,
                                                  const Ranking& ranking,
                                                  ModelGuidedOptions options) {
  return std::make_unique<ModelGuidedStrategy>(space, budget, ranking, options);
}

}  // namespace tilesmith::tuner
