// Where each element of an array lives in memory under its layout: dimension order,
// multi-level tiles with combined (`*`) dimensions, tail padding and element size.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "compiler/hlo/shape.h"
#include "support/status.h"

namespace tilesmith::hlo {

/// The physical arrangement of one array shape, precomputed so that index arithmetic is
/// cheap. Built from a static array shape; dynamic dimensions use their bounds.
class PhysicalLayout {
 public:
  /// Fails for tuples, tokens, unbounded dimensions and invalid layouts.
  static Expected<PhysicalLayout> Create(const Shape& shape);

  /// Dimensions of the fully tiled shape, major to minor: untiled leading dims, then tile
  /// counts, then tile sizes, per tiling level (`f32[3,5]{1,0:T(2,2)}` -> 2,3,2,2).
  std::span<const int64_t> tiled_dims() const { return tiled_dims_; }
  /// Element slots in memory, padding included, rounded up to `L(n)`.
  int64_t element_count() const { return element_count_; }
  /// Bits per element slot: `E(n)` if set, else the type's storage width.
  int64_t element_bits() const { return element_bits_; }
  /// ceil(element_count * element_bits / 8).
  int64_t byte_size() const;
  /// True when the layout has tiles; otherwise indexing is a plain strided permutation.
  bool is_tiled() const { return !levels_.empty(); }
  /// True when element i (row-major logical order) sits in slot i: no tiles, dimensions in
  /// order, no padding. Whole arrays then move between the orders as they are.
  bool is_row_major() const;

  /// Slot of the element at the logical multi-index `index` (one entry per dimension,
  /// each within bounds). `f32[3,5]{1,0:T(2,2)}` at (2,3) -> 17.
  int64_t LinearIndex(std::span<const int64_t> index) const;

  /// The logical element stored at slot `linear`, or nullopt if that slot is padding.
  std::optional<std::vector<int64_t>> ElementAt(int64_t linear) const;

  /// For each logical element in row-major (dimension-order) iteration, its slot. Used to
  /// move whole arrays between the logical and physical orders.
  std::vector<int64_t> SlotOfEveryElement() const;

 private:
  struct Level {
    int64_t prepended_dims = 0;  // leading size-1 dims added so the tile fits the rank
    int64_t first_covered = 0;   // first dimension (after prepending) the tile covers
    // For each covered dim: index into `tile_sizes` of the group it joins (groups are runs
    // of `*` entries ending in a sized entry).
    std::vector<int64_t> group_of_dim;
    std::vector<int64_t> tile_sizes;
    std::vector<int64_t> input_dims;  // dims this level receives
  };

  std::vector<int64_t> logical_dims_;
  std::vector<int64_t> physical_order_;  // logical dim numbers, major to minor
  std::vector<Level> levels_;
  std::vector<int64_t> tiled_dims_;
  std::vector<int64_t> untiled_strides_;  // per logical dim, when !is_tiled()
  int64_t element_count_ = 0;
  int64_t element_bits_ = 0;
};

}  // namespace tilesmith::hlo
