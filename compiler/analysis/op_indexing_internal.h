// Helpers shared by the files that build per-op indexing maps. Private to compiler/analysis.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/analysis/indexing_map.h"
#include "compiler/hlo/hlo_instruction.h"

namespace tilesmith::analysis::internal {

/// The dims of an array shape (`{}` for tuples and tokens).
std::vector<int64_t> DimsOf(const hlo::Shape& shape);

/// The shape of output `output_index`: the tuple element, or the shape itself.
const hlo::Shape& OutputShape(const hlo::HloInstruction& instruction, int64_t output_index);

/// `d0, …, d(n-1)`.
std::vector<AffineExpr> DimExprs(int64_t count);

/// A map over the index space `sizes` plus `symbols`, simplified, unused symbols dropped.
IndexingMap MakeMap(std::span<const int64_t> sizes, std::vector<SymbolVar> symbols,
                    std::vector<AffineExpr> results, std::vector<Constraint> constraints = {});

/// `(d0, …) -> ()` over `sizes`: a scalar read once per element.
IndexingMap ScalarMap(std::span<const int64_t> sizes);

/// `()[s0, …] -> (s0, …)` over `sizes`: a scalar that feeds every element.
IndexingMap BroadcastScalarMap(std::span<const int64_t> sizes);

/// Output -> input maps of reduce, reduce-window, dot and sort (op_indexing_reductions.cc);
/// empty if `instruction` is none of them.
std::vector<IndexingMap> ReductionOutputToInput(const hlo::HloInstruction& instruction,
                                                int64_t output_index);

}  // namespace tilesmith::analysis::internal
