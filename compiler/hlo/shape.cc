#include "compiler/hlo/shape.h"

#include <algorithm>
#include <numeric>

namespace tilesmith::hlo {

Layout Layout::Default(int64_t rank) {
  Layout layout;
  layout.minor_to_major.resize(rank);
  for (int64_t i = 0; i < rank; ++i) layout.minor_to_major[i] = rank - 1 - i;
  return layout;
}

bool Layout::HasOnlyMinorToMajor() const {
  return dim_level_types.empty() && tiles.empty() && tail_padding_alignment_in_elements == 1 &&
         index_primitive_type == PrimitiveType::kInvalid &&
         pointer_primitive_type == PrimitiveType::kInvalid && element_size_in_bits == 0 &&
         memory_space == 0 && split_configs.empty() && physical_shape == nullptr &&
         dynamic_shape_metadata_prefix_bytes == 0;
}

bool Layout::IsDefault() const {
  if (!HasOnlyMinorToMajor()) return false;
  int64_t rank = static_cast<int64_t>(minor_to_major.size());
  for (int64_t i = 0; i < rank; ++i) {
    if (minor_to_major[i] != rank - 1 - i) return false;
  }
  return true;
}

bool operator==(const Layout& a, const Layout& b) {
  if (a.minor_to_major != b.minor_to_major || a.dim_level_types != b.dim_level_types ||
      a.tiles != b.tiles ||
      a.tail_padding_alignment_in_elements != b.tail_padding_alignment_in_elements ||
      a.index_primitive_type != b.index_primitive_type ||
      a.pointer_primitive_type != b.pointer_primitive_type ||
      a.element_size_in_bits != b.element_size_in_bits || a.memory_space != b.memory_space ||
      a.split_configs != b.split_configs ||
      a.dynamic_shape_metadata_prefix_bytes != b.dynamic_shape_metadata_prefix_bytes) {
    return false;
  }
  if ((a.physical_shape == nullptr) != (b.physical_shape == nullptr)) return false;
  return a.physical_shape == nullptr || *a.physical_shape == *b.physical_shape;
}

namespace {

// Ranks whose default layout is shared rather than stored in each shape.
constexpr size_t kSharedDefaultRanks = 129;

}  // namespace

const Layout& Shape::DefaultLayout(int64_t rank) {
  static const std::vector<Layout> defaults = [] {
    std::vector<Layout> layouts;
    layouts.reserve(kSharedDefaultRanks);
    for (size_t r = 0; r < kSharedDefaultRanks; ++r) {
      layouts.push_back(Layout::Default(static_cast<int64_t>(r)));
    }
    return layouts;
  }();
  return defaults[static_cast<size_t>(rank)];
}

bool Shape::SharesDefaultLayout(const Layout& layout, size_t rank) {
  return rank < kSharedDefaultRanks && layout.minor_to_major.size() == rank && layout.IsDefault();
}

Layout& Shape::mutable_layout() {
  if (!layout_owned_ || layout_.use_count() != 1) {
    layout_ = std::make_shared<Layout>(layout());
    layout_owned_ = true;
  }
  // Made here as a non-const Layout, and held by this shape alone.
  return const_cast<Layout&>(*layout_);
}

void Shape::set_layout(Layout layout) {
  if (SharesDefaultLayout(layout, dims_.size())) {
    layout_.reset();
  } else {
    layout_ = std::make_shared<Layout>(std::move(layout));
  }
  layout_owned_ = layout_ != nullptr;
}

void Shape::set_shared_layout(std::shared_ptr<const Layout> layout) {
  layout_ = std::move(layout);
  layout_owned_ = false;
}

Shape Shape::Array(PrimitiveType type, std::vector<int64_t> dims) {
  Shape shape;
  shape.element_type_ = type;
  shape.dims_ = std::move(dims);
  if (shape.dims_.size() >= kSharedDefaultRanks) {
    shape.set_layout(Layout::Default(static_cast<int64_t>(shape.dims_.size())));
  }
  return shape;
}

Shape Shape::Array(PrimitiveType type, std::vector<int64_t> dims, Layout layout) {
  Shape shape;
  shape.element_type_ = type;
  shape.dims_ = std::move(dims);
  shape.set_layout(std::move(layout));
  return shape;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.element_type_ = PrimitiveType::kTuple;
  shape.tuple_ = std::move(elements);
  return shape;
}

Shape Shape::Token() {
  Shape shape;
  shape.element_type_ = PrimitiveType::kToken;
  return shape;
}

bool Shape::IsStatic() const {
  if (IsTuple()) {
    return std::all_of(tuple_.begin(), tuple_.end(), [](const Shape& s) { return s.IsStatic(); });
  }
  return !dynamic_ || std::none_of(dynamic_->begin(), dynamic_->end(), [](bool d) { return d; });
}

void Shape::set_dynamic_dim(int64_t i, bool dynamic) {
  if (!dynamic_) {
    if (!dynamic) return;
    dynamic_.emplace(dims_.size(), false);
  }
  (*dynamic_)[i] = dynamic;
  if (std::none_of(dynamic_->begin(), dynamic_->end(), [](bool d) { return d; })) dynamic_.reset();
}

int64_t Shape::ElementCount() const {
  if (std::any_of(dims_.begin(), dims_.end(), [](int64_t d) { return d == kUnboundedSize; })) {
    return -1;
  }
  return std::accumulate(dims_.begin(), dims_.end(), int64_t{1}, std::multiplies<>());
}

bool Shape::EqualsIgnoringLayout(const Shape& other) const {
  if (element_type_ != other.element_type_) return false;
  if (IsTuple()) {
    if (tuple_.size() != other.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].EqualsIgnoringLayout(other.tuple_[i])) return false;
    }
    return true;
  }
  return dims_ == other.dims_ && dynamic_ == other.dynamic_;
}

