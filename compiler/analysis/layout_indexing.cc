#include "compiler/analysis/layout_indexing.h"

#include <numeric>

#include "compiler/hlo/tiling.h"

namespace tilesmith::analysis {
namespace {

int64_t Product(std::span<const int64_t> values) {
  return std::accumulate(values.begin(), values.end(), int64_t{1}, std::multiplies<>());
}

// One tiling level, as it rewrites the index: the last `covered` dims (after prepending
// `prepended` size-1 dims) are grouped — runs of `*` entries join the next sized entry —
// and each group is split into a tile index and an index within the tile.
struct Level {
  int64_t prepended = 0;
  int64_t first_covered = 0;
  std::vector<int64_t> group_of_dim;  // per covered dim
  std::vector<int64_t> tile_sizes;    // per group
  std::vector<int64_t> input_sizes;   // sizes of the dims this level receives
};

// The physical dims, major to minor, before tiling: logical dims in layout order.
std::vector<int64_t> PhysicalOrder(const hlo::Shape& shape) {
  const std::vector<int64_t>& minor_to_major = shape.layout().minor_to_major;
  return std::vector<int64_t>(minor_to_major.rbegin(), minor_to_major.rend());
}

// Walks the tiling levels over the dim sizes, recording each level; `sizes` ends as the
// fully tiled dims.
std::vector<Level> TilingLevels(const hlo::Shape& shape, std::vector<int64_t>& sizes) {
  std::vector<Level> levels;
  for (const hlo::Tile& tile : shape.layout().tiles) {
    Level level;
    int64_t k = static_cast<int64_t>(tile.dims.size());
    level.prepended = std::max<int64_t>(0, k - static_cast<int64_t>(sizes.size()));
    sizes.insert(sizes.begin(), level.prepended, 1);
    level.first_covered = static_cast<int64_t>(sizes.size()) - k;
    level.input_sizes = sizes;
    std::vector<int64_t> group_sizes;
    int64_t run = 1;
    for (int64_t j = 0; j < k; ++j) {
      level.group_of_dim.push_back(static_cast<int64_t>(level.tile_sizes.size()));
      run *= sizes[level.first_covered + j];
      if (tile.dims[j] != hlo::Tile::kCombineDimension) {
        level.tile_sizes.push_back(tile.dims[j]);
        group_sizes.push_back(run);
        run = 1;
      }
    }
    sizes.resize(level.first_covered);
    for (size_t g = 0; g < group_sizes.size(); ++g) {
      sizes.push_back((group_sizes[g] + level.tile_sizes[g] - 1) / level.tile_sizes[g]);
    }
    sizes.insert(sizes.end(), level.tile_sizes.begin(), level.tile_sizes.end());
    levels.push_back(std::move(level));
  }
  return levels;
}

// Row-major linearisation of `index` over `sizes`.
AffineExpr Linearize(std::span<const AffineExpr> index, std::span<const int64_t> sizes) {
  AffineExpr linear;
  for (size_t i = 0; i < index.size(); ++i) linear = linear * sizes[i] + index[i];
  return linear;
}

}  // namespace

Expected<IndexingMap> LogicalToLinearIndexing(const hlo::Shape& shape) {
  TS_RETURN_IF_ERROR(hlo::PhysicalLayout::Create(shape));
  std::vector<int64_t> order = PhysicalOrder(shape);
  std::vector<AffineExpr> index;
  std::vector<int64_t> sizes;
  for (int64_t dim : order) {
    index.push_back(AffineExpr::Dim(dim));
    sizes.push_back(shape.dim(dim));
  }
  std::vector<int64_t> tiled_sizes = sizes;
  for (const Level& level : TilingLevels(shape, tiled_sizes)) {
    index.insert(index.begin(), level.prepended, AffineExpr());
    std::vector<AffineExpr> groups(level.tile_sizes.size());
    for (size_t j = 0; j < level.group_of_dim.size(); ++j) {
      int64_t dim = level.first_covered + static_cast<int64_t>(j);
      AffineExpr& group = groups[level.group_of_dim[j]];
      group = group * level.input_sizes[dim] + index[dim];
    }
    index.resize(level.first_covered);
    for (size_t g = 0; g < groups.size(); ++g) {
      index.push_back(groups[g].FloorDiv(level.tile_sizes[g]));
    }
    for (size_t g = 0; g < groups.size(); ++g) index.push_back(groups[g].Mod(level.tile_sizes[g]));
  }
  IndexingMap map(RangesForSizes(shape.dims()), {}, {Linearize(index, tiled_sizes)});
  map.Simplify();
  return map;
}

Expected<IndexingMap> LinearToLogicalIndexing(const hlo::Shape& shape) {
  TS_ASSIGN_OR_RETURN(hlo::PhysicalLayout physical, hlo::PhysicalLayout::Create(shape));
  std::vector<int64_t> order = PhysicalOrder(shape);
  std::vector<int64_t> sizes;
  for (int64_t dim : order) sizes.push_back(shape.dim(dim));
  std::vector<int64_t> tiled_sizes = sizes;
  std::vector<Level> levels = TilingLevels(shape, tiled_sizes);

  if (Product(tiled_sizes) == 0) return IndexingMap::KnownEmpty(1, 0, shape.rank());
  std::vector<Constraint> constraints;
  AffineExpr slot = AffineExpr::Dim(0);
  // Slots past the tiled shape are tail padding (`L(n)`).
  constraints.push_back({slot, Interval::ForSize(Product(tiled_sizes))});
  std::vector<AffineExpr> index;
  int64_t stride = Product(tiled_sizes);
  for (int64_t size : tiled_sizes) {
    stride /= size;
    index.push_back(slot.FloorDiv(stride).Mod(size));
  }
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
    const Level& level = *it;
    size_t group_count = level.tile_sizes.size();
    std::vector<AffineExpr> groups(group_count);
    std::vector<int64_t> group_sizes(group_count, 1);
    for (size_t g = 0; g < group_count; ++g) {
      groups[g] = index[level.first_covered + g] * level.tile_sizes[g] +
                  index[level.first_covered + group_count + g];
    }
    for (size_t j = 0; j < level.group_of_dim.size(); ++j) {
      group_sizes[level.group_of_dim[j]] *= level.input_sizes[level.first_covered + j];
    }
    // A group index past the product of its dims points into a partial tile's padding.
    for (size_t g = 0; g < group_count; ++g) {
      constraints.push_back({groups[g], Interval::ForSize(group_sizes[g])});
    }
    std::vector<AffineExpr> covered(level.group_of_dim.size());
    for (int64_t j = static_cast<int64_t>(covered.size()) - 1; j >= 0; --j) {
      int64_t size = level.input_sizes[level.first_covered + j];
      AffineExpr& group = groups[level.group_of_dim[j]];
      covered[j] = group.Mod(size);
      group = group.FloorDiv(size);
    }
    index.resize(level.first_covered);
    index.insert(index.end(), covered.begin(), covered.end());
    index.erase(index.begin(), index.begin() + level.prepended);
  }
  std::vector<AffineExpr> logical(order.size());
  for (size_t i = 0; i < order.size(); ++i) logical[order[i]] = index[i];
  IndexingMap map({Interval::ForSize(physical.element_count())}, {}, std::move(logical),
                  std::move(constraints));
  map.Simplify();
  return map;
}

}  // namespace tilesmith::analysis
