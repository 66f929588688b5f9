#include "costmodel/ascend/solver.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace tilesmith::costmodel::ascend {
namespace {

// Improvement moves strictly lower the objective, so hill-climbing ends; the cap only
// bounds pathological plateaus of tiny gains.
constexpr int kMaxImprovementSteps = 10000;
// Enumeration keeps at most this many tile combinations per case (ladders are thinned,
// the neighbourhood of the solver's answer is kept).
constexpr size_t kMaxCombinationsPerCase = 4096;
constexpr double kEpsilon = 1e-9;
// The balanced sweep tries trip counts per core 1..16, then doubling up to this.
constexpr int64_t kMaxTripLadder = 1 << 20;

Candidate Price(const TilingModel& model, const TilingCase& tiling_case, TilingPoint point) {
  Evaluation evaluation = model.Evaluate(tiling_case, point);
  point.block_dim = evaluation.block_dim;
  return {tiling_case, std::move(point), std::move(evaluation)};
}

// The same tiles on the most cores they can use.
TilingPoint WithMostCores(const TilingModel& model, const TilingCase& tiling_case,
                          std::vector<int64_t> tiles) {
  int64_t outer = model.OuterTiles(tiling_case, tiles);
  return {std::move(tiles), std::min(model.platform().vector_cores, outer)};
}

std::vector<size_t> SplitGroups(const TilingCase& tiling_case) {
  std::vector<size_t> groups;
  for (size_t g = 0; g < tiling_case.split.size(); ++g) {
    if (tiling_case.split[g] >= 0) groups.push_back(g);
  }
  return groups;
}

// The largest tile of group `group` that fits with the other tiles as they are (binary
// search; the tiles given must fit).
int64_t LargestFittingTile(const TilingModel& model, const TilingCase& tiling_case,
                           std::vector<int64_t> tiles, size_t group) {
  TileRange range = model.Tiles(tiling_case, group);
  int64_t low = range.IndexOf(tiles[group]), high = range.Count() - 1;  // low fits
  while (low < high) {
    int64_t mid = low + (high - low + 1) / 2;
    tiles[group] = range.At(mid);
    if (model.UbUsed(tiling_case, tiles) <= model.platform().ub_bytes) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return range.At(low);
}

// Tile indices worth trying near index `at` of `range`.
std::set<int64_t> Around(const TileRange& range, int64_t at, std::initializer_list<int> steps) {
  std::set<int64_t> indices;
  for (int step : steps) {
    int64_t index = at + step;
    if (index >= 0 && index < range.Count()) indices.insert(index);
  }
  int64_t tile = range.At(at);
  indices.insert(range.IndexOf(tile / 2));
  indices.insert(range.IndexOf(tile * 2));
  return indices;
}

// The smallest tile of group `group` whose loops stay within `budget` iterations, the
// other tiles as they are: the same trip count with the fewest bytes per transfer. The
// budget counts outer tiles (cores × tiles per core) for the x and y groups, and the reduce
// loops inside a core for the r group. nullopt when even the whole axis needs more.
std::optional<int64_t> BalancedTile(const TilingModel& model, const TilingCase& tiling_case,
                                    std::vector<int64_t> tiles, size_t group, int64_t budget) {
  if (budget < 1) return std::nullopt;
  TileRange range = model.Tiles(tiling_case, group);
  tiles[group] = range.size;
  int64_t others = model.groups()[group].kind == GroupKind::kR
                       ? model.ReduceLoops(tiling_case, tiles)
                       : model.OuterTiles(tiling_case, tiles);
  int64_t tiles_per_split = budget / others;
  if (tiles_per_split < 1) return std::nullopt;
  int64_t tile = (range.size + tiles_per_split - 1) / tiles_per_split;
  int64_t index = range.IndexOf(tile);
  return range.At(range.At(index) < tile ? index + 1 : index);
}

// `from` with group `group`'s tile replaced by `tile` on `cores` cores, when it fits.
std::optional<Candidate> Variant(const TilingModel& model, const Candidate& from, size_t group,
                                 int64_t tile, int64_t cores) {
  std::vector<int64_t> tiles = from.point.tiles;
  tiles[group] = tile;
  if (model.UbUsed(from.tiling_case, tiles) > model.platform().ub_bytes) return std::nullopt;
  return Price(model, from.tiling_case, {std::move(tiles), cores});
}

// One aligned step either way, half and double the tile of group `g`, each on the most
// cores it can use; and, with each of those, trades: the buffer the step frees (or takes)
// goes to (or comes from) another group's tile, refitted as large as it goes.
void AddSteps(const TilingModel& model, const Candidate& from, size_t g,
              std::vector<Candidate>& out) {
  const TilingCase& tiling_case = from.tiling_case;
  int64_t ub_bytes = model.platform().ub_bytes;
  TileRange range = model.Tiles(tiling_case, g);
  for (int64_t index : Around(range, range.IndexOf(from.point.tiles[g]), {-1, 1})) {
    std::vector<int64_t> tiles = from.point.tiles;
    tiles[g] = range.At(index);
    if (model.UbUsed(tiling_case, tiles) <= ub_bytes) {
      out.push_back(Price(model, tiling_case, WithMostCores(model, tiling_case, tiles)));
    }
    for (size_t h : SplitGroups(tiling_case)) {
      if (h == g) continue;
      std::vector<int64_t> traded = tiles;
      traded[h] = model.Tiles(tiling_case, h).At(0);
      if (model.UbUsed(tiling_case, traded) > ub_bytes) continue;
      traded[h] = LargestFittingTile(model, tiling_case, traded, h);
      out.push_back(
          Price(model, tiling_case, WithMostCores(model, tiling_case, std::move(traded))));
    }
  }
}

// Tiles of group `g` sized so that a nearby core count runs a nearby trip count (x, y), or
// the reduce loops run once more, as often, or once fewer (r).
void AddRebalanced(const TilingModel& model, const Candidate& from, size_t g,
                   std::vector<Candidate>& out) {
  auto add = [&](int64_t budget, int64_t cores) {
    auto tile = BalancedTile(model, from.tiling_case, from.point.tiles, g, budget);
    if (!tile) return;
    if (auto variant = Variant(model, from, g, *tile, cores)) out.push_back(std::move(*variant));
  };
  int64_t cores = from.point.block_dim, most = model.platform().vector_cores;
  if (model.groups()[g].kind == GroupKind::kR) {
    int64_t loops = from.evaluation.reduce_loops;
    for (int64_t budget : {loops - 1, loops, loops + 1}) add(budget, cores);
    return;
  }
  int64_t per_core = from.evaluation.tb_size;
  for (int64_t count : {cores - 1, cores, cores + 1, cores / 2, cores * 2, most}) {
    if (count < 1 || count > most) continue;
    for (int64_t trips : {per_core - 1, per_core, per_core + 1}) {
      add(SaturatingMul(count, trips), count);
    }
  }
}

// The moves of the improvement step.
std::vector<Candidate> Neighbours(const TilingModel& model, const Candidate& from) {
  std::vector<Candidate> neighbours;
  for (size_t g : SplitGroups(from.tiling_case)) {
    AddSteps(model, from, g, neighbours);
    AddRebalanced(model, from, g, neighbours);
  }
  for (int64_t count : {from.point.block_dim - 1, from.point.block_dim / 2}) {
    if (count >= 1) {
      neighbours.push_back(Price(model, from.tiling_case, {from.point.tiles, count}));
    }
  }
  return neighbours;
}

// Tile values to combine, per split group of the case: a ladder (align·2^k and the whole
// axis, thinned when the product grows too large) and the seed's neighbourhood.
std::vector<std::vector<int64_t>> TileValues(const TilingModel& model,
                                             const TilingCase& tiling_case, const Candidate* seed) {
  std::vector<std::vector<int64_t>> values;
  size_t combinations = 1;
  for (size_t g : SplitGroups(tiling_case)) {
    TileRange range = model.Tiles(tiling_case, g);
    std::set<int64_t> near;
    if (seed) near = Around(range, range.IndexOf(seed->point.tiles[g]), {-2, -1, 0, 1, 2});
    std::set<int64_t> ladder = {0, range.Count() - 1};
    for (int64_t tile = range.align; tile < range.size; tile *= 2) {
      ladder.insert(range.IndexOf(tile));
    }
    std::vector<int64_t> thinned(ladder.begin(), ladder.end());
    while (thinned.size() > 3 &&
           combinations * (thinned.size() + near.size()) > kMaxCombinationsPerCase) {
      std::vector<int64_t> every_other;
      for (size_t i = 0; i < thinned.size(); i += 2) every_other.push_back(thinned[i]);
      thinned = std::move(every_other);
    }
    near.insert(thinned.begin(), thinned.end());
    values.emplace_back();
    for (int64_t index : near) values.back().push_back(range.At(index));
    combinations *= values.back().size();
  }
  return values;
}

// `tiles` on every core count worth a look, when they fit.
void AddCoreCounts(const TilingModel& model, const TilingCase& tiling_case,
                   const std::vector<int64_t>& tiles, const Candidate* seed,
                   std::vector<Candidate>& out) {
  if (model.UbUsed(tiling_case, tiles) > model.platform().ub_bytes) return;
  int64_t most = WithMostCores(model, tiling_case, tiles).block_dim;
  std::set<int64_t> cores = {most, most - 1, most / 2};
  if (seed) cores.insert(seed->point.block_dim);
  for (int64_t power = 1; power < most; power *= 2) cores.insert(power);
  for (int64_t count : cores) {
    if (count >= 1 && count <= most) out.push_back(Price(model, tiling_case, {tiles, count}));
  }
}

// Loop counts worth a look near `center`: center ± 2, 1..16, then doubling.
std::set<int64_t> LoopLadder(int64_t center) {
  std::set<int64_t> counts;
  for (int64_t count = center - 2; count <= center + 2; ++count) {
    if (count >= 1) counts.insert(count);
  }
  for (int64_t count = 1; count <= 16; ++count) counts.insert(count);
  for (int64_t count = 32; count < kMaxTripLadder; count *= 2) counts.insert(count);
  return counts;
}

// Around the seed, every core count with the tile that balances it for a ladder of trip
// counts per core (x, y), and every reduce loop count of the ladder on the seed's cores (r):
// where the model's best of a case usually lies.
void AddBalancedSweep(const TilingModel& model, const Candidate& seed,
                      std::vector<Candidate>& out) {
  auto add = [&](size_t group, int64_t budget, int64_t cores) {
    auto tile = BalancedTile(model, seed.tiling_case, seed.point.tiles, group, budget);
    if (!tile) return;
    if (auto variant = Variant(model, seed, group, *tile, cores)) out.push_back(*variant);
  };
  for (size_t g : SplitGroups(seed.tiling_case)) {
    if (model.groups()[g].kind == GroupKind::kR) {
      for (int64_t loops : LoopLadder(seed.evaluation.reduce_loops)) {
        add(g, loops, seed.point.block_dim);
      }
      continue;
    }
    for (int64_t per_core : LoopLadder(seed.evaluation.tb_size)) {
      for (int64_t cores = 1; cores <= model.platform().vector_cores; ++cores) {
        add(g, SaturatingMul(cores, per_core), cores);
      }
    }
  }
}

}  // namespace

bool CheaperThan(const Candidate& a, const Candidate& b) {
  if (std::abs(a.evaluation.objective - b.evaluation.objective) > kEpsilon) {
    return a.evaluation.objective < b.evaluation.objective;
  }
  return std::tie(a.tiling_case.key, a.point.block_dim, a.point.tiles) <
         std::tie(b.tiling_case.key, b.point.block_dim, b.point.tiles);
}

std::optional<TilingPoint> LargestFittingTiles(const TilingModel& model,
                                               const TilingCase& tiling_case) {
  TilingPoint point = model.SmallestPoint(tiling_case);
  if (model.UbUsed(tiling_case, point.tiles) > model.platform().ub_bytes) return std::nullopt;
  // Innermost group first: contiguous inner data makes the longest transfers, and a reduce
  // group loaded whole needs no second pass.
  std::vector<size_t> groups = SplitGroups(tiling_case);
  for (auto g = groups.rbegin(); g != groups.rend(); ++g) {
    point.tiles[*g] = LargestFittingTile(model, tiling_case, point.tiles, *g);
  }
  return WithMostCores(model, tiling_case, std::move(point.tiles));
}

std::optional<Candidate> SolveCase(const TilingModel& model, const TilingCase& tiling_case) {
  std::optional<TilingPoint> start = LargestFittingTiles(model, tiling_case);
  if (!start) return std::nullopt;
  Candidate current = Price(model, tiling_case, std::move(*start));
  for (int step = 0; step < kMaxImprovementSteps; ++step) {
    const Candidate* best = &current;
    std::vector<Candidate> neighbours = Neighbours(model, current);
    for (const Candidate& neighbour : neighbours) {
      if (neighbour.evaluation.fits &&
          neighbour.evaluation.objective < best->evaluation.objective - kEpsilon) {
        best = &neighbour;
      }
    }
    if (best == &current) break;
    current = *best;
  }
  return current;
}

Expected<std::vector<Candidate>> SolveAllCases(const TilingModel& model) {
  std::vector<Candidate> solved;
  for (const TilingCase& tiling_case : model.cases()) {
    if (auto candidate = SolveCase(model, tiling_case)) solved.push_back(std::move(*candidate));
  }
  if (solved.empty()) {
    TilingPoint smallest = model.SmallestPoint(model.cases().front());
    return MakeError(ErrorCode::kResourceExhausted,
                     "no tiling fits the unified buffer: the smallest tiles need " +
                         std::to_string(model.UbUsed(model.cases().front(), smallest.tiles)) +
                         " bytes, " + std::to_string(model.platform().ub_bytes) + " usable");
  }
  std::sort(solved.begin(), solved.end(), CheaperThan);
  return solved;
}

std::vector<Candidate> EnumerateAlternatives(const TilingModel& model,
                                             std::span<const Candidate> seeds) {
  std::vector<Candidate> all(seeds.begin(), seeds.end());
  for (const TilingCase& tiling_case : model.cases()) {
    const Candidate* seed = nullptr;
    for (const Candidate& candidate : seeds) {
      if (candidate.tiling_case.key == tiling_case.key) seed = &candidate;
    }
    if (seed) AddBalancedSweep(model, *seed, all);
    std::vector<size_t> groups = SplitGroups(tiling_case);
    std::vector<std::vector<int64_t>> values = TileValues(model, tiling_case, seed);
    std::vector<size_t> digit(groups.size(), 0);
    std::vector<int64_t> tiles = model.SmallestPoint(tiling_case).tiles;
    while (true) {
      for (size_t i = 0; i < groups.size(); ++i) tiles[groups[i]] = values[i][digit[i]];
      AddCoreCounts(model, tiling_case, tiles, seed, all);
      size_t i = groups.size();
      while (i > 0 && ++digit[i - 1] == values[i - 1].size()) digit[--i] = 0;
      if (i == 0) break;
    }
  }
  std::sort(all.begin(), all.end(), CheaperThan);
  auto same = [](const Candidate& a, const Candidate& b) {
    return a.tiling_case.key == b.tiling_case.key && a.point == b.point;
  };
  all.erase(std::unique(all.begin(), all.end(), same), all.end());
  return all;
}

}  // namespace tilesmith::costmodel::ascend
