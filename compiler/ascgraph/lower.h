// Lowering an AscGraph request to the fusion IR of the HLO path, so the fingerprint,
// evaluator, emitters and tuner treat AscGraphs and HLO fusions alike.
//
// Each node's output becomes an HLO value whose dims are the tensor's repeats, in its
// axis order (size-1 dims kept, as the graph keeps reduced dims). Data nodes become
// parameters (their strides give the layout; padded or strided views are sliced out of a
// larger parameter); Output nodes, in index order, become the fusion's results (a tuple
// when there are several), laid out as the strides of the tensor they store.
#pragma once

#include <memory>
#include <string>

#include "compiler/ascgraph/graph.h"
#include "compiler/hlo/hlo_module.h"
#include "support/status.h"

namespace tilesmith::ascgraph {

/// Validates `request` and lowers it: a module whose ENTRY calls the lowered graph as a
/// kLoop fusion; `module->fusion()` is the graph. Errors name the node (kUnimplemented for
/// what tilesmith cannot express, such as overlapping strides).
Expected<std::unique_ptr<hlo::HloModule>> LowerToHlo(const Request& request);

/// The HLO text `LowerToHlo` parses.
Expected<std::string> LowerToHloText(const Request& request);

}  // namespace tilesmith::ascgraph
