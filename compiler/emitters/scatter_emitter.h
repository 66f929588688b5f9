// The scatter emitter: one thread per update element (a few with chunks and vector lanes),
// in place in an output that starts as the scatter's operand (KernelBuffer::aliases). Each
// thread reads its update's start indices, skips windows that do not fit the operand (XLA's
// rule), and combines its element into the output: with an atomic read-modify-write when the
// combiner is add (or integer max/min) on 32- or 64-bit elements, which also makes
// non-unique indices safe; with a plain read-modify-write when the indices are unique.
// Other scatters (non-unique with another combiner, variadic, an operand that is not a
// parameter, packed types) keep the loop emitter's kernel, which applies updates in order.
#pragma once

#include <memory>
#include <string>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/emitter.h"
#include "compiler/emitters/loop_emitter.h"

namespace tilesmith::emitters {

/// Why the scatter emitter leaves this fusion to the loop emitter, or "" when it emits it.
std::string ScatterFallbackReason(const analysis::FusionAnalysis& analysis);

/// The kernel for `config` (a loop config over the update elements).
Expected<KernelIR> EmitScatterKernel(const analysis::FusionAnalysis& analysis,
                                     const LoopConfig& config, const DeviceInfo& device);

/// The scatter emitter behind the `Emitter` interface (its space is the loop space over the
/// update elements).
std::unique_ptr<Emitter> MakeScatterEmitter();

}  // namespace tilesmith::emitters
