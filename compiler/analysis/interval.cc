#include "compiler/analysis/interval.h"

namespace tilesmith::analysis {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

}  // namespace

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return a < 0 ? kMin : kMax;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t product;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) != (b < 0) ? kMin : kMax;
}

int64_t Interval::NumElements() const {
  if (IsEmpty()) return 0;
  int64_t difference;
  if (__builtin_sub_overflow(upper, lower, &difference)) return kMax;
  return SaturatingAdd(difference, 1);
}

Interval Interval::Union(const Interval& other) const {
  if (IsEmpty()) return other;
  if (other.IsEmpty()) return *this;
  return {std::min(lower, other.lower), std::max(upper, other.upper)};
}

Interval Interval::operator+(const Interval& other) const {
  if (IsEmpty() || other.IsEmpty()) return {0, -1};
  return {SaturatingAdd(lower, other.lower), SaturatingAdd(upper, other.upper)};
}

Interval Interval::operator*(int64_t factor) const {
  if (IsEmpty()) return *this;
  int64_t a = SaturatingMul(lower, factor);
  int64_t b = SaturatingMul(upper, factor);
  return {std::min(a, b), std::max(a, b)};
}

Interval Interval::FloorDiv(int64_t divisor) const {
  if (IsEmpty()) return *this;
  return {FloorDivide(lower, divisor), FloorDivide(upper, divisor)};
}

std::string Interval::ToString() const {
  return "[" + std::to_string(lower) + ", " + std::to_string(upper) + "]";
}

std::vector<Interval> RangesForSizes(std::span<const int64_t> sizes) {
  std::vector<Interval> ranges;
  ranges.reserve(sizes.size());
  for (int64_t size : sizes) ranges.push_back(Interval::ForSize(size));
  return ranges;
}

}  // namespace tilesmith::analysis
