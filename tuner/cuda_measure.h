// Timing a cubin on a CUDA GPU through the driver API, loaded with dlopen (cuda_driver.h):
// buffers with red zones, one verified run, then time-budgeted repetitions timed with CUDA
// events, the L2 flushed before each by writing a buffer larger than it. Runs inside the
// worker process (worker.h), so a kernel that takes the context down takes only the worker.
// First run on an H100 (driver 580, CUDA 13.0) on 2026-11-26: docs/gpu.md has the figures.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/codegen/nvptx_backend.h"
#include "support/status.h"

namespace tilesmith::tuner {

struct CudaApi;

/// One loaded candidate: its module, function and guarded device buffers.
class CudaCandidate {
 public:
  ~CudaCandidate();
  CudaCandidate(const CudaCandidate&) = delete;
  CudaCandidate& operator=(const CudaCandidate&) = delete;

  /// Loads `kernel`'s cubin on GPU 0 and fills its buffers: `initial[i]` for every buffer
  /// (inputs, and the contents an in-place output starts with; empty: none).
  static Expected<std::unique_ptr<CudaCandidate>> Load(
      const codegen::NvptxKernel& kernel, std::span<const std::vector<uint8_t>> initial,
      std::span<const int64_t> sizes);

  /// One launch, synchronised; the error names the CUDA result.
  Status Run();
  /// Whether every red zone still holds its pattern.
  Expected<bool> RedZonesIntact();
  /// The bytes of buffer `index`.
  Expected<std::vector<uint8_t>> Read(int64_t index);
  /// Warm-up for `warmup_ms`, then repetitions (min..max) for `budget_ms`, each after
  /// writing `flush_bytes` of device memory; every time in microseconds.
  Expected<std::vector<double>> Time(double warmup_ms, double budget_ms, int64_t min_reps,
                                     int64_t max_reps, int64_t flush_bytes);

 private:
  CudaCandidate() = default;
  Status Check(int result, const char* what);

  const CudaApi* api_ = nullptr;
  void* module_ = nullptr;
  void* function_ = nullptr;
  std::array<unsigned, 3> grid_ = {1, 1, 1};
  std::array<unsigned, 3> block_ = {1, 1, 1};
  std::vector<uint64_t> allocations_;  // device pointers including red zones
  std::vector<uint64_t> data_;         // device pointers of the data
  std::vector<int64_t> sizes_;
  uint64_t flush_ = 0;
  int64_t flush_size_ = 0;
};

}  // namespace tilesmith::tuner
