// The per-device fusion of a strategy: the same HLO with every split dim at its block size.
// It is an ordinary module (printed, parsed back and checked by the HLO parser), so the
// normal machinery (emitters, cost models, the tuner, the evaluator) takes it as is.
#pragma once

#include <memory>

#include "compiler/hlo/hlo_module.h"
#include "split/dim_labels.h"
#include "split/mesh.h"
#include "split/strategy.h"
#include "support/status.h"

namespace tilesmith::split {

/// `module` (whose fusion `labels` describes) at the block shapes of `strategy` on `mesh`.
/// An entry computation that wraps the fusion (parameters feeding one `fusion`) is
/// rewritten to match; anything else in it is Unimplemented.
Expected<std::unique_ptr<hlo::HloModule>> ShardModule(const hlo::HloModule& module,
                                                      const DimLabels& labels, const Mesh& mesh,
                                                      const Strategy& strategy);

}  // namespace tilesmith::split
