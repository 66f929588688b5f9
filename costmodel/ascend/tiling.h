// Auto Tiling's search space on a LoopNest: tiling cases (which axis each group splits),
// points (tile sizes and cores), and the price of a point under the public model: unified
// buffer bytes, per-pipe cycles and the objective. Pure functions of the nest and platform.
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ascgraph/graph.h"
#include "costmodel/ascend/loop_nest.h"
#include "costmodel/ascend/pipe_model.h"

namespace tilesmith::costmodel::ascend {

/// The loop axes of one group, outer to inner.
struct AxisGroup {
  GroupKind kind = GroupKind::kY;
  std::vector<int> axes;
};

/// One template: the loop axis each group splits (TileSplit z -> zT, zt), or -1 where the
/// group is loaded whole. `key` is the TilingData `tiling_key`: the case's index in
/// TilingModel::cases().
struct TilingCase {
  int64_t key = 0;
  std::vector<int> split;  // per group
};

/// The tile sizes an axis allows, smallest first: align, 2·align, …, then the whole axis
/// (unaligned tiles are allowed only when they cover the axis).
struct TileRange {
  int64_t size = 1;
  int64_t align = 1;

  int64_t Count() const;
  int64_t At(int64_t index) const;
  /// The index of the largest tile ≤ `tile` (0 when `tile` is below the smallest).
  int64_t IndexOf(int64_t tile) const;
};

/// Tile sizes per group (the value is ignored for groups the case loads whole) and the
/// cores asked for.
struct TilingPoint {
  std::vector<int64_t> tiles;
  int64_t block_dim = 1;

  auto operator<=>(const TilingPoint&) const = default;
};

/// What a point costs. `block_dim` is the cores really used: with `tb_size` =
/// ceil(outer_tiles / cores asked), ceil(outer_tiles / tb_size).
struct Evaluation {
  int64_t ub_used = 0;
  bool fits = false;
  std::vector<int64_t> buffer_bytes;  // one of each buffer, 32-byte rounded
  int64_t outer_tiles = 1;            // iterations of the merged outer tile axis (zT…)
  int64_t tb_size = 1;                // of those, per core (zTb)
  int64_t block_dim = 1;              // cores (zTB)
  int64_t reduce_loops = 1;           // iterations of the r group's outer loops per tile
  PipeCycles cycles;
  double objective = 0;
};

/// The search space and price list of one graph on one platform.
class TilingModel {
 public:
  TilingModel(LoopNest nest, ascgraph::Platform platform);

  const LoopNest& nest() const { return nest_; }
  const ascgraph::Platform& platform() const { return platform_; }
  const std::vector<AxisGroup>& groups() const { return groups_; }
  /// Every case: groups in x, y, r order, each group's split axis outer to inner.
  const std::vector<TilingCase>& cases() const { return cases_; }

  /// The tiles group `group` may take in `tiling_case` (a single whole-axis value when the
  /// case loads the group whole).
  TileRange Tiles(const TilingCase& tiling_case, size_t group) const;
  /// The smallest tiles of every group.
  TilingPoint SmallestPoint(const TilingCase& tiling_case) const;
  /// Unified-buffer bytes the tiles need (queues × 2, calc buffers, scratch).
  int64_t UbUsed(const TilingCase& tiling_case, std::span<const int64_t> tiles) const;
  /// Iterations of the merged outer tile axis for `tiles`.
  int64_t OuterTiles(const TilingCase& tiling_case, std::span<const int64_t> tiles) const;
  /// Iterations of the r group's outer loops (inside a core) for `tiles`.
  int64_t ReduceLoops(const TilingCase& tiling_case, std::span<const int64_t> tiles) const;
  /// The full price of a point.
  Evaluation Evaluate(const TilingCase& tiling_case, const TilingPoint& point) const;

  /// The tiled axis' name ("z0z1"), or "" for a group loaded whole.
  std::string SplitAxisName(const TilingCase& tiling_case, size_t group) const;
  /// The merged outer tile axis BlockSplit divides across cores ("z0z1T"), or "" when
  /// nothing is outside the tile.
  std::string BlockAxisName(const TilingCase& tiling_case) const;
  /// TilingData fields in a stable order: block_dim, ub_size (bytes the schedule
  /// allocates), tiling_key, `<axis>t_size` per split, `<block axis>b_size`, then
  /// `<buffer>_size` (bytes of one buffer) per buffer.
  std::vector<std::pair<std::string, int64_t>> TilingData(const TilingCase& tiling_case,
                                                          const TilingPoint& point,
                                                          const Evaluation& evaluation) const;
  /// Every constraint the point breaks, in words; empty when it is a valid schedule.
  std::vector<std::string> Violations(const TilingCase& tiling_case, const TilingPoint& point,
                                      const Evaluation& evaluation) const;

 private:
  std::vector<int64_t> Extents(const TilingCase& tiling_case, std::span<const int64_t> tiles) const;
  // Bytes of one tensor's tile as stored (rows padded to 32 bytes) and as moved.
  std::pair<int64_t, int64_t> TensorBytes(const UbTensor& tensor,
                                          std::span<const int64_t> extents) const;
  // One buffer of each kind, 32-byte rounded.
  std::vector<int64_t> BufferBytes(std::span<const int64_t> extents) const;
  // Their sum with each buffer's count (double-buffered queues count twice).
  int64_t TotalBytes(std::span<const int64_t> buffer_bytes) const;
  int64_t Loops(const TilingCase& tiling_case, std::span<const int64_t> tiles, bool reduce) const;

  LoopNest nest_;
  ascgraph::Platform platform_;
  std::vector<AxisGroup> groups_;
  std::vector<TilingCase> cases_;
};

}  // namespace tilesmith::costmodel::ascend
