// Facts about a kernel that every analytic model reads off its Kernel IR: exact bytes per
// buffer (physical layouts, padding included), flops by op class, how many 32-byte sectors
// one warp touches per global access (coalescing), and shared-memory bank conflicts.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/emitters/kernel_ir.h"

namespace tilesmith::costmodel {

/// Bytes of one buffer as laid out in memory (tiling padding included); 0 if not an array.
int64_t BufferBytes(const emitters::KernelBuffer& buffer);

/// Bytes read (input buffers) and written (output buffers), each buffer once.
struct Traffic {
  int64_t read_bytes = 0;
  int64_t write_bytes = 0;
};
Traffic KernelTraffic(const emitters::KernelIR& kernel);

/// Arithmetic work of the fused computation: one flop per element of an elementwise op,
/// `kTranscendentalFlops` for exp/log/tanh/…, 4 for divide/sqrt, one per reduced element;
/// data movement (broadcast, slice, transpose, …) is free.
inline constexpr double kTranscendentalFlops = 16;
double KernelFlops(const emitters::KernelIR& kernel);

/// KernelFlops split by op class (the learned model's features): plain elementwise ops,
/// transcendentals, divide/sqrt-like ops, and reductions.
struct FlopsByClass {
  double elementwise = 0;
  double transcendental = 0;
  double divide_sqrt = 0;
  double reduce = 0;
  double total() const { return elementwise + transcendental + divide_sqrt + reduce; }
};
FlopsByClass KernelFlopsByClass(const emitters::KernelIR& kernel);

/// Distinct `sector_bytes`-sized sectors the byte ranges [address, address + width) touch.
int64_t DistinctSectors(std::span<const int64_t> addresses, int64_t width,
                        int64_t sector_bytes = 32);

/// Sectors fetched per useful byte relative to perfect coalescing (>= 1): a warp whose 32
/// lanes read 4 contiguous bytes each touches 4 sectors (factor 1); a stride of 32 floats,
/// 32 sectors (factor 8).
double CoalescingFactor(std::span<const int64_t> addresses, int64_t width);

/// The worst bank's load for one warp's shared access (32 banks of 4 bytes): 1 means no
/// conflict, 32 means the access is serialised. Lanes on the same word broadcast.
int64_t BankConflictDegree(std::span<const int64_t> byte_addresses);

/// The thread and block ids of lane `lane` of warp `warp` of block 0 (threads numbered x
/// fastest), as a loop map's dims.
std::vector<int64_t> LaneDims(const emitters::LaunchGrid& launch, int64_t warp, int64_t lane);

/// Coalescing of the first loop of each phase, weighted by bytes: for every global access
/// (stores, parameters read through calls and reductions at the loop's own index) the
/// sectors the first warp touches over the loop's vector symbol. Buffers no access reveals
/// count as coalesced.
struct Coalescing {
  double read_factor = 1;
  double write_factor = 1;
  int64_t accesses = 0;  ///< Warp accesses evaluated.
};
Coalescing KernelCoalescing(const emitters::KernelIR& kernel);

/// Shared-memory traffic and its worst bank-conflict degree over the kernel's shared loads
/// and stores (first warp of block 0, vector symbol at its first value).
struct SharedTraffic {
  double bytes = 0;  ///< Bytes moved through shared memory by all blocks.
  int64_t conflict_degree = 1;
};
SharedTraffic KernelSharedTraffic(const emitters::KernelIR& kernel);

/// The elements one thread handles side by side in the first loop (its vector symbol's
/// extent: the last symbol when its range is at most 16), 1 when there is none.
int64_t KernelVectorWidth(const emitters::KernelIR& kernel);

/// How many times a thread's loop body runs over the whole grid, a vector of elements
/// counting once: blocks x threads x symbol points / vector, summed over loops.
double KernelThreadSteps(const emitters::KernelIR& kernel);

/// Bytes per element the kernel computes in: its first output's type, narrow floats
/// (f16, bf16, f8) widened to the f32 they are computed in; 1 for sub-byte integers.
int64_t ComputeElementBytes(const emitters::KernelIR& kernel);

/// True when every thread runs one straight-line body (each loop has a single symbol point
/// and only calls and stores): the host's loop over a block's threads is then the innermost
/// loop, which the compiler vectorises across threads.
bool ThreadsVectorize(const emitters::KernelIR& kernel);

}  // namespace tilesmith::costmodel