bool operator==(const Shape& a, const Shape& b) {
  if (!a.EqualsIgnoringLayout(b)) return false;
  if (a.IsTuple()) {
    for (size_t i = 0; i < a.tuple_.size(); ++i) {
      if (!(a.tuple_[i] == b.tuple_[i])) return false;
    }
    return true;
  }
  return a.layout() == b.layout();
}

namespace {

void AppendJoined(std::string& out, std::span<const int64_t> values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
}

void AppendShape(std::string& out, const Shape& shape, bool with_layout);

void AppendLayout(std::string& out, const Layout& layout) {
  out += '{';
  AppendJoined(out, layout.minor_to_major);
  if (!layout.HasOnlyMinorToMajor()) {
    out += ':';
    if (!layout.dim_level_types.empty()) {
      out += "D(";
      for (size_t i = 0; i < layout.dim_level_types.size(); ++i) {
        if (i > 0) out += ',';
        out += layout.dim_level_types[i];
      }
      out += ')';
    }
    if (!layout.tiles.empty()) {
      out += 'T';
      for (const Tile& tile : layout.tiles) {
        out += '(';
        for (size_t i = 0; i < tile.dims.size(); ++i) {
          if (i > 0) out += ',';
          if (tile.dims[i] == Tile::kCombineDimension) {
            out += '*';
          } else {
            out += std::to_string(tile.dims[i]);
          }
        }
        out += ')';
      }
    }
    if (layout.tail_padding_alignment_in_elements != 1) {
      out += "L(" + std::to_string(layout.tail_padding_alignment_in_elements) + ")";
    }
    if (layout.index_primitive_type != PrimitiveType::kInvalid) {
      out += "#(" + std::string(PrimitiveTypeName(layout.index_primitive_type)) + ")";
    }
    if (layout.pointer_primitive_type != PrimitiveType::kInvalid) {
      out += "*(" + std::string(PrimitiveTypeName(layout.pointer_primitive_type)) + ")";
    }
    if (layout.element_size_in_bits != 0) {
      out += "E(" + std::to_string(layout.element_size_in_bits) + ")";
    }
    if (layout.memory_space != 0) out += "S(" + std::to_string(layout.memory_space) + ")";
    for (const SplitConfig& split : layout.split_configs) {
      out += "SC(" + std::to_string(split.dimension) + ":";
      AppendJoined(out, split.split_indices);
      out += ')';
    }
    if (layout.physical_shape != nullptr) {
      out += "P(";
      AppendShape(out, *layout.physical_shape, /*with_layout=*/true);
      out += ')';
    }
    if (layout.dynamic_shape_metadata_prefix_bytes != 0) {
      out += "M(" + std::to_string(layout.dynamic_shape_metadata_prefix_bytes) + ")";
    }
  }
  out += '}';
}

void AppendShape(std::string& out, const Shape& shape, bool with_layout) {
  if (shape.IsTuple()) {
    out += '(';
    for (int64_t i = 0; i < static_cast<int64_t>(shape.tuple_elements().size()); ++i) {
      if (i > 0) out += ", ";
      AppendShape(out, shape.tuple_element(i), with_layout);
    }
    out += ')';
    return;
  }
  out += PrimitiveTypeName(shape.element_type());
  out += '[';
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (i > 0) out += ',';
    if (shape.IsUnboundedDim(i)) {
      out += '?';
      continue;
    }
    if (shape.IsDynamicDim(i)) out += "<=";
    out += std::to_string(shape.dim(i));
  }
  out += ']';
  if (with_layout && shape.IsArray() &&
      (shape.rank() > 0 || !shape.layout().HasOnlyMinorToMajor())) {
    AppendLayout(out, shape.layout());
  }
}

}  // namespace

