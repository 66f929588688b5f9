// Checking what an AscGraph request means: axes, sizes, edges, ops and indices. Every error
// names the node (or axis) and the field, e.g.
//   node 'abs': output 0 axis_ids[2]: unknown axis id 7
//   node 'add': input 1 (from 'brc' output 0): repeats 8 on axis 'z1' where the output has 4
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/ascgraph/graph.h"
#include "compiler/ascgraph/ops.h"
#include "support/status.h"

namespace tilesmith::ascgraph {

/// A validated request with every size evaluated: what the lowering and the Ascend
/// scheduler read. Borrows the request's graph, which must outlive it.
struct BoundGraph {
  const Graph* graph = nullptr;
  /// Every node once, each after the nodes it reads.
  std::vector<const Node*> order;
  /// The op of each node (by name).
  std::map<std::string, const OpInfo*, std::less<>> ops;
  /// Size of each axis, by id.
  std::map<int64_t, int64_t> axis_sizes;
  /// The evaluated output tensors of each node (by name).
  std::map<std::string, std::vector<ConcreteTensor>, std::less<>> outputs;
  /// Data nodes by their `index`, and Output nodes by theirs.
  std::vector<const Node*> inputs;
  std::vector<const Node*> results;

  /// The tensor a node reads on input `i` (its producer's output).
  const ConcreteTensor& Input(const Node& node, size_t i) const;
  /// The first output of `node`.
  const ConcreteTensor& Output(const Node& node) const;
  /// "z1" for axis id 1, or "#7" for an id that names no axis.
  std::string AxisName(int64_t id) const;
};

/// Checks `request` and evaluates its sizes. Fails on the first problem: unknown axis ids,
/// unbound size variables, cycles, missing input sources, edges whose two ends disagree,
/// Data/Output indices out of range or repeated, repeats/strides lengths that differ from
/// the axes, unsupported ops and wrong input counts.
Expected<BoundGraph> BindAndValidate(const Request& request);

/// `BindAndValidate` for callers that only need the verdict.
Status ValidateRequest(const Request& request);

}  // namespace tilesmith::ascgraph
