// Launch shapes of the loop emitter seen through Little's law: a loop kernel streams at the
// memory's bandwidth only when the loads it has in flight on each SM cover the memory's
// latency (latency x bandwidth per SM), and a small fusion reaches that only when its work
// is spread over every SM rather than held by a few large blocks. These rules extend the
// loop emitter's search space; its default config stays XLA's.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/loop_emitter.h"
#include "compiler/emitters/target.h"

namespace tilesmith::emitters {

/// The widest element of the fusion's parameters and outputs, in bits (pred counts 8).
int WidestElementBits(const analysis::FusionAnalysis& analysis);

/// The loop emitter's vector widths for this fusion: 1, 2, 4, 8, and 16 where every element
/// is at most one byte (16 lanes of bytes make one 16-byte access).
std::vector<int64_t> LoopVectorWidths(const analysis::FusionAnalysis& analysis);

/// Bytes one element of a loop over `elements` reads from memory, summed over the inputs:
/// each parameter's element size, scaled down for a parameter smaller than the loop (a
/// broadcast operand is read once for many elements and then hits the cache).
double LoopInputBytesPerElement(const analysis::FusionAnalysis& analysis, int64_t elements);

/// Blocks of `threads_per_block` an SM can hold at once by its thread and block limits
/// (registers aside: loop kernels need few).
int64_t ResidentLoopBlocksPerSm(int64_t threads_per_block, const DeviceInfo& device);

/// Little's law per SM: memory latency x bandwidth / SMs, the bytes each SM must have in
/// flight for the memory to stay busy; 0 when the device has no latency figure.
double LatencyBytesPerSm(const DeviceInfo& device);

/// What a loop config keeps in flight.
struct LoopLaunchFacts {
  /// Blocks in the grid.
  int64_t blocks = 0;
  /// Resident at once on a busy SM: its capacity, or the grid's share when that is less.
  int64_t blocks_per_sm = 0;
  /// Resident blocks x threads x vector x chunks x input bytes, averaged over every SM (an
  /// SM without a block keeps nothing in flight).
  double bytes_in_flight_per_sm = 0;
  /// Latency x bandwidth per SM, or less for a fusion whose reads, spread over every SM,
  /// are fewer.
  double bytes_needed_per_sm = 0;
  /// blocks >= SMs x resident blocks per SM.
  bool fills_all_sms = false;
  /// bytes_in_flight_per_sm >= bytes_needed_per_sm.
  bool covers_latency = false;
};

/// The facts of `config` for a loop over `elements` whose elements each read
/// `input_bytes_per_element` (LoopInputBytesPerElement).
LoopLaunchFacts DescribeLoopLaunch(const LoopConfig& config, int64_t elements,
                                   double input_bytes_per_element, const DeviceInfo& device);

/// The launch shapes the loop emitter's space must hold so that the bytes in flight cover
/// the memory latency: for 128, 256 and 512 threads and each of `vectors`, the most chunks
/// whose grid still fills every SM's resident slots (one chunk where no grid can, if that
/// grid still gives every SM a block), kept when it covers the latency. `base` gives the
/// other fields; blocks_y is what the grid needs. Empty when the device has no latency.
std::vector<LoopConfig> LatencyCoveringLoopConfigs(const LoopConfig& base, int64_t elements,
                                                   double input_bytes_per_element,
                                                   std::span<const int64_t> vectors,
                                                   const DeviceInfo& device);

}  // namespace tilesmith::emitters