std::string ShapeToString(const Shape& shape) {
  std::string out;
  AppendShape(out, shape, /*with_layout=*/true);
  return out;
}

std::string ShapeToStringNoLayout(const Shape& shape) {
  std::string out;
  AppendShape(out, shape, /*with_layout=*/false);
  return out;
}

std::string LayoutToString(const Layout& layout) {
  std::string out;
  AppendLayout(out, layout);
  return out;
}

std::string ValidateLayout(const Shape& shape) {
  if (!shape.IsArray()) return "";
  const Layout& layout = shape.layout();
  int64_t rank = shape.rank();
  if (static_cast<int64_t>(layout.minor_to_major.size()) != rank) {
    return "layout " + LayoutToString(layout) + " has " +
           std::to_string(layout.minor_to_major.size()) + " dimensions but the shape has " +
           std::to_string(rank);
  }
  std::vector<bool> seen(rank, false);
  for (int64_t d : layout.minor_to_major) {
    if (d < 0 || d >= rank || seen[d]) {
      return "minor_to_major " + LayoutToString(layout) + " is not a permutation of 0.." +
             std::to_string(rank - 1);
    }
    seen[d] = true;
  }
  for (const Tile& tile : layout.tiles) {
    if (tile.dims.empty()) return "empty tile in layout " + LayoutToString(layout);
    for (size_t i = 0; i < tile.dims.size(); ++i) {
      int64_t t = tile.dims[i];
      if (t == Tile::kCombineDimension) {
        if (i + 1 == tile.dims.size()) {
          return "tile dimension '*' cannot be the most minor in " + LayoutToString(layout);
        }
        continue;
      }
      if (t <= 0) return "tile sizes must be positive in " + LayoutToString(layout);
    }
  }
  if (layout.tail_padding_alignment_in_elements <= 0) {
    return "L(n) needs n >= 1 in " + LayoutToString(layout);
  }
  if (layout.element_size_in_bits < 0 || layout.element_size_in_bits > 128) {
    return "E(n) needs 0 <= n <= 128 in " + LayoutToString(layout);
  }
  if (layout.element_size_in_bits != 0 &&
      layout.element_size_in_bits < BitWidth(shape.element_type())) {
    return "E(" + std::to_string(layout.element_size_in_bits) + ") is narrower than " +
           std::string(PrimitiveTypeName(shape.element_type())) + "'s " +
           std::to_string(BitWidth(shape.element_type())) + " bits";
  }
  if (layout.memory_space < 0) return "S(n) needs n >= 0";
  for (int64_t i = 0; i < rank; ++i) {
    if (shape.IsUnboundedDim(i)) continue;
    if (shape.dim(i) < 0) return "dimension sizes must be >= 0";
  }
  return "";
}

}  // namespace tilesmith::hlo
