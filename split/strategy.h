// Split strategies of one fusion over a mesh: which mesh axes split which dims (the
// parameters' and outputs' partition specs), the collectives that make the result correct,
// and what those collectives cost under the alpha-beta ring model (docs/split.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "split/dim_labels.h"
#include "split/mesh.h"
#include "split/partition_spec.h"
#include "support/status.h"

namespace tilesmith::split {

/// What moves between devices. `kSlice` moves nothing: a device keeps its block of data it
/// already holds replicated; it is listed so a plan replays step by step.
enum class CollectiveKind { kAllGather, kAllToAll, kPsum, kPsumScatter, kPpermute, kSlice };

/// `all_gather`, `psum`, … as JAX spells them.
std::string CollectiveName(CollectiveKind kind);

/// One step on one array over one mesh axis.
struct Collective {
  CollectiveKind kind = CollectiveKind::kPsum;
  std::string axis;
  /// all_gather: the dim blocks are concatenated along; psum_scatter and slice: the dim
  /// split; all_to_all: the dim the axis leaves (blocks concatenated along it).
  int64_t dim = -1;
  int64_t split_dim = -1;  ///< all_to_all: the dim the axis joins (split).
  bool on_output = false;  ///< Applied to output `array` after the kernel, else before.
  int64_t array = 0;       ///< The parameter or output number.
  /// The bytes the cost is counted from, per device: the gathered block for all_gather,
  /// the block before the step for the others.
  int64_t bytes = 0;
  double us = 0;
};

/// `all_gather('i', dim 0) param 0: 1.5 KiB 2.10 us`.
std::string CollectiveToString(const Collective& collective);
nlohmann::json CollectiveToJson(const Collective& collective);

/// Ring-algorithm time of one collective over `axis` (docs/split.md): per step the link's
/// latency, plus the bytes each device sends over its bandwidth. all-reduce 2(n-1) steps and
/// 2(n-1)/n·bytes; all-gather, reduce-scatter and all-to-all n-1 steps and (n-1)/n·bytes;
/// ppermute one step and all its bytes; slice nothing.
double CollectiveUs(CollectiveKind kind, int64_t bytes, const MeshAxis& axis);

/// A collective-matmul schedule's estimate: a dot operand's all_gather (or the dot's
/// psum_scatter) rotated in n-1 ppermute steps, each hidden behind 1/n of the kernel.
struct OverlapEstimate {
  double total_us = 0;  ///< Kernel and communication per step with the overlap.
  std::string note;     ///< Which collective it replaces and how.
};

/// One way to split the fusion.
struct Strategy {
  std::vector<std::vector<std::string>> label_axes;  ///< Per dim label (dim_labels.h).
  std::vector<PartitionSpec> in_specs;               ///< Where each parameter lies before the step.
  std::vector<PartitionSpec> param_specs;            ///< The blocks the kernel reads.
  std::vector<PartitionSpec> kernel_specs;           ///< The blocks the kernel writes, per output.
  std::vector<std::vector<std::string>> partial_axes;  ///< Per output: summed over by psum.
  std::vector<PartitionSpec> out_specs;                ///< Where each output lies after.
  std::vector<std::vector<int64_t>> param_blocks;      ///< Per-device parameter shapes.
  std::vector<std::vector<int64_t>> kernel_blocks;     ///< Per-device kernel output shapes.
  std::vector<Collective> collectives;  ///< In order: parameters' first, then outputs'.
  double comm_us = 0;

  // Filled in by ranking (rank.h).
  double kernel_us = 0;
  std::string kernel_source;  ///< `predicted (analytic-gpu)`, `measured (host)`.
  nlohmann::json kernel_config;
  double total_us = 0;  ///< kernel_us + comm_us: nothing overlapped.
  std::optional<OverlapEstimate> overlap;

  /// How many mesh axes split something (0: every device does all the work).
  int64_t SplitAxisCount() const;
};

/// What the caller fixes: where parameters lie (their in specs) and where outputs must end
/// up. A missing entry is free: a free parameter lies as the kernel reads it, a free output
/// stays as the kernel leaves it (its partial sums resolved by psum or psum_scatter).
struct SplitRequest {
  std::vector<std::optional<PartitionSpec>> in_specs;   ///< Per parameter (may be short).
  std::vector<std::optional<PartitionSpec>> out_specs;  ///< Per output (may be short).
  int64_t max_strategies = 20000;
};

/// Checks the request against the fusion and mesh (counts, validity of each spec).
Status ValidateRequest(const hlo::HloComputation& fusion, const DimLabels& labels, const Mesh& mesh,
                       const SplitRequest& request);

/// Every valid strategy of `fusion` (labelled by `labels`) on `mesh`, with its collectives
/// planned and costed, unranked. Always includes the unsplit one. More than
/// `max_strategies` is an error that says so.
Expected<std::vector<Strategy>> EnumerateStrategies(const hlo::HloComputation& fusion,
                                                    const DimLabels& labels, const Mesh& mesh,
                                                    const SplitRequest& request);

/// Appends the steps that take an array of `dims` (elements of `element_bytes`) from
/// `from` to `to` on `mesh`: all_to_all where an axis moves between dims, all_gather where
/// it leaves, slice where it joins. Both specs must be valid for `dims`.
void PlanReshard(const PartitionSpec& from, const PartitionSpec& to, std::span<const int64_t> dims,
                 int64_t element_bytes, const Mesh& mesh, bool on_output, int64_t array,
                 std::vector<Collective>* steps);

}  // namespace tilesmith::split
