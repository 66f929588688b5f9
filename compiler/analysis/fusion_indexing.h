// Indexing through a fused computation: from an element of a root's output to the elements
// of every instruction it depends on, fusion parameters included, by composing the op maps
// along every path. The partitioner asks "do all users read this at the same index", the
// emitters "which parameter elements does output element i need".
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/analysis/indexing_map.h"
#include "compiler/hlo/hlo_module.h"
#include "support/status.h"

namespace tilesmith::analysis {

/// For each instruction of a computation, the distinct maps (one per distinct access
/// pattern; known-empty ones dropped) from a root's output index to that instruction's
/// elements. Value type; borrows the computation.
class GroupedIndexing {
 public:
  /// Maps into `instruction`; empty when the root does not read it.
  std::span<const IndexingMap> MapsTo(const hlo::HloInstruction& instruction) const;
  /// Maps into the computation's parameter `number`.
  std::span<const IndexingMap> MapsToParameter(int64_t number) const;

 private:
  friend Expected<GroupedIndexing> ComputeGroupedOutputToInputIndexing(
      const hlo::HloComputation& computation, const hlo::HloInstruction& root,
      int64_t output_index);

  const hlo::HloComputation* computation_ = nullptr;
  std::vector<std::vector<IndexingMap>> by_id_;
};

/// Walks `computation` from `root` (one of its instructions) towards the parameters,
/// composing and simplifying output -> input maps; symbols no result uses are dropped.
/// `output_index` picks the output of a root with several (a `tuple` root stands for its
/// operand). `get-tuple-element` of a `tuple` reads that tuple operand directly.
Expected<GroupedIndexing> ComputeGroupedOutputToInputIndexing(
    const hlo::HloComputation& computation, const hlo::HloInstruction& root,
    int64_t output_index = 0);

/// Per parameter of `computation` (by number), the distinct maps by which an element of
/// `root`'s output reads it.
Expected<std::vector<std::vector<IndexingMap>>> ComputeOutputToParameterIndexing(
    const hlo::HloComputation& computation, const hlo::HloInstruction& root,
    int64_t output_index = 0);

}  // namespace tilesmith::analysis
