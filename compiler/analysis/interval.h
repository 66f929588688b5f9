// Closed integer intervals: the ranges of indexing-map variables and the bounds of
// constraints, with the interval arithmetic range analysis needs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace tilesmith::analysis {

/// `[lower, upper]`, both inclusive. Empty when lower > upper (a zero-sized dimension is
/// `[0, -1]`). Arithmetic saturates at the int64 limits instead of wrapping, so that a
/// bound that overflows stays a safe over-approximation.
struct Interval {
  int64_t lower = 0;
  int64_t upper = -1;

  /// The range of an index into a dimension of `size` elements: `[0, size - 1]`.
  static Interval ForSize(int64_t size) { return {0, size - 1}; }
  static Interval Point(int64_t value) { return {value, value}; }

  bool IsEmpty() const { return lower > upper; }
  bool IsPoint() const { return lower == upper; }
  bool Contains(int64_t value) const { return lower <= value && value <= upper; }
  /// True if every value of `other` lies in this interval (an empty `other` always does).
  bool Contains(const Interval& other) const {
    return other.IsEmpty() || (lower <= other.lower && other.upper <= upper);
  }
  /// Number of values; 0 when empty (saturates).
  int64_t NumElements() const;

  Interval Intersect(const Interval& other) const {
    return {std::max(lower, other.lower), std::min(upper, other.upper)};
  }
  /// The smallest interval holding both (the hull, not a set union).
  Interval Union(const Interval& other) const;

  Interval operator+(const Interval& other) const;
  /// Multiplication by a constant (negative factors swap the bounds).
  Interval operator*(int64_t factor) const;
  /// Floor division by a positive constant.
  Interval FloorDiv(int64_t divisor) const;

  /// `[lower, upper]`.
  std::string ToString() const;

  friend bool operator==(const Interval&, const Interval&) = default;
};

/// `[0, size - 1]` for each of `sizes`: the domain of indices into an array of that shape.
std::vector<Interval> RangesForSizes(std::span<const int64_t> sizes);

/// Adds with saturation at the int64 limits.
int64_t SaturatingAdd(int64_t a, int64_t b);
/// Multiplies with saturation at the int64 limits.
int64_t SaturatingMul(int64_t a, int64_t b);

/// Division rounding toward negative infinity; `divisor` > 0.
inline int64_t FloorDivide(int64_t value, int64_t divisor) {
  int64_t q = value / divisor;
  return (value % divisor != 0 && value < 0) ? q - 1 : q;
}

/// The remainder matching `FloorDivide`: always in `[0, divisor)`; `divisor` > 0.
inline int64_t FloorModulo(int64_t value, int64_t divisor) {
  int64_t r = value % divisor;
  return r < 0 ? r + divisor : r;
}

/// Division rounding toward positive infinity; `divisor` > 0.
inline int64_t CeilDivide(int64_t value, int64_t divisor) { return -FloorDivide(-value, divisor); }

}  // namespace tilesmith::analysis
