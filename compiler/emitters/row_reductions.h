// Reductions inside a loop fusion that every output reads at its leading dims — softmax's
// max and sum, broadcast back over the row they reduced. Evaluated where they are used,
// each would be recomputed for every element of its row (a 512-wide row: 512 times). The
// loop emitter instead computes each row's value once per block, in a phase of its own,
// into shared memory, and binds the loaded value wherever the outputs read it.
#pragma once

#include <optional>
#include <vector>

#include "compiler/analysis/affine_expr.h"
#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/element_loop.h"
#include "compiler/emitters/kernel_ir.h"

namespace tilesmith::emitters {

struct RowReductions {
  std::vector<const hlo::HloInstruction*> reduces;  // operands before users
  int64_t row_rank = 0;                             // leading output dims that number a row
  int64_t row_length = 0;                           // elements per row
  int64_t rows = 0;                                 // rows of the output
  int64_t rows_per_block = 0;                       // most rows one block's elements touch
  int64_t per_block = 0;                            // output elements per block
};

/// The fusion's row reductions when the loop `shape` (one chunk per thread) covers `output`
/// (every output has its dims, row-major) in whole-block runs; nullopt when there are none
/// or the loop cannot share them through shared memory.
std::optional<RowReductions> FindRowReductions(const analysis::FusionAnalysis& analysis,
                                               const std::vector<FusionOutput>& outputs,
                                               const ElementLoopShape& shape);

/// Adds the shared arrays and the phase that computes every row a block touches, one row
/// per thread. `next_value` is the first free value id, advanced past the phase's values.
void AddRowReductionPhase(const RowReductions& rows, const ElementLoopShape& shape,
                          KernelIR& kernel, int64_t& next_value);

/// The slot of `index`'s row (an output index, affine in the launch ids and symbols) in the
/// block's shared arrays: an extra result of the output loop.
analysis::AffineExpr RowSlot(const RowReductions& rows, const ElementLoopShape& shape,
                             std::span<const analysis::AffineExpr> index);

/// Loads the row values at `slot` (the loop's result of that number) at the front of
/// `body`, and binds them in every call of `body` at the row's index (the loop's first
/// `row_rank` results). Call after the output stores are in `body`.
void BindRowReductions(const RowReductions& rows, const KernelIR& kernel, int64_t slot,
                       std::vector<BodyStmt>& body, int64_t& next_value);

}  // namespace tilesmith::emitters
