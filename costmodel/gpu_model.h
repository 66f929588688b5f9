// The analytic GPU model: XLA's (bytes over bandwidth with an L2 boost, a per-block
// bandwidth cap, coalescing waste, compute time, overlap, launch overhead) with what a
// compiled candidate tells us on top: occupancy from its real registers and shared memory,
// waves with the tail wave quantised, exact bytes from physical layouts, sectors per warp
// access from its thread->address maps, and shared-memory bank conflicts. Two terms come
// from H100 timings (docs/gpu.md): each SM starts blocks at a bounded rate, so a grid of
// many small blocks costs kBlockDispatchUs per block and SM however few bytes it moves, and
// every wave of resident blocks waits at least one memory round trip (kWaveLatencyUs). A loop
// kernel's bandwidth share is also what its bytes in flight cover of the memory's latency x
// bandwidth (Little's law), so few warps with wide, unrolled loads are not charged as idle.
#pragma once

#include <cstdint>
#include <string>

#include "costmodel/cost_model.h"

namespace tilesmith::costmodel {

/// Per-SM limits the occupancy calculation uses beyond DeviceInfo's.
inline constexpr int64_t kMaxBlocksPerSm = 32;
inline constexpr int64_t kRegisterAllocationUnit = 256;   ///< Registers, per warp.
inline constexpr int64_t kSharedReservedPerBlock = 1024;  ///< sm_80+: 1 KiB per block.
/// Registers assumed per thread when no cubin was made.
inline constexpr int64_t kEstimatedRegisters = 32;
inline constexpr double kLaunchOverheadUs = 1.0;
inline constexpr double kL2ReadBoost = 2.5;
inline constexpr double kBytesPerBlockCycle = 32;  ///< One block streams ~32 B per cycle.
inline constexpr double kOverlap = 0.95;
/// Warps per SM from which memory latency is hidden (fewer leave the bandwidth idle).
inline constexpr int64_t kWarpsToHideLatency = 16;
/// Time for an SM to retire one block and start the next, the floor of a grid of tiny blocks:
/// on an H100, 196,608 blocks of 32-64 threads ran 87 µs longer than 49,152 (~60 ns per block
/// and SM once launch costs are counted).
inline constexpr double kBlockDispatchUs = 0.06;
/// Memory round trip each wave of resident blocks waits for at least.
inline constexpr double kWaveLatencyUs = 0.5;
inline constexpr double kSharedBytesPerSmCycle = 128;  ///< 32 banks x 4 bytes.

/// Resident blocks per SM and what limits them (`threads`, `registers`, `shared`, `blocks`).
struct Occupancy {
  int64_t blocks_per_sm = 0;
  std::string limited_by;
  int64_t warps_per_sm = 0;
  double fraction = 0;  ///< Resident threads over the SM's maximum.
};
Occupancy ComputeOccupancy(const emitters::DeviceInfo& device, int64_t threads_per_block,
                           int64_t registers_per_thread, int64_t shared_bytes_per_block);

/// How many rounds of resident blocks the grid takes and how full they are on average.
/// The efficiency is reported, not charged: on an H100 a grid that fills a quarter of the
/// resident slots streams as fast as a full one (a few large blocks keep enough loads in
/// flight), and dividing the memory time by it ranked configs worse (docs/gpu.md).
struct Waves {
  int64_t waves = 0;
  double efficiency = 1;  ///< blocks / (waves x resident capacity).
};
Waves ComputeWaves(int64_t blocks, int64_t blocks_per_sm, int64_t sm_count);

/// Read bandwidth multiplier: kL2ReadBoost when the working set fits in the L2.
double ReadBoost(int64_t working_set_bytes, int64_t cache_bytes);

/// XLA's per-block cap: blocks in flight x clock x 32 bytes, in bytes per microsecond.
double PerBlockBandwidthCap(int64_t blocks_in_flight, double clock_ghz);

/// The share of bandwidth reachable with `warps_per_sm` resident warps (<= 1).
double LatencyHiding(int64_t warps_per_sm);

/// Little's law: the share of the bandwidth that `bytes_in_flight` (all SMs together) keep
/// busy, against the device's memory latency x bandwidth, or against `read_bytes` when the
/// kernel reads fewer (it cannot have more in flight than all of them). 0 when the device
/// has no latency figure (`DeviceInfo::memory_latency_ns`).
double LatencyCoverage(double bytes_in_flight, double read_bytes,
                       const emitters::DeviceInfo& device);

/// XLA's compute time: flops / (clock x 2 x min(blocks, SMs) x min(threads, 128)), in µs.
double ComputeTimeUs(double flops, int64_t blocks, int64_t threads_per_block, int64_t sm_count,
                     double clock_ghz);

/// compute + memory - kOverlap x min(compute, memory).
double Overlapped(double compute_us, double memory_us);

/// The block-dispatch floor: kBlockDispatchUs for each block an SM runs, in µs.
double BlockDispatchUs(int64_t blocks, int64_t sm_count);

/// Time of the shared-memory traffic, serialised by the bank-conflict degree, in µs.
double SharedTimeUs(double bytes, int64_t conflict_degree, int64_t sm_count, double clock_ghz);

class GpuModel : public CostModel {
 public:
  std::string_view name() const override { return "analytic-gpu"; }
  Expected<Prediction> Predict(const emitters::KernelIR& kernel, const DeviceFigures& device,
                               const ResourceUsage* usage) const override;
};

}  // namespace tilesmith::costmodel
