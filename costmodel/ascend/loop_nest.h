// What Auto Schedule sees of an AscGraph once its sizes are bound: the loop axes (graph axes
// merged where every tensor is contiguous across them) in x/y/r groups, the tensors that
// live in the unified buffer, the nodes on each pipe, and which buffer holds which tensor.
// tiling.h prices a choice of tile and block sizes on it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ascgraph/graph.h"
#include "compiler/ascgraph/validate.h"
#include "costmodel/ascend/pipe_model.h"
#include "support/status.h"

namespace tilesmith::costmodel::ascend {

/// Axis groups of AutoFuse's tiling cases: x holds the axes outside a transpose's moved
/// axes, y the elementwise/broadcast axes, r the reduced axes. Each group splits one axis.
enum class GroupKind { kX, kY, kR };

/// "x", "y", "r".
std::string_view GroupName(GroupKind kind);

/// One loop of the schedule: a graph axis, or adjacent graph axes merged into one ("z0z1").
struct LoopAxis {
  std::string name;
  int64_t size = 1;
  GroupKind group = GroupKind::kY;
  std::vector<std::string> from;  // the graph axes merged into it, outer to inner
  /// A tile of this axis must be a multiple of `align` elements unless it is the whole
  /// axis: it is the contiguous (innermost) axis of a tensor that a Load or Store moves, or
  /// that has several rows in the buffer, and rows stay 32-byte aligned.
  int64_t align = 1;
  /// False where a tensor covers the axis only partly (concat inputs): it is loaded whole.
  bool splittable = true;
};

/// A tensor held in the unified buffer, described per loop axis.
struct UbTensor {
  std::string name;  // "<node>" or "<node>:<output>"
  int elem_bytes = 4;
  std::vector<int64_t> repeats;  // per loop axis; 1 where absent or broadcast
  int innermost = -1;            // loop axis padded to 32 bytes; -1 for a single element
  int64_t fixed_elements = 1;    // elements over axes outside the loop nest, loaded whole
};

/// Which pipe a node runs on.
enum class NodeRole { kLoad, kStore, kVector };

/// A node that costs something (Data and Output do not).
struct ScheduledNode {
  std::string name;
  std::string type;
  NodeRole role = NodeRole::kVector;
  /// Buffer tensors it touches; for Load and Store the moved tensor alone.
  std::vector<int> tensors;
  /// Runs once per iteration of the reduce loops (it sees unreduced r axes), not once per
  /// tile of the x/y groups.
  bool in_reduce_loop = false;
  VectorCost cost;  // vector nodes only
};

/// What kind of unified-buffer allocation a buffer is.
enum class BufferKind { kInQueue, kOutQueue, kCalc, kTmp };

/// "VECIN", "VECOUT", "CALC", "TMP".
std::string_view BufferKindName(BufferKind kind);

/// One allocation: its size is the largest tensor it ever holds, rounded up to 32 bytes,
/// times `count` (2 for the double-buffered input and output queues).
struct Buffer {
  std::string name;  // "q0", "b0", "tmp": the TilingData field is name + "_size"
  BufferKind kind = BufferKind::kCalc;
  int count = 1;
  std::vector<int> tensors;
};

/// The schedule-relevant facts of one graph under one set of size bindings.
struct LoopNest {
  std::string graph_name;
  std::vector<LoopAxis> axes;  // outer to inner
  std::vector<UbTensor> tensors;
  std::vector<ScheduledNode> nodes;  // in a topological order
  std::vector<Buffer> buffers;
  /// False when something after a reduction reuses the unreduced axes (softmax-like): the
  /// reduce axes must then be loaded whole.
  bool reduce_splittable = true;
  /// One line per op whose vector cost is an estimate rather than a published figure.
  std::vector<std::string> assumptions;
};

/// Analyses a validated HintGraph. Errors name the node: an ImplGraph, an op without a cost
/// estimate, a vector op reading a graph input without a Load, a Store of a global tensor.
Expected<LoopNest> BuildLoopNest(const ascgraph::BoundGraph& bound);

/// a·b and a+b of non-negative sizes, saturating at 2^62 so that huge products stay ordered.
int64_t SaturatingMul(int64_t a, int64_t b);
int64_t SaturatingAdd(int64_t a, int64_t b);

}  // namespace tilesmith::costmodel::ascend
