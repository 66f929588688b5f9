#include "compiler/hlo/tiling.h"

#include <numeric>
#include <string>

namespace tilesmith::hlo {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t Product(std::span<const int64_t> values) {
  return std::accumulate(values.begin(), values.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace

Expected<PhysicalLayout> PhysicalLayout::Create(const Shape& shape) {
  if (!shape.IsArray()) {
    return InvalidArgument("physical layouts exist for arrays only, not " + ShapeToString(shape));
  }
  if (std::string problem = ValidateLayout(shape); !problem.empty()) {
    return InvalidArgument(problem);
  }
  PhysicalLayout result;
  int64_t rank = shape.rank();
  for (int64_t i = 0; i < rank; ++i) {
    if (shape.IsUnboundedDim(i)) {
      return InvalidArgument("dimension " + std::to_string(i) + " of " + ShapeToString(shape) +
                             " is unbounded; it has no physical size");
    }
  }
  result.logical_dims_.assign(shape.dims().begin(), shape.dims().end());
  const Layout& layout = shape.layout();
  result.physical_order_.resize(rank);
  std::vector<int64_t> dims(rank);
  for (int64_t i = 0; i < rank; ++i) {
    result.physical_order_[i] = layout.minor_to_major[rank - 1 - i];
    dims[i] = result.logical_dims_[result.physical_order_[i]];
  }

  for (const Tile& tile : layout.tiles) {
    Level level;
    int64_t k = static_cast<int64_t>(tile.dims.size());
    if (k > static_cast<int64_t>(dims.size())) {
      level.prepended_dims = k - static_cast<int64_t>(dims.size());
      dims.insert(dims.begin(), level.prepended_dims, 1);
    }
    level.first_covered = static_cast<int64_t>(dims.size()) - k;
    level.input_dims = dims;
    std::vector<int64_t> group_sizes;
    int64_t run = 1;
    for (int64_t j = 0; j < k; ++j) {
      level.group_of_dim.push_back(static_cast<int64_t>(level.tile_sizes.size()));
      run *= dims[level.first_covered + j];
      if (tile.dims[j] != Tile::kCombineDimension) {
        level.tile_sizes.push_back(tile.dims[j]);
        group_sizes.push_back(run);
        run = 1;
      }
    }
    std::vector<int64_t> next(dims.begin(), dims.begin() + level.first_covered);
    for (size_t g = 0; g < group_sizes.size(); ++g) {
      next.push_back(CeilDiv(group_sizes[g], level.tile_sizes[g]));
    }
    next.insert(next.end(), level.tile_sizes.begin(), level.tile_sizes.end());
    dims = std::move(next);
    result.levels_.push_back(std::move(level));
  }
  result.tiled_dims_ = dims;
  int64_t count = Product(dims);
  int64_t alignment = layout.tail_padding_alignment_in_elements;
  result.element_count_ = CeilDiv(count, alignment) * alignment;
  result.element_bits_ = layout.element_size_in_bits != 0
                             ? layout.element_size_in_bits
                             : DefaultStorageBits(shape.element_type());
  if (result.levels_.empty()) {
    result.untiled_strides_.assign(rank, 0);
    int64_t stride = 1;
    for (int64_t i = rank - 1; i >= 0; --i) {
      result.untiled_strides_[result.physical_order_[i]] = stride;
      stride *= dims[i];
    }
  }
  return result;
}

int64_t PhysicalLayout::byte_size() const { return CeilDiv(element_count_ * element_bits_, 8); }

int64_t PhysicalLayout::LinearIndex(std::span<const int64_t> index) const {
  if (!is_tiled()) {
    int64_t linear = 0;
    for (size_t d = 0; d < index.size(); ++d) linear += index[d] * untiled_strides_[d];
    return linear;
  }
  std::vector<int64_t> idx(physical_order_.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = index[physical_order_[i]];
  for (const Level& level : levels_) {
    idx.insert(idx.begin(), level.prepended_dims, 0);
    std::vector<int64_t> group_index(level.tile_sizes.size(), 0);
    for (size_t j = 0; j < level.group_of_dim.size(); ++j) {
      int64_t dim = level.first_covered + static_cast<int64_t>(j);
      int64_t& e = group_index[level.group_of_dim[j]];
      e = e * level.input_dims[dim] + idx[dim];
    }
    idx.resize(level.first_covered);
    for (size_t g = 0; g < group_index.size(); ++g) {
      idx.push_back(group_index[g] / level.tile_sizes[g]);
    }
    for (size_t g = 0; g < group_index.size(); ++g) {
      idx.push_back(group_index[g] % level.tile_sizes[g]);
    }
  }
  int64_t linear = 0;
  for (size_t i = 0; i < idx.size(); ++i) linear = linear * tiled_dims_[i] + idx[i];
  return linear;
}

std::optional<std::vector<int64_t>> PhysicalLayout::ElementAt(int64_t linear) const {
  if (linear < 0 || linear >= Product(tiled_dims_)) return std::nullopt;
  std::vector<int64_t> idx(tiled_dims_.size());
  for (int64_t i = static_cast<int64_t>(idx.size()) - 1; i >= 0; --i) {
    idx[i] = linear % tiled_dims_[i];
    linear /= tiled_dims_[i];
  }
  for (auto it = levels_.rbegin(); it != levels_.rend(); ++it) {
    const Level& level = *it;
    size_t groups = level.tile_sizes.size();
    std::vector<int64_t> group_index(groups);
    for (size_t g = 0; g < groups; ++g) {
      group_index[g] = idx[level.first_covered + g] * level.tile_sizes[g] +
                       idx[level.first_covered + groups + g];
    }
    std::vector<int64_t> covered(level.group_of_dim.size());
    for (int64_t j = static_cast<int64_t>(covered.size()) - 1; j >= 0; --j) {
      int64_t size = level.input_dims[level.first_covered + j];
      int64_t& e = group_index[level.group_of_dim[j]];
      covered[j] = e % size;
      e /= size;
    }
    // Whatever is left of a group index after peeling its dimensions lies past the
    // array's bound: a padding slot.
    for (int64_t rest : group_index) {
      if (rest != 0) return std::nullopt;
    }
    idx.resize(level.first_covered);
    idx.insert(idx.end(), covered.begin(), covered.end());
    idx.erase(idx.begin(), idx.begin() + level.prepended_dims);
  }
  std::vector<int64_t> logical(logical_dims_.size());
  for (size_t i = 0; i < logical.size(); ++i) logical[physical_order_[i]] = idx[i];
  return logical;
}

bool PhysicalLayout::is_row_major() const {
  if (is_tiled() || element_count_ != Product(logical_dims_)) return false;
  for (size_t i = 0; i < physical_order_.size(); ++i) {
    if (physical_order_[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<int64_t> PhysicalLayout::SlotOfEveryElement() const {
  int64_t count = Product(logical_dims_);
  std::vector<int64_t> slots(count);
  if (count == 0) return slots;
  std::vector<int64_t> index(logical_dims_.size(), 0);
  int64_t rank = static_cast<int64_t>(logical_dims_.size());
  for (int64_t n = 0; n < count; ++n) {
    slots[n] = LinearIndex(index);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < logical_dims_[d]) break;
      index[d] = 0;
    }
  }
  return slots;
}

}  // namespace tilesmith::hlo
