// Which dims of a fusion must be split together (split/ internal). Every array dim of every
// instruction gets a label, einsum style: an elementwise op gives its operands' dims the
// labels of its output dims, a transpose permutes them, a broadcast adds fresh ones, a
// reduce or dot *contracts* the labels of its reduced or contracting dims. Splitting a
// label over mesh axes splits every dim carrying it; the same HLO then runs on each block.
// A dim whose elements depend on their position (an iota's dim, a slice's offset, a
// reshape that regroups elements, an op we do not reason about) is *pinned*: never split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "support/status.h"

namespace tilesmith::split {

/// A reduce or dot that sums over a label: splitting the label leaves each device a partial
/// sum of that instruction's result.
struct Contraction {
  const hlo::HloInstruction* at = nullptr;
  /// The partial sums add up to the result (an add reduction from 0, or a dot); when false,
  /// `why_not` says why the label cannot be split.
  bool psum_ok = false;
  std::string why_not;
};

struct DimLabels {
  /// Per instruction id, the label of each dim (empty for tuples and tokens).
  std::vector<std::vector<int>> of;
  std::vector<int64_t> size;  ///< Per label: the size of every dim carrying it.
  std::vector<bool> pinned;   ///< Per label: never split.
  std::vector<std::string> pin_reason;
  std::vector<std::vector<Contraction>> contractions;  ///< Per label.
  /// The fusion's outputs: the root, or the operands of a root tuple.
  std::vector<const hlo::HloInstruction*> outputs;

  int count() const { return static_cast<int>(size.size()); }
  const std::vector<int>& Of(const hlo::HloInstruction& instruction) const {
    return of[instruction.id()];
  }
};

/// Labels the dims of `fusion` (its parameters, instructions and outputs).
Expected<DimLabels> LabelDims(const hlo::HloComputation& fusion);

}  // namespace tilesmith::split
