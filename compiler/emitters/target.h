// What a kernel is compiled for: a CUDA GPU of some compute capability, or the host CPU,
// and the device facts emitters and config validation need.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "support/status.h"

namespace tilesmith::emitters {

/// `cuda:sm_90`, `cuda:sm_80`, … or `host`.
struct Target {
  enum class Kind { kCuda, kHost };
  Kind kind = Kind::kHost;
  int sm_version = 0;  // 90 for sm_90; 0 for the host

  static Expected<Target> Parse(std::string_view text);
  static Target Host() { return Target{}; }
  std::string ToString() const;
  bool is_cuda() const { return kind == Kind::kCuda; }
  friend bool operator==(const Target&, const Target&) = default;
};

/// Limits and sizes of a device. For CUDA targets these are the figures of the
/// representative part of that compute capability (sm_90: H100 SXM, sm_80: A100 SXM,
/// sm_89: L4); a measured device may override them. For the host: its cores, with GPU-like
/// block limits because host kernels run the same launch grid.
struct DeviceInfo {
  std::string name;
  int64_t sm_count = 1;
  int64_t threads_per_sm = 2048;
  int64_t max_threads_per_block = 1024;
  int64_t warp_size = 32;
  int64_t max_grid_x = (int64_t{1} << 31) - 1;
  int64_t max_grid_y = 65535;
  int64_t max_grid_z = 65535;
  int64_t shared_memory_per_block = 48 * 1024;        // without opt-in
  int64_t shared_memory_per_block_optin = 48 * 1024;  // with opt-in
  int64_t registers_per_sm = 65536;
  int64_t max_registers_per_thread = 255;
  double clock_ghz = 1.0;
  double memory_bandwidth_gbs = 0;
  /// A global load's round trip from DRAM under load, in ns; 0 when no figure is known.
  /// With the bandwidth it says how many bytes must be in flight to keep memory busy
  /// (Little's law: latency x bandwidth), which sizes the loop emitter's launch shapes.
  double memory_latency_ns = 0;
  /// Resident blocks an SM holds at most, whatever their size (CUDA's occupancy table).
  int64_t max_blocks_per_sm = 32;
  /// Bytes of the widest SIMD register when it, not XLA's GPU rule, should size the loop
  /// emitter's default vector width (the host: 32 for AVX2); 0 on GPUs.
  int64_t simd_bytes = 0;

  /// The description used for `target` when no measured one is given.
  static DeviceInfo ForTarget(const Target& target);
};

}  // namespace tilesmith::emitters
