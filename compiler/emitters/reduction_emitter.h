// The reduction emitter: XLA's row, multi-row, column and small-column reductions over the
// `[D, H, W]` normalisation of the reduce heroes' input. Each thread folds its elements into
// per-thread accumulators; a butterfly of warp shuffles combines a warp's partials; when more
// than one warp (row) or more than one thread row (column) shares an output, the partials go
// through shared memory and, after a barrier, one group of lanes per output reduces them with
// shuffles again. Epilogues after the reduce are computed by the lane that writes; side
// outputs (roots that are not reductions) are written by a grid-stride loop of the same
// kernel. Variadic reducers carry one accumulator per output.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/emitter.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/emitters/target.h"
#include "support/status.h"

namespace tilesmith::emitters {

/// How a reduction is laid over a block.
///
/// Row reductions (W reduced): `threads_x` threads share a row of W (a power of two below
/// 32 packs several rows into a warp: multi-row), `threads_y` rows per block. A thread steps
/// along the row `elements_per_thread` elements at a time (`vector` consecutive ones per
/// access), over D as well.
///
/// Column reductions (H reduced): `threads_x` threads along the kept minor dim W, each with
/// `vector` consecutive columns, `threads_y` threads along H; a thread steps down its columns
/// `elements_per_thread` rows at a time.
///
/// `split` > 1 divides the reduced dim (W for rows, H for columns) among that many blocks.
/// Their partial results meet in one of two second passes:
///  - atomic (the default): each block folds its partials into the output with atomics (a
///    buffer that starts at the reducer's identity); for add (and integer max/min) reducers
///    whose result has no epilogue;
///  - tree (`"second_pass": "tree"`): each block stores its partials in a scratch buffer and
///    counts itself in; the block that arrives last for a group of outputs reduces their
///    `split` partials, applies the epilogues and writes the outputs. Any reducer, variadic
///    ones included, and a fixed order of combination.
struct ReductionConfig {
  int64_t threads_x = 32;
  int64_t threads_y = 1;
  int64_t vector = 1;
  int64_t elements_per_thread = 1;
  int64_t split = 1;
  bool tree = false;  // the second pass of a split: false = atomic

  int64_t threads() const { return threads_x * threads_y; }
  nlohmann::json ToJson() const;
  /// Reads `{"threads_x": 128, "threads_y": 2, "vector": 2, "elements_per_thread": 16,
  /// "split": 4, "second_pass": "tree"}`; missing fields keep `base`'s values, unknown ones
  /// are errors. `second_pass` is written only for the tree, so configs stored before it
  /// existed keep their keys.
  static Expected<ReductionConfig> FromJson(const nlohmann::json& json,
                                            const ReductionConfig& base);
  friend bool operator==(const ReductionConfig&, const ReductionConfig&) = default;
};

/// XLA's choice for the fusion's variant. Row: 16 minor elements per thread,
/// `min(1024, roundup(ceil(W/16), 32))` threads along the row, rows packed up to 256 threads,
/// vector 2 for 32-bit inputs (4 for narrower). Multi-row: one row of W per `W/vector`
/// threads. Column: 32x32 threads. Small column: W/vector threads along W, 128 in all.
ReductionConfig DefaultReductionConfig(const analysis::FusionAnalysis& analysis,
                                       const DeviceInfo& device);

/// The reason `config` cannot be used for this fusion on `device`, or OK.
Status ValidateReductionConfig(const ReductionConfig& config,
                               const analysis::FusionAnalysis& analysis, const DeviceInfo& device);

/// The kernel for `config`.
Expected<KernelIR> EmitReductionKernel(const analysis::FusionAnalysis& analysis,
                                       const ReductionConfig& config, const DeviceInfo& device);

/// How many input elements each output of a `reduction` kernel folds in another order than
/// the evaluator (the reduced dims' size), for the comparison's tolerance; 1 for fusions
/// without a reduction hero.
int64_t ReassociatedTerms(const analysis::FusionAnalysis& analysis);

/// The emitter's config space (see ReductionEmitter::Space).
std::vector<SpaceEntry> ReductionSpace(const analysis::FusionAnalysis& analysis,
                                       const DeviceInfo& device);

/// The reduction emitter behind the `Emitter` interface.
std::unique_ptr<Emitter> MakeReductionEmitter();

}  // namespace tilesmith::emitters
