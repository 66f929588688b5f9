// Indexing maps of single HLO instructions. Output -> input maps answer "to compute this
// output element, which elements of operand i are read"; input -> output maps answer "which
// output elements does this operand element feed". Dims are the output's (or the operand's)
// indices; symbols enumerate what one element reads many of (a reduced dim, a window
// position, a contracting dim) or stand for values known only at run time (dynamic-slice
// offsets, clamped to their range).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/analysis/indexing_map.h"
#include "compiler/hlo/hlo_instruction.h"

namespace tilesmith::analysis {

/// One map per operand, simplified, for an element of output `output_index` (the tuple
/// element, for ops with several outputs). Operands read with no index (a scalar: init and
/// padding values, offsets) get `(d0, …) -> ()`; operands not read for that output (other
/// elements of a `tuple`) get a known-empty map; reads that are not affine (a gather's
/// operand, a scatter's updates) and ops without indexing (custom-call, convolution, …)
/// get `IndexingMap::Undefined()`. Ops without operands give an empty vector.
std::vector<IndexingMap> OutputToInputIndexing(const hlo::HloInstruction& instruction,
                                               int64_t output_index = 0);

/// Which elements of output `output_index` an element of operand `operand` contributes to:
/// for elementwise ops, transpose, broadcast, reshape, bitcast, reverse, slice, pad (the
/// padded operand), concatenate and reduce (the reduced inputs, and the init values which
/// feed every output). Undefined for everything else.
IndexingMap InputToOutputIndexing(const hlo::HloInstruction& instruction, int64_t operand,
                                  int64_t output_index = 0);

}  // namespace tilesmith::analysis
