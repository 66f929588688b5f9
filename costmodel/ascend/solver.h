// Auto Tiling's solvers on a TilingModel: the public default solver (binary search of each
// tile down from its maximum until the buffers fit, the most cores, then local improvement)
// and, beyond it, an enumeration of alternatives ranked by the model.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "costmodel/ascend/tiling.h"
#include "support/status.h"

namespace tilesmith::costmodel::ascend {

/// A point of one case with its price; `point.block_dim` is the cores really used.
struct Candidate {
  TilingCase tiling_case;
  TilingPoint point;
  Evaluation evaluation;
};

/// Orders candidates by predicted cycles, then deterministically (tiling key, fewer
/// cores, smaller tiles) so that ties never flip between runs.
bool CheaperThan(const Candidate& a, const Candidate& b);

/// The first two steps of the default solver: each group's tile binary-searched down from
/// the whole axis until the buffers fit, innermost group first (r, then y, then x) with the
/// groups not yet sized at their smallest; then block_dim = min(vector cores, outer tiles).
/// nullopt when even the smallest tiles overflow the unified buffer.
std::optional<TilingPoint> LargestFittingTiles(const TilingModel& model,
                                               const TilingCase& tiling_case);

/// The default solver on one case: LargestFittingTiles, then hill-climbing while the
/// objective drops. The moves: one aligned step either way, half and double a tile (on the
/// most cores it can use), each also trading the freed buffer to another group's tile;
/// rebalancing a tile so that a nearby core count runs a nearby trip count (for the r
/// group: one reduce loop more or fewer); one core less, half the cores. Greedy: the
/// answer is a local optimum of these moves, not always the model's best.
std::optional<Candidate> SolveCase(const TilingModel& model, const TilingCase& tiling_case);

/// Every case solved, cheapest first. An error when no case fits the unified buffer.
Expected<std::vector<Candidate>> SolveAllCases(const TilingModel& model);

/// Alternatives ranked by the model: the `seeds` (the solver's answers); around each seed,
/// for every core count and a ladder of trips per core (1..16, doubling, the seed's ± 2),
/// the tile that balances them (the r group: a ladder of reduce loop counts); and for
/// every case, tiles on a ladder (align·2^k, the whole axis) and near the seed (±1, ±2
/// steps, halved, doubled), each on the most cores, one less, half, the seed's and powers
/// of two. Candidates that do not fit are dropped. Cheapest first, duplicates removed.
std::vector<Candidate> EnumerateAlternatives(const TilingModel& model,
                                             std::span<const Candidate> seeds);

}  // namespace tilesmith::costmodel::ascend
