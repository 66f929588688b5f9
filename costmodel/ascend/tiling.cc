#include "costmodel/ascend/tiling.h"

#include <algorithm>

namespace tilesmith::costmodel::ascend {
namespace {

constexpr int64_t kUbAlignBytes = 32;  // spec: buffers are rounded up to 32 bytes

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t AlignUp(int64_t bytes) {
  return SaturatingMul(CeilDiv(bytes, kUbAlignBytes), kUbAlignBytes);
}

}  // namespace

int64_t TileRange::Count() const {
  int64_t aligned = size / align;
  return size % align == 0 ? std::max<int64_t>(aligned, 1) : aligned + 1;
}

int64_t TileRange::At(int64_t index) const {
  return index + 1 >= Count() ? size : (index + 1) * align;
}

int64_t TileRange::IndexOf(int64_t tile) const {
  if (tile >= size) return Count() - 1;
  return std::clamp<int64_t>(tile / align - 1, 0, Count() - 1);
}

TilingModel::TilingModel(LoopNest nest, ascgraph::Platform platform)
    : nest_(std::move(nest)), platform_(std::move(platform)) {
  for (GroupKind kind : {GroupKind::kX, GroupKind::kY, GroupKind::kR}) {
    AxisGroup group{kind, {}};
    for (size_t a = 0; a < nest_.axes.size(); ++a) {
      if (nest_.axes[a].group == kind) group.axes.push_back(static_cast<int>(a));
    }
    if (!group.axes.empty()) groups_.push_back(std::move(group));
  }
  // The split choices per group; a reduce group that must stay whole has only -1.
  std::vector<std::vector<int>> choices;
  for (const AxisGroup& group : groups_) {
    std::vector<int> options;
    if (group.kind != GroupKind::kR || nest_.reduce_splittable) {
      for (int a : group.axes) {
        if (nest_.axes[a].splittable) options.push_back(a);
      }
    }
    if (options.empty()) options.push_back(-1);
    choices.push_back(std::move(options));
  }
  std::vector<size_t> digit(choices.size(), 0);
  for (int64_t key = 0;; ++key) {
    TilingCase tiling_case{key, {}};
    for (size_t g = 0; g < choices.size(); ++g) tiling_case.split.push_back(choices[g][digit[g]]);
    cases_.push_back(std::move(tiling_case));
    size_t g = choices.size();
    while (g > 0 && ++digit[g - 1] == choices[g - 1].size()) digit[--g] = 0;
    if (g == 0) break;
  }
}

TileRange TilingModel::Tiles(const TilingCase& tiling_case, size_t group) const {
  int split = tiling_case.split[group];
  if (split < 0) return {1, 1};
  return {nest_.axes[split].size, std::min(nest_.axes[split].align, nest_.axes[split].size)};
}

TilingPoint TilingModel::SmallestPoint(const TilingCase& tiling_case) const {
  TilingPoint point;
  for (size_t g = 0; g < groups_.size(); ++g) point.tiles.push_back(Tiles(tiling_case, g).At(0));
  point.block_dim = std::min(platform_.vector_cores, OuterTiles(tiling_case, point.tiles));
  return point;
}

std::vector<int64_t> TilingModel::Extents(const TilingCase& tiling_case,
                                          std::span<const int64_t> tiles) const {
  std::vector<int64_t> extents(nest_.axes.size());
  for (size_t a = 0; a < extents.size(); ++a) extents[a] = nest_.axes[a].size;
  for (size_t g = 0; g < groups_.size(); ++g) {
    int split = tiling_case.split[g];
    if (split < 0) continue;
    for (int a : groups_[g].axes) {
      if (a == split) break;
      extents[a] = 1;  // outside the tile: a loop
    }
    extents[split] = tiles[g];
  }
  return extents;
}

std::pair<int64_t, int64_t> TilingModel::TensorBytes(const UbTensor& tensor,
                                                     std::span<const int64_t> extents) const {
  int64_t rows = tensor.fixed_elements;
  int64_t row = 1;
  for (size_t a = 0; a < extents.size(); ++a) {
    int64_t extent = std::min(tensor.repeats[a], extents[a]);
    if (static_cast<int>(a) == tensor.innermost) {
      row = extent;
    } else {
      rows = SaturatingMul(rows, extent);
    }
  }
  int64_t moved = SaturatingMul(SaturatingMul(rows, row), tensor.elem_bytes);
  int64_t stored = tensor.innermost < 0
                       ? AlignUp(moved)
                       : SaturatingMul(rows, AlignUp(SaturatingMul(row, tensor.elem_bytes)));
  return {stored, moved};
}

int64_t TilingModel::Loops(const TilingCase& tiling_case, std::span<const int64_t> tiles,
                           bool reduce) const {
  int64_t loops = 1;
  for (size_t g = 0; g < groups_.size(); ++g) {
    int split = tiling_case.split[g];
    if ((groups_[g].kind == GroupKind::kR) != reduce || split < 0) continue;
    for (int a : groups_[g].axes) {
      if (a == split) break;
      loops = SaturatingMul(loops, nest_.axes[a].size);
    }
    loops = SaturatingMul(loops, CeilDiv(nest_.axes[split].size, tiles[g]));
  }
  return loops;
}

int64_t TilingModel::OuterTiles(const TilingCase& tiling_case,
                                std::span<const int64_t> tiles) const {
  return Loops(tiling_case, tiles, /*reduce=*/false);
}

int64_t TilingModel::ReduceLoops(const TilingCase& tiling_case,
                                 std::span<const int64_t> tiles) const {
  return Loops(tiling_case, tiles, /*reduce=*/true);
}

std::vector<int64_t> TilingModel::BufferBytes(std::span<const int64_t> extents) const {
  std::vector<int64_t> sizes;
  for (const Buffer& buffer : nest_.buffers) {
    int64_t bytes = 0;
    for (int t : buffer.tensors) {
      bytes = std::max(bytes, TensorBytes(nest_.tensors[t], extents).first);
    }
    sizes.push_back(bytes);
  }
  return sizes;
}

int64_t TilingModel::UbUsed(const TilingCase& tiling_case, std::span<const int64_t> tiles) const {
  return TotalBytes(BufferBytes(Extents(tiling_case, tiles)));
}

int64_t TilingModel::TotalBytes(std::span<const int64_t> sizes) const {
  int64_t used = 0;
  for (size_t b = 0; b < sizes.size(); ++b) {
    used = SaturatingAdd(used, SaturatingMul(sizes[b], nest_.buffers[b].count));
  }
  return used;
}

Evaluation TilingModel::Evaluate(const TilingCase& tiling_case, const TilingPoint& point) const {
  Evaluation result;
  std::vector<int64_t> extents = Extents(tiling_case, point.tiles);
  result.buffer_bytes = BufferBytes(extents);
  result.ub_used = TotalBytes(result.buffer_bytes);
  result.fits = result.ub_used <= platform_.ub_bytes;
  result.outer_tiles = OuterTiles(tiling_case, point.tiles);
  result.reduce_loops = ReduceLoops(tiling_case, point.tiles);
  int64_t asked =
      std::clamp<int64_t>(point.block_dim, 1, std::min(platform_.vector_cores, result.outer_tiles));
  result.tb_size = CeilDiv(result.outer_tiles, asked);
  result.block_dim = CeilDiv(result.outer_tiles, result.tb_size);

  // Trip counts exclude the block-outer axis (spec): each core runs tb_size tiles, and the
  // nodes that see unreduced r axes run once per reduce loop iteration of each tile.
  bool loads = false, stores = false, vectors = false;
  for (const ScheduledNode& node : nest_.nodes) {
    if (node.tensors.empty()) continue;  // touches no buffer (nothing to move or compute)
    double trips = static_cast<double>(result.tb_size) *
                   static_cast<double>(node.in_reduce_loop ? result.reduce_loops : 1);
    auto [stored, moved] = TensorBytes(nest_.tensors[node.tensors[0]], extents);
    switch (node.role) {
      case NodeRole::kLoad:
        loads = true;
        result.cycles.mte2 += trips * LoadCycles(static_cast<double>(moved), result.block_dim);
        break;
      case NodeRole::kStore:
        stores = true;
        result.cycles.mte3 += trips * StoreCycles(static_cast<double>(moved), result.block_dim);
        break;
      case NodeRole::kVector: {
        // The vector unit runs over padded rows: N is the largest operand as stored.
        int64_t elements = 0;
        for (int t : node.tensors) {
          elements = std::max(
              elements, TensorBytes(nest_.tensors[t], extents).first / nest_.tensors[t].elem_bytes);
        }
        vectors = true;
        result.cycles.vec += trips * node.cost.Cycles(static_cast<double>(elements));
        break;
      }
    }
  }
  if (loads) result.cycles.mte2 += HeadCycles(Pipe::kMte2, result.block_dim);
  if (stores) result.cycles.mte3 += HeadCycles(Pipe::kMte3, result.block_dim);
  if (vectors) result.cycles.vec += HeadCycles(Pipe::kVec, result.block_dim);
  result.objective = Objective(result.cycles, result.block_dim);
  return result;
}

std::string TilingModel::SplitAxisName(const TilingCase& tiling_case, size_t group) const {
  int split = tiling_case.split[group];
  return split < 0 ? "" : nest_.axes[split].name;
}

std::string TilingModel::BlockAxisName(const TilingCase& tiling_case) const {
  // Outer axes and zT axes of the x and y groups, merged in loop order.
  std::vector<std::pair<int, std::string>> parts;
  for (size_t g = 0; g < groups_.size(); ++g) {
    int split = tiling_case.split[g];
    if (groups_[g].kind == GroupKind::kR || split < 0) continue;
    for (int a : groups_[g].axes) {
      if (a == split) {
        parts.emplace_back(a, nest_.axes[a].name + "T");
        break;
      }
      parts.emplace_back(a, nest_.axes[a].name);
    }
  }
  std::sort(parts.begin(), parts.end());
  std::string name;
  for (const auto& part : parts) name += part.second;
  return name;
}

std::vector<std::pair<std::string, int64_t>> TilingModel::TilingData(
    const TilingCase& tiling_case, const TilingPoint& point, const Evaluation& evaluation) const {
  std::vector<std::pair<std::string, int64_t>> fields = {{"block_dim", evaluation.block_dim},
                                                         {"ub_size", evaluation.ub_used},
                                                         {"tiling_key", tiling_case.key}};
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::string axis = SplitAxisName(tiling_case, g);
    if (!axis.empty()) fields.emplace_back(axis + "t_size", point.tiles[g]);
  }
  std::string block = BlockAxisName(tiling_case);
  if (!block.empty()) fields.emplace_back(block + "b_size", evaluation.tb_size);
  for (size_t b = 0; b < nest_.buffers.size(); ++b) {
    fields.emplace_back(nest_.buffers[b].name + "_size", evaluation.buffer_bytes[b]);
  }
  return fields;
}

