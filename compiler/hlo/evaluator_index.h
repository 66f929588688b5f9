// Index arithmetic shared by the structural ops of the evaluator: row-major strides, walks
// over boxes of elements addressed in two arrays at once, and element copies by byte width.
// Literal storage is logical row-major with a fixed byte width per element, so data movement
// never needs to know the element type. Private to compiler/hlo.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/hlo/evaluator_internal.h"

namespace tilesmith::hlo::eval {

/// Row-major strides, in elements, of an array with `dims`.
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims);

/// A box of elements visited in row-major order and addressed in two arrays, `a` and `b`,
/// through per-dimension strides in elements (0 repeats an element, negative walks back).
struct Walk {
  std::vector<int64_t> dims;
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;
  int64_t a_offset = 0;
  int64_t b_offset = 0;

  /// Appends a dimension, more minor than the ones before.
  void Add(int64_t size, int64_t a_stride, int64_t b_stride) {
    dims.push_back(size);
    a_strides.push_back(a_stride);
    b_strides.push_back(b_stride);
  }
};

/// Buffers of `ForEachRow`, kept by callers that walk many small boxes (one per output
/// element) so that the walks allocate nothing.
struct WalkScratch {
  std::vector<int64_t> dims;
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;
  std::vector<int64_t> index;
};

/// Calls `row(a, b, count, a_stride, b_stride)` for each innermost row of `walk`, in
/// row-major order; element i of a row is at a + i * a_stride and b + i * b_stride. Size-1
/// dimensions are dropped and dimensions contiguous in both arrays merged first, so rows
/// are as long as the layout allows. A rank-0 walk is one row of one element; an empty box
/// has no rows.
template <typename RowFn>
void ForEachRow(const Walk& walk, WalkScratch& scratch, RowFn&& row) {
  std::vector<int64_t>& dims = scratch.dims;
  std::vector<int64_t>& a_strides = scratch.a_strides;
  std::vector<int64_t>& b_strides = scratch.b_strides;
  dims.clear();
  a_strides.clear();
  b_strides.clear();
  for (size_t d = 0; d < walk.dims.size(); ++d) {
    int64_t size = walk.dims[d];
    if (size == 0) return;
    if (size == 1) continue;
    if (!dims.empty() && a_strides.back() == walk.a_strides[d] * size &&
        b_strides.back() == walk.b_strides[d] * size) {
      dims.back() *= size;
      a_strides.back() = walk.a_strides[d];
      b_strides.back() = walk.b_strides[d];
      continue;
    }
    dims.push_back(size);
    a_strides.push_back(walk.a_strides[d]);
    b_strides.push_back(walk.b_strides[d]);
  }
  if (dims.empty()) {
    row(walk.a_offset, walk.b_offset, int64_t{1}, int64_t{0}, int64_t{0});
    return;
  }
  const int64_t outer = static_cast<int64_t>(dims.size()) - 1;
  const int64_t count = dims.back();
  const int64_t a_inner = a_strides.back();
  const int64_t b_inner = b_strides.back();
  std::vector<int64_t>& index = scratch.index;
  index.assign(outer, 0);
  int64_t a = walk.a_offset;
  int64_t b = walk.b_offset;
  while (true) {
    row(a, b, count, a_inner, b_inner);
    int64_t d = outer - 1;
    for (; d >= 0; --d) {
      a += a_strides[d];
      b += b_strides[d];
      if (++index[d] < dims[d]) break;
      a -= a_strides[d] * dims[d];
      b -= b_strides[d] * dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

template <typename RowFn>
void ForEachRow(const Walk& walk, RowFn&& row) {
  WalkScratch scratch;
  ForEachRow(walk, scratch, row);
}

/// Copies `count` elements of `bytes` bytes each from src[i * src_stride] to
/// dst[i * dst_stride] (strides in elements).
void CopyRow(uint8_t* dst, int64_t dst_stride, const uint8_t* src, int64_t src_stride,
             int64_t count, int64_t bytes);

/// Copies the box of `walk` from `src` (addressed as b) into `dst` (addressed as a); both
/// literals must have elements of the same byte width. `scratch` may be given when copying
/// many small boxes.
void CopyBox(const Walk& walk, Literal& dst, const Literal& src, WalkScratch* scratch = nullptr);

/// Advances a row-major multi-index over `dims`; false once it wraps around to all zeros.
bool NextIndex(std::span<int64_t> index, std::span<const int64_t> dims);

/// Element i of an integer literal as an index. Unsigned values above INT64_MAX saturate,
/// so that clamping them to a dimension keeps them at the top.
int64_t ReadIndex(const Literal& literal, int64_t i);

/// Copies the contents of `value` into `out`, which has the same element types and counts
/// (tuples recursively); layouts and dims may differ since storage is logical row-major.
Status CopyInto(const Literal& value, Literal& out);

/// A copy of `value` with exactly `shape` (which may differ from value's shape in layouts
/// or, for arrays, in dims with the same element count), allocated through `context`.
Expected<Literal> CopyAs(const Literal& value, const Shape& shape, const Context& context);

/// `HloOpcodeName` of the instruction's opcode, as a std::string for messages.
std::string OpName(const HloInstruction& instruction);

}  // namespace tilesmith::hlo::eval
