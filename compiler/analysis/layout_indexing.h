// Indexing maps of physical layouts: where the element at a logical index lives in memory,
// and which element a memory slot holds. They agree with `hlo::PhysicalLayout` (dimension
// order, tiles with several levels and combined `*` dimensions, tail padding) and let
// emitters flatten tensors symbolically.
#pragma once

#include "compiler/analysis/indexing_map.h"
#include "compiler/hlo/shape.h"
#include "support/status.h"

namespace tilesmith::analysis {

/// `(d0, …, dn-1) -> (slot)`: logical index to linear element slot (padding counted, in
/// elements of `E(n)` bits). Fails for tuples, tokens, unbounded dims and invalid layouts.
Expected<IndexingMap> LogicalToLinearIndexing(const hlo::Shape& shape);

/// `(slot) -> (i0, …, in-1)`: the inverse. The domain covers every slot of the buffer; the
/// constraints hold exactly for the slots that hold an element (padding is excluded).
Expected<IndexingMap> LinearToLogicalIndexing(const hlo::Shape& shape);

}  // namespace tilesmith::analysis