std::vector<std::string> TilingModel::Violations(const TilingCase& tiling_case,
                                                 const TilingPoint& point,
                                                 const Evaluation& evaluation) const {
  std::vector<std::string> violations;
  if (evaluation.ub_used > platform_.ub_bytes) {
    violations.push_back("unified buffer: " + std::to_string(evaluation.ub_used) + " bytes > " +
                         std::to_string(platform_.ub_bytes) + " usable");
  }
  if (evaluation.block_dim < 1 || evaluation.block_dim > platform_.vector_cores) {
    violations.push_back("block_dim " + std::to_string(evaluation.block_dim) + " outside 1.." +
                         std::to_string(platform_.vector_cores));
  }
  if (evaluation.tb_size * evaluation.block_dim < evaluation.outer_tiles ||
      (evaluation.block_dim - 1) * evaluation.tb_size >= evaluation.outer_tiles) {
    violations.push_back("block split " + std::to_string(evaluation.block_dim) + " x " +
                         std::to_string(evaluation.tb_size) + " does not cover " +
                         std::to_string(evaluation.outer_tiles) + " tiles exactly");
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    int split = tiling_case.split[g];
    if (split < 0) continue;
    const LoopAxis& axis = nest_.axes[split];
    int64_t tile = point.tiles[g];
    if (tile < 1 || tile > axis.size) {
      violations.push_back(axis.name + "t_size " + std::to_string(tile) + " outside 1.." +
                           std::to_string(axis.size));
    } else if (tile != axis.size && tile % axis.align != 0) {
      violations.push_back(axis.name + "t_size " + std::to_string(tile) + " is not a multiple of " +
                           std::to_string(axis.align) + " (32-byte rows)");
    }
  }
  return violations;
}

}  // namespace tilesmith::costmodel::ascend
