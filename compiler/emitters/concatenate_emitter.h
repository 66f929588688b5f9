// The concatenate emitter: one loop per operand of the concatenate hero. Each thread reads
// a few elements of one operand in its memory order and writes every fusion output at the
// operand's offset along the concatenated dimension, so no thread tests which operand an
// output element comes from (XLA's ConcatenateFusion).
#pragma once

#include <memory>

#include "compiler/emitters/emitter.h"
#include "compiler/emitters/loop_emitter.h"

namespace tilesmith::emitters {

/// XLA's choice: the loop rule applied to the largest operand (128 threads; vector 4 or 2
/// for large operands), the vector limited to the gcd of the operands' sizes along the
/// concatenated dimension so that no operand's elements straddle a vector.
LoopConfig DefaultConcatenateConfig(const analysis::FusionAnalysis& analysis,
                                    const DeviceInfo& device);

/// The reason `config` cannot be used (the loop emitter's limits over the largest operand;
/// packed outputs, whose operand offsets would split bytes between threads), or OK.
Status ValidateConcatenateConfig(const LoopConfig& config, const analysis::FusionAnalysis& analysis,
                                 const DeviceInfo& device);

/// The kernel: a grid covering the largest operand; loop k walks operand k and stores every
/// output at that element's position in the concatenation.
Expected<KernelIR> EmitConcatenateKernel(const analysis::FusionAnalysis& analysis,
                                         const LoopConfig& config, const DeviceInfo& device);

/// Behind the `Emitter` interface (kind "concatenate"). Config fields: threads_per_block,
/// vector, chunks, blocks_y (as the loop emitter's); space: threads 32…1024, vector 1/2/4/8,
/// chunks 1/2/4.
std::unique_ptr<Emitter> MakeConcatenateEmitter();

}  // namespace tilesmith::emitters
