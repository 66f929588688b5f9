// Checking a strategy by simulating every device on the host: each device's input blocks
// are cut from full inputs as the in specs say, the strategy's collectives run on those
// blocks, the per-device fusion runs in the reference evaluator, the output collectives
// run, and the blocks assembled by the out specs must equal the evaluator's result on the
// whole fusion (and replicated blocks must agree with each other).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/literal_compare.h"
#include "split/dim_labels.h"
#include "split/mesh.h"
#include "split/strategy.h"
#include "support/status.h"

namespace tilesmith::split {

struct SimulationResult {
  bool matches = false;
  /// Empty when it matches; else which output and what differed.
  std::string mismatch;
  int64_t devices = 0;
  double largest_error = 0;  ///< Over every output, against the evaluator.
};

/// One device's block of `full` under `spec` (rank-preserving: the block keeps every dim).
hlo::Literal BlockOf(const hlo::Literal& full, const PartitionSpec& spec, const Mesh& mesh,
                     int64_t device);

/// Runs `step` on every device's block of one array (`blocks[device]`), as the collective
/// would; what comes back is every device's new block.
Expected<std::vector<hlo::Literal>> ApplyCollective(const Collective& step, const Mesh& mesh,
                                                    const std::vector<hlo::Literal>& blocks);

/// The array every device's block assembles to under `spec`: concatenated along split dims,
/// one copy taken along axes the spec does not name. Those copies must agree (within the
/// tolerance for sums of `reassociated_terms` terms); `disagreement` says where they do not.
hlo::Literal Assemble(const std::vector<hlo::Literal>& blocks, const PartitionSpec& spec,
                      const Mesh& mesh, int64_t reassociated_terms, std::string* disagreement);

/// Simulates `strategy` on `mesh` with `arguments` (one per fusion parameter, full size).
Expected<SimulationResult> Simulate(const hlo::HloModule& module, const DimLabels& labels,
                                    const Mesh& mesh, const Strategy& strategy,
                                    std::span<const hlo::Literal> arguments);

/// The same with the evaluator's pseudo-random arguments for `seed`.
Expected<SimulationResult> Simulate(const hlo::HloModule& module, const DimLabels& labels,
                                    const Mesh& mesh, const Strategy& strategy, uint64_t seed = 1);

}  // namespace tilesmith::split
