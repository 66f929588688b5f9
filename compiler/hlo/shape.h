// Shapes of HLO values: arrays (element type, dimensions, dynamic bounds, layout), tuples
// and tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/layout.h"
#include "compiler/hlo/primitive_type.h"
#include "support/boxed.h"

namespace tilesmith::hlo {

/// A value's shape. Arrays always carry a layout (the default one when the text gave none),
/// so that printing is canonical and physical sizes are always defined.
class Shape {
 public:
  /// Size recorded for an unbounded dynamic dimension (`?`).
  static constexpr int64_t kUnboundedSize = INT64_MIN;

  Shape() = default;
  /// An array with the default layout. Dimensions in increasing dimension-number order.
  static Shape Array(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Array(PrimitiveType type, std::vector<int64_t> dims, Layout layout);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Scalar(PrimitiveType type) { return Array(type, {}); }

  PrimitiveType element_type() const { return element_type_; }
  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  std::span<const int64_t> dims() const { return dims_; }
  int64_t dim(int64_t i) const { return dims_[i]; }
  /// True for `<=n` (bounded; `dim()` is the bound) and `?` (unbounded) dimensions.
  bool IsDynamicDim(int64_t i) const { return dynamic_ && (*dynamic_)[i]; }
  bool IsUnboundedDim(int64_t i) const { return dims_[i] == kUnboundedSize; }
  bool IsStatic() const;
  const Layout& layout() const { return layout_ ? *layout_ : DefaultLayout(rank()); }
  /// The layout to change; a layout shared with other shapes is copied first.
  Layout& mutable_layout();
  void set_layout(Layout layout);
  /// Shares `layout`, which must not change afterwards, instead of holding a copy: readers
  /// give every shape with the same layout text one layout.
  void set_shared_layout(std::shared_ptr<const Layout> layout);
  void set_element_type(PrimitiveType type) { element_type_ = type; }
  void set_dim(int64_t i, int64_t size) { dims_[i] = size; }
  /// Marks dimension i dynamic (bounded by its size, or unbounded if kUnboundedSize).
  void set_dynamic_dim(int64_t i, bool dynamic);

  std::span<const Shape> tuple_elements() const { return tuple_; }
  const Shape& tuple_element(int64_t i) const { return tuple_[i]; }
  std::vector<Shape>& mutable_tuple_elements() { return tuple_; }

  /// Number of logical elements (product of dims, bounds for bounded dynamic dims; 1 for
  /// a scalar), or -1 if a dimension is unbounded.
  int64_t ElementCount() const;

  /// Same type, dims and dynamic markers; layouts may differ (recursively for tuples).
  bool EqualsIgnoringLayout(const Shape& other) const;
  friend bool operator==(const Shape& a, const Shape& b);

 private:
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  bool layout_owned_ = false;  // layout_ was made by this class (not set_shared_layout)
  std::vector<int64_t> dims_;
  // The default layout of a rank is shared (`DefaultLayout`), not stored: most arrays have
  // it, and a shape stays small (instructions hold one each).
  static const Layout& DefaultLayout(int64_t rank);
  static bool SharesDefaultLayout(const Layout& layout, size_t rank);

  Boxed<std::vector<bool>> dynamic_;  // absent when every dimension is static
  // Absent when the layout is the default for the rank; shared by copies of a shape (and
  // copied before a change).
  std::shared_ptr<const Layout> layout_;
  std::vector<Shape> tuple_;
};

/// Canonical text: `f32[3,5]{1,0:T(2,2)}`, `(f32[], s32[4]{0})`, `token[]`. Array layouts
/// are printed for rank >= 1, and for scalars only when they carry fields.
std::string ShapeToString(const Shape& shape);
/// Text of a shape without its layout (`f32[3,5]`).
std::string ShapeToStringNoLayout(const Shape& shape);
/// Text of a layout, `{1,0:T(2,2)E(4)}`.
std::string LayoutToString(const Layout& layout);

/// Checks a layout against its array shape: minor_to_major is a permutation of the
/// dimensions, tiles are well formed. Returns a message naming the problem, or "".
std::string ValidateLayout(const Shape& shape);

}  // namespace tilesmith::hlo
