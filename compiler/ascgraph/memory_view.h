// How a tensor's repeats and strides place it in memory, in the terms of tilesmith's
// layouts: a buffer with logical dims (padded where the strides leave gaps) and a
// minor_to_major order. Graph inputs are read through such a buffer; graph outputs are
// written with its layout.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "support/status.h"

namespace tilesmith::ascgraph {

/// The buffer behind a strided tensor of n dims.
struct MemoryView {
  /// Per tensor dim: read with stride 0 although its repeats exceed 1 (a broadcast view);
  /// such dims are not in the buffer.
  std::vector<bool> broadcast;
  /// The buffer's dims: the tensor dims without the broadcast ones, in order, each as
  /// large as the stride of the next more major dim implies; then, when the innermost
  /// stride is k > 1, one more dim of size k for the elements skipped in between.
  std::vector<int64_t> buffer_dims;
  /// Layout of the buffer, minor to major.
  std::vector<int64_t> minor_to_major;
  /// True when the buffer has the extra innermost dim.
  bool element_dim = false;

  /// The buffer is exactly the tensor: no padding, no broadcast, no skipped elements.
  bool IsDense(std::span<const int64_t> repeats) const;
  /// The layout is the default (major-to-minor in dim order).
  bool HasDefaultLayout() const;
};

/// Analyses repeats/strides (equal lengths, repeats >= 1, strides >= 0). Dims of size 1
/// may have any stride. Fails with kUnimplemented when the strides overlap or do not
/// nest (a dim's stride is not a multiple of the next inner one).
Expected<MemoryView> AnalyzeStrides(std::span<const int64_t> repeats,
                                    std::span<const int64_t> strides);

}  // namespace tilesmith::ascgraph
