// The in-place dynamic-update-slice emitter: each output aliases the parameter its
// dynamic-update-slice updates, so the kernel writes only the update region, at the start
// indices clamped as HLO specifies (into [0, operand dim - update dim]); the rest of the
// output keeps the parameter's contents. The aliasing is explicit in the kernel's buffers
// (KernelBuffer::aliases): whoever runs the kernel gives such an output the parameter's
// bytes first (XLA's InPlaceDynamicUpdateSliceFusion).
#pragma once

#include <memory>

#include "compiler/emitters/emitter.h"
#include "compiler/emitters/loop_emitter.h"

namespace tilesmith::emitters {

/// XLA's choice: the loop rule over the update's elements (128 threads; vector 4 or 2 for
/// large updates). Packed outputs (narrower than 8 bits) are written whole, as the loop
/// emitter would: an update region at a run-time offset cannot give each thread whole bytes.
LoopConfig DefaultDynamicUpdateSliceConfig(const analysis::FusionAnalysis& analysis,
                                           const DeviceInfo& device);

/// The reason `config` cannot be used (the loop emitter's limits over the update's elements;
/// a fusion whose roots are not in-place updates of a parameter), or OK.
Status ValidateDynamicUpdateSliceConfig(const LoopConfig& config,
                                        const analysis::FusionAnalysis& analysis,
                                        const DeviceInfo& device);

/// The kernel: one loop per root over its update's elements, storing each at its position
/// in the output (through a bitcast root's layout when there is one).
Expected<KernelIR> EmitDynamicUpdateSliceKernel(const analysis::FusionAnalysis& analysis,
                                                const LoopConfig& config, const DeviceInfo& device);

/// Behind the `Emitter` interface (kind "dynamic_update_slice"). Config fields:
/// threads_per_block, vector, chunks, blocks_y (the loop emitter's, over the update).
std::unique_ptr<Emitter> MakeDynamicUpdateSliceEmitter();

}  // namespace tilesmith::emitters
