// The computation partitioner: splits a fused computation into subgraphs that can each be
// emitted as one function of (parameters…, output index…) without evaluating any
// instruction at two different indices inside one function (gpu-emitters spec,
// "Computation partitioner").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/analysis/indexing_map.h"
#include "compiler/hlo/hlo_module.h"

namespace tilesmith::analysis {

/// One function of the partition: `roots` (same dims) computed at one index, and the
/// instructions evaluated inside it. Parameters belong to no subgraph: every function reads
/// them directly.
struct Subgraph {
  std::string name;
  std::vector<const hlo::HloInstruction*> roots;
  std::vector<const hlo::HloInstruction*> instructions;  // post-order, roots last
};

/// The partition of one computation.
class PartitionedComputation {
 public:
  std::span<const Subgraph> subgraphs() const { return subgraphs_; }
  /// The subgraph holding `instruction`, or -1 for parameters and the root tuple.
  int64_t SubgraphOf(const hlo::HloInstruction& instruction) const;
  /// The map from the subgraph root's index to the index at which `instruction` is evaluated
  /// inside its subgraph (identity for roots).
  const IndexingMap& IndexingInSubgraph(const hlo::HloInstruction& instruction) const;
  std::string ToString() const;

 private:
  friend PartitionedComputation PartitionComputation(
      const hlo::HloComputation&, const std::function<bool(const hlo::HloInstruction&)>&);
  const hlo::HloComputation* computation_ = nullptr;
  std::vector<Subgraph> subgraphs_;
  std::vector<int64_t> subgraph_of_;   // by instruction id
  std::vector<IndexingMap> indexing_;  // by instruction id
};

/// Partitions `computation`: an instruction joins its users' subgraph when it is not forced
/// to be a root (`is_subgraph_root`, e.g. an emitter's hero), all its users are in one
/// subgraph, and they read it at one index (one user, or several users whose composed
/// indexing maps from the subgraph root agree). Otherwise it roots a subgraph of its own.
/// The fusion's outputs (a tuple root's operands) are roots; outputs with the same dims
/// share one subgraph.
PartitionedComputation PartitionComputation(
    const hlo::HloComputation& computation,
    const std::function<bool(const hlo::HloInstruction&)>& is_subgraph_root = {});

}  // namespace tilesmith::analysis
