// The analytic host model: a host kernel's blocks are spread over the thread pool (a few
// tasks per thread, each running its blocks' threads one after another), so its time is
// bytes against the machine's copy bandwidth (cache bandwidth when the working set fits the
// last-level cache) and flops against its vector FMA throughput, scaled by how many
// threads the grid keeps busy, plus the pool's dispatch and a per-thread-step overhead.
// The machine's figures come from a quick calibration, measured once per process.
#pragma once

#include <cstdint>

#include "costmodel/cost_model.h"

namespace tilesmith::costmodel {

/// This machine's figures (bytes and flops per microsecond).
struct HostCalibration {
  int threads = 1;                        ///< The pool's threads.
  double memory_bytes_per_us = 0;         ///< Parallel copy (read + write) from DRAM.
  double thread_memory_bytes_per_us = 0;  ///< One thread's copy from DRAM.
  double cache_bytes_per_us = 0;          ///< Parallel copy of a working set that fits the LLC.
  double thread_flops_per_us = 0;         ///< One thread's vector FMA throughput (2 per FMA).
  double dispatch_us = 0;                 ///< An empty ParallelFor over the pool.
  double measure_ms = 0;                  ///< How long calibrating took.
  nlohmann::json ToJson() const;
  /// Reads ToJson()'s form back (as the database stores it); every figure must be there
  /// and positive.
  static Expected<HostCalibration> FromJson(const nlohmann::json& figures);
};

/// Measures this machine (~0.2 s): copies of 2 x `cache_bytes` (at least 64 MiB) and of a
/// quarter of the cache, and a register-resident FMA loop.
HostCalibration MeasureHostCalibration(int64_t cache_bytes);
/// MeasureHostCalibration, once per process (later calls return the first result).
const HostCalibration& CachedHostCalibration(int64_t cache_bytes);

/// Per-step cost of one thread of a block on the host (the loop over thread ids, index
/// arithmetic), in microseconds.
inline constexpr double kHostThreadStepUs = 0.002;

/// The share of `threads` pool threads a grid of `blocks` keeps busy: tasks are
/// min(blocks, 4 x threads) equal runs of blocks, dealt to threads, so both the tasks per
/// thread and the blocks per task round up.
double HostParallelEfficiency(int64_t blocks, int threads);

/// Bandwidth in bytes per µs with `busy` of the calibration's threads: DRAM (or cache,
/// when `fits_cache`) shared by all, each thread limited to its own copy rate.
double HostBandwidth(const HostCalibration& calibration, int64_t busy, bool fits_cache);

/// Share of the SIMD width a thread's `vector` elements of `element_bytes` fill (>= 1 lane).
double SimdEfficiency(int64_t vector, int64_t element_bytes, int64_t simd_bytes);

class HostModel : public CostModel {
 public:
  explicit HostModel(HostCalibration calibration) : calibration_(calibration) {}
  std::string_view name() const override { return "analytic-host"; }
  Expected<Prediction> Predict(const emitters::KernelIR& kernel, const DeviceFigures& device,
                               const ResourceUsage* usage) const override;
  const HostCalibration& calibration() const { return calibration_; }

 private:
  HostCalibration calibration_;
};

}  // namespace tilesmith::costmodel
