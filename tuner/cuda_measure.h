// Timing a cubin on a CUDA GPU through the driver API, loaded with dlopen (cuda_driver.h):
// buffers with red zones, one verified run, then time-budgeted repetitions, the L2 flushed
// before each by writing a buffer larger than it. Each repetition is timed twice: by CUDA
// events around its launch, and by CUPTI's record of the kernel's execution (cupti.h), the
// duration XLA reports. Runs inside the worker process (worker.h), so a kernel that takes
// the context down takes only the worker. Event timing was first run on an H100 (driver 580,
// CUDA 13.0) on 2026-11-26: docs/gpu.md has the figures.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/codegen/nvptx_backend.h"
#include "support/status.h"
#include "tuner/cupti.h"

namespace tilesmith::tuner {

struct CudaApi;

/// The names of the two ways a CUDA kernel is timed, as answers and stored trials spell them.
inline constexpr std::string_view kTimedByCuptiKernel = "cupti-kernel";
inline constexpr std::string_view kTimedByCudaEvents = "cuda-events";

/// How a worker times CUDA kernels: CUPTI's kernel durations where CUPTI can record them,
/// else CUDA events alone, with the reason.
struct CudaTiming {
  std::unique_ptr<KernelActivityRecorder> recorder;  ///< Null: events only.
  /// Why there is no recorder although kernel time was asked for; empty otherwise.
  std::string fallback;
};

/// `kernel_time`: try CUPTI (loaded, callbacks registered, kernel activity enabled and
/// disabled once); false: events were asked for, and nothing is loaded.
CudaTiming ChooseCudaTiming(bool kernel_time);

/// One candidate's timed repetitions.
struct CudaTimes {
  std::vector<double> event_us;   ///< CUDA events around each launch.
  std::vector<double> kernel_us;  ///< CUPTI's duration of each, in order; empty: not recorded.
  std::string kernel_error;       ///< Why `kernel_us` is empty although a recorder was given.
};

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
  /// writing `flush_bytes` of device memory, recorded by `recorder` too unless it is null;
  /// every time in microseconds. A recorder's failure costs only `kernel_us`.
  Expected<CudaTimes> Time(double warmup_ms, double budget_ms, int64_t min_reps, int64_t max_reps,
                           int64_t flush_bytes, KernelActivityRecorder* recorder);

 private:
  CudaCandidate() = default;
  Status Check(int result, const char* what);

  const CudaApi* api_ = nullptr;
  void* module_ = nullptr;
  void* function_ = nullptr;
  std::string entry_;
  std::array<unsigned, 3> grid_ = {1, 1, 1};
  std::array<unsigned, 3> block_ = {1, 1, 1};
  std::vector<uint64_t> allocations_;  // device pointers including red zones
  std::vector<uint64_t> data_;         // device pointers of the data
  std::vector<int64_t> sizes_;
  uint64_t flush_ = 0;
  int64_t flush_size_ = 0;
};

}  // namespace tilesmith::tuner
