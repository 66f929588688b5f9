// Whether a fusion can run on this machine at all: the host measurer, `run` and `check` hold
// its inputs and outputs several times over (kernel buffers with red zones, the evaluator's
// literals, a stored reference), so a fusion whose buffers outgrow the memory is refused up
// front with the figures, rather than dying in the allocator halfway through a tune.
#pragma once

#include <cstdint>

#include "compiler/hlo/hlo_module.h"
#include "support/status.h"

namespace tilesmith::tuner {

/// Bytes of the fusion's parameters and outputs, each element at its storage width.
int64_t FusionBufferBytes(const hlo::HloComputation& fusion);

/// Physical memory of this machine in bytes (0 when unknown).
int64_t HostMemoryBytes();

/// FailedPrecondition naming the fusion, its buffer bytes and the machine's memory when
/// running it needs more than `memory_bytes` (0: this machine's).
Status CheckFitsHostMemory(const hlo::HloComputation& fusion, int64_t memory_bytes = 0);

}  // namespace tilesmith::tuner
