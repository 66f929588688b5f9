// Physical layout of an array: dimension order, tiles, padding, element size, memory
// space, and the rarer fields XLA's layout grammar has (kept and printed, not interpreted).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/hlo/primitive_type.h"

namespace tilesmith::hlo {

class Shape;

/// One level of tiling, `T(8,128)`. Applies to the most minor dimensions of the shape it
/// tiles. An entry of `kCombineDimension` (written `*`) folds that dimension into the next
/// more minor one before tiling.
struct Tile {
  static constexpr int64_t kCombineDimension = -1;
  std::vector<int64_t> dims;
  friend bool operator==(const Tile&, const Tile&) = default;
};

/// `SC(dim:i,j,…)`: a split of one dimension into memory regions at the given indices.
struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  friend bool operator==(const SplitConfig&, const SplitConfig&) = default;
};

/// A layout `{minor_to_major:fields}`. Value type; equality compares every field.
struct Layout {
  /// Dimension numbers, most minor (fastest varying in memory) first.
  std::vector<int64_t> minor_to_major;
  /// `D(…)` sparse dimension level types, kept as written ("D", "C", "S+", "C~").
  std::vector<std::string> dim_level_types;
  std::vector<Tile> tiles;
  /// `L(n)`: after tiling the element count is rounded up to a multiple of this.
  int64_t tail_padding_alignment_in_elements = 1;
  /// `#(type)` and `*(type)`: index and pointer types of sparse arrays.
  PrimitiveType index_primitive_type = PrimitiveType::kInvalid;
  PrimitiveType pointer_primitive_type = PrimitiveType::kInvalid;
  /// `E(n)`: bits per element in memory; 0 means the type's default storage width.
  int64_t element_size_in_bits = 0;
  /// `S(n)`: memory space; 0 is device memory, 5 host memory.
  int64_t memory_space = 0;
  std::vector<SplitConfig> split_configs;
  /// `P(shape)`: the physical shape of a sparse array, if given.
  std::shared_ptr<const Shape> physical_shape;
  /// `M(n)`: bytes of dynamic-shape metadata before the data.
  int64_t dynamic_shape_metadata_prefix_bytes = 0;

  /// The default layout of a rank-`rank` array: `{rank-1,…,0}`, no other fields.
  static Layout Default(int64_t rank);

  /// True if only minor_to_major is set (no tiles or other fields).
  bool HasOnlyMinorToMajor() const;
  /// True for `{rank-1,…,0}` with no other fields.
  bool IsDefault() const;

  friend bool operator==(const Layout& a, const Layout& b);
};

}  // namespace tilesmith::hlo
