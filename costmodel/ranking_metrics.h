// How well a model orders one fusion's configs: rank correlations between predicted and
// measured times, and the regret of trusting the model's top picks. `tilesmith model eval`
// and the model bench report these per held-out fusion.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tilesmith::costmodel {

/// Ranks 1..n, ties sharing their average rank.
std::vector<double> Ranks(std::span<const double> values);

/// Spearman's rho (Pearson over ranks, ties averaged); 0 when either side is constant.
double Spearman(std::span<const double> a, std::span<const double> b);

/// Kendall's tau-b (ties on either side corrected for); 0 when either side is constant.
double KendallTau(std::span<const double> a, std::span<const double> b);

/// How much slower the best measured config among the `k` fastest predicted is than the
/// measured best: 0 when the model's top k hold the best, 0.25 when 25% slower. Ties in the
/// prediction go to the earlier config.
double TopKRegret(std::span<const double> predicted, std::span<const double> measured, int64_t k);

}  // namespace tilesmith::costmodel
