// The input slices emitter: a fusion whose roots are unit-stride slices of arrays of one
// shape (usually one input) is one pass over that shape. Each thread computes a few input
// positions and writes each into every slice output that contains it, so the input is read
// once however many slices there are (XLA's InputSlicesFusion).
#pragma once

#include <memory>

#include "compiler/emitters/emitter.h"
#include "compiler/emitters/loop_emitter.h"

namespace tilesmith::emitters {

/// XLA's choice: 128 threads over the sliced shape (fewer, a whole number of warps, when
/// it is small), vector ceil(8 / smallest output bits) so packed outputs fill whole bytes.
LoopConfig DefaultInputSlicesConfig(const analysis::FusionAnalysis& analysis,
                                    const DeviceInfo& device);

/// The reason `config` cannot be used (the loop emitter's limits over the sliced shape; roots
/// that are not unit-stride slices of one shape), or OK.
Status ValidateInputSlicesConfig(const LoopConfig& config, const analysis::FusionAnalysis& analysis,
                                 const DeviceInfo& device);

/// The kernel: one loop over the sliced shape; per root, a store predicated on the position
/// lying inside that slice. Packed outputs (narrower than 8 bits) are written output by
/// output instead, as the loop emitter does, so that every thread owns whole bytes.
Expected<KernelIR> EmitInputSlicesKernel(const analysis::FusionAnalysis& analysis,
                                         const LoopConfig& config, const DeviceInfo& device);

/// Behind the `Emitter` interface (kind "input_slices"). Config fields: threads_per_block,
/// vector, chunks, blocks_y (the loop emitter's, over the sliced shape).
std::unique_ptr<Emitter> MakeInputSlicesEmitter();

}  // namespace tilesmith::emitters
