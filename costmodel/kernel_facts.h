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

/// The threads that run each phase: the grid's, divided by a phase's arrivals from the
/// first phase with an arrival on (only the last of those blocks runs them).
std::vector<double> PhaseThreads(const emitters::KernelIR& kernel);

/// How many times a thread's loop body runs over the whole grid, a vector of elements
/// counting once: threads running the phase x symbol points / vector, summed over loops.
double KernelThreadSteps(const emitters::KernelIR& kernel);

/// The host's thread loops in loops with warp shuffles: it emulates a shuffle by ending a
/// loop over the block's threads (each saving its value to a per-thread slot) and starting
/// another (each reading its partner's slot), so such a loop runs one thread loop per
/// segment between shuffles at every point of its symbols: blocks x threads x points x
/// (shuffles + 1), summed over those loops (0 when there is no shuffle).
double HostSegmentSteps(const emitters::KernelIR& kernel);

/// Bytes per element the kernel computes in: its first output's type, narrow floats
/// (f16, bf16, f8) widened to the f32 they are computed in; 1 for sub-byte integers.
int64_t ComputeElementBytes(const emitters::KernelIR& kernel);

/// True when every thread runs one straight-line body (each loop has a single symbol point
/// and only calls and stores): the host's loop over a block's threads is then the innermost
/// loop, which the compiler vectorises across threads.
bool ThreadsVectorize(const emitters::KernelIR& kernel);

/// A host cache line and page, in bytes.
inline constexpr int64_t kHostLineBytes = 64;
inline constexpr int64_t kHostPageBytes = 4096;
/// A core's L1 data and L2 caches as sets of 8 ways: 32 KiB and 512 KiB (typical x86 server
/// cores; Zen 2-4, Intel since Skylake within 2x). L1 is indexed by the page offset, so a
/// walk keeps at most 8 lines per set and a stride of a power of two keeps far fewer lines
/// than its capacity; L2 keeps 128 lines per page offset (its 16 sets of that offset).
inline constexpr int64_t kHostCacheWays = 8;
inline constexpr int64_t kHostL1Sets = 64;
inline constexpr int64_t kHostL2Sets = 1024;
/// Neighbouring threads whose first accesses say how many threads share a line.
inline constexpr int64_t kHostNeighbourThreads = 64;

/// How one host thread walks memory in a phase. On the host a block's threads run one after
/// another, each through all its points of the phase's loops before the next starts, so a
/// line that neighbouring threads share (the GPU's coalesced access) is reused only if it
/// is still cached when the next thread comes: when one thread's walk fits in the cache.
/// Global buffers only: stores, atomics, parameters read at a call's index, and the input
/// buffers of a reduce's operand (bitcasts keep their bytes' order); long walks are
/// extrapolated from their first 4096 accesses.
struct ThreadSweep {
  double threads = 0;            ///< Threads of the grid, each walking once.
  double lines = 0;              ///< Distinct lines one thread's walk touches.
  double pages = 0;              ///< Distinct pages one thread's walk touches.
  double line_touches = 0;       ///< Lines touched by all threads' walks (threads x lines).
  double neighbour_touches = 0;  ///< Of those, the touches of a line a neighbouring thread
                                 ///< touched first: from cache only if the walk fits.
  double l1_kept = 1;            ///< Share of the walk's lines L1 holds until its end (each
                                 ///< set keeps its last 8 lines: buffers start page-aligned).
  double l2_kept = 1;            ///< The same for L2 (128 lines per page offset).
};
std::vector<ThreadSweep> KernelThreadSweeps(const emitters::KernelIR& kernel);

}  // namespace tilesmith::costmodel
