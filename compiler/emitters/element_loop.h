// Pieces shared by the emitters whose threads each handle a few elements of one array in
// memory order (loop, concatenate, input slices, in-place dynamic-update-slice): the
// fusion's outputs and buffers, and the thread -> element map.
#pragma once

#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/analysis/indexing_map.h"
#include "compiler/analysis/partitioner.h"
#include "compiler/emitters/kernel_ir.h"
#include "support/status.h"

namespace tilesmith::emitters {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A fusion output: an array root, or one array leaf of a tuple-shaped root (a variadic
/// reduce, a call, a nested tuple); each gets its own buffer.
struct FusionOutput {
  const hlo::HloInstruction* root;
  int64_t leaf;  // -1 for an array root
  const hlo::Shape* shape;
};

/// The fusion's outputs in buffer order.
std::vector<FusionOutput> FusionOutputs(const analysis::FusionAnalysis& analysis);

/// True when an op of the fusion makes XLA keep one element per thread step (its code is
/// too large or too serial to gain from unrolling).
bool MayPreventVectorization(const hlo::HloComputation& fusion);

/// `root` and everything it reads inside the fusion, operands first: the instructions of a
/// kernel function that computes `root` on its own.
std::vector<const hlo::HloInstruction*> OperandClosure(const hlo::HloInstruction* root);

/// An index of `shape` from coordinates over merged dims. `order` lists dims of `shape`
/// (major first); coordinate j covers the next dims of `order` whose sizes multiply to
/// `sizes[j]`, row-major within that run. Dims not in `order` (size 1) are 0. An internal
/// error saying the shape does not match `what` when the sizes do not split that way.
Expected<std::vector<analysis::AffineExpr>> IndexFromMergedDims(
    const hlo::Shape& shape, std::span<const int64_t> order, std::span<const int64_t> sizes,
    std::span<const analysis::AffineExpr> coordinates, std::string_view what);

/// Delinearises `linear` into the dims of `shape`, most minor physical dim fastest.
std::vector<analysis::AffineExpr> Delinearize(const analysis::AffineExpr& linear,
                                              const hlo::Shape& shape);

/// `index` of an element of `from` as an index of `to`, an array with the same bytes (a
/// bitcast or physically identical reshape of it): the same dims give the same index;
/// otherwise the element's memory slot in `from` is delinearised in `to`'s layout.
Expected<std::vector<analysis::AffineExpr>> ReinterpretIndex(
    const hlo::Shape& from, const hlo::Shape& to, std::span<const analysis::AffineExpr> index);

/// Appends one input buffer per parameter (per array leaf of a tuple parameter), then one
/// output buffer per fusion output.
void AddFusionBuffers(const analysis::FusionAnalysis& analysis, KernelIR& kernel);

/// How threads cover the elements of an array: thread t of block b handles, for chunk c and
/// lane v, linear position `((b * threads + t) * vector) + c * vector * total_threads + v`.
struct ElementLoopShape {
  int64_t threads = 128;
  int64_t vector = 1;
  int64_t chunks = 1;
  int64_t blocks_x = 1;
  int64_t blocks_y = 1;
};

/// The map `(thread, block ids)[leading…, chunk, lane] -> results(index)` over the elements
/// of `shape`, guarded by `linear < elements`. `leading` symbols (runtime offsets) come
/// first so that code reads them once per thread; `results` builds the loop's results from
/// the element's index in `shape`.
analysis::IndexingMap ElementLoopMap(
    const ElementLoopShape& loop, const hlo::Shape& shape, std::vector<analysis::SymbolVar> leading,
    const std::function<std::vector<analysis::AffineExpr>(std::span<const analysis::AffineExpr>)>&
        results);

/// Adds the partitioned functions of the fusion to `kernel.functions`, in partition order.
void AddPartitionFunctions(const analysis::PartitionedComputation& partition, KernelIR& kernel);

/// Appends to `body` the calls and stores writing fusion outputs `which` (positions among
/// `outputs`, each stored to its output buffer) at `index`, affine in the loop's results:
/// one call per partitioned function, later outputs of a function reusing its values.
/// `next_value` is the first free value id, advanced past the calls' values.
void StoreOutputs(const KernelIR& kernel, const analysis::PartitionedComputation& partition,
                  const std::vector<FusionOutput>& outputs, std::span<const int64_t> which,
                  std::span<const analysis::AffineExpr> index, std::vector<BodyStmt>& body,
                  int64_t& next_value);

/// The instruction of the epilogue from `root` down to `hero` that holds the hero's values
/// unchanged: the top of the run of bitcasts, reshapes, copies and transposes right above the
/// hero (analysis admits only physically identical ones), or the hero itself. Binding a value
/// computed for the hero there lets an epilogue of elementwise ops over a bitcast find it.
const hlo::HloInstruction* BindingTarget(const hlo::HloInstruction* root,
                                         const hlo::HloInstruction* hero);

}  // namespace tilesmith::emitters
