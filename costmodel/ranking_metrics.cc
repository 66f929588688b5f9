#include "costmodel/ranking_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tilesmith::costmodel {

std::vector<double> Ranks(std::span<const double> values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = static_cast<double>(i + j) / 2 + 1;
    i = j + 1;
  }
  return ranks;
}

double Spearman(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || a.size() < 2) return 0;
  std::vector<double> ra = Ranks(a), rb = Ranks(b);
  double n = static_cast<double>(ra.size());
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

double KendallTau(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || a.size() < 2) return 0;
  // O(n^2): a fusion's space is at most a few thousand configs.
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = i + 1; j < a.size(); ++j) {
      double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) {
        ++ties_a;
      } else if (db == 0) {
        ++ties_b;
      } else if ((da > 0) == (db > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  }
  double denominator =
      std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  return denominator > 0 ? (concordant - discordant) / denominator : 0;
}

double TopKRegret(std::span<const double> predicted, std::span<const double> measured, int64_t k) {
  if (predicted.size() != measured.size() || measured.empty() || k <= 0) return 0;
  std::vector<size_t> order(predicted.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return predicted[x] < predicted[y]; });
  double best = *std::min_element(measured.begin(), measured.end());
  double picked = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < order.size() && static_cast<int64_t>(i) < k; ++i) {
    picked = std::min(picked, measured[order[i]]);
  }
  return best > 0 ? picked / best - 1 : 0;
}

}  // namespace tilesmith::costmodel
