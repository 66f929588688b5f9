// Kernel durations from CUPTI's activity API, the figure XLA reports for a kernel: the GPU's
// own start and end timestamps of each execution, without the launch that CUDA events
// around it also count (about 2 us on an H100). libcupti is looked up at run time with
// dlopen, as the driver is (cuda_driver.h), so binaries without it still run and time with
// events. Nothing here includes CUPTI's headers: the few record fields read are at offsets
// that every kernel record version (CUpti_ActivityKernel4 to 10) shares, which the tests
// check against the toolkit's cupti_activity.h.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace tilesmith::tuner {

/// Where libcupti was found, or why it was not usable.
struct CuptiProbe {
  bool loaded = false;  ///< Opened, and every function the recorder calls resolved.
  std::string path;     ///< The file that was opened.
  std::string message;  ///< One line for a human: what was found, or why nothing was.
};

/// Loads libcupti (once per process): `$TILESMITH_CUPTI` when set (and only it), else
/// `lib/libcupti.so.13` beside the executable (the GPU bundle), the loader's own search for
/// `libcupti.so.13` and `libcupti.so`, then `lib64/` and `extras/CUPTI/lib64/` under
/// `$CUDA_HOME`, `$CUDA_PATH` and `/usr/local/cuda`.
CuptiProbe ProbeCupti();

/// The file names ProbeCupti tries, in order.
std::vector<std::string> CuptiCandidates();

/// ProbeCupti's search over `candidates` only, without caching or touching the library the
/// recorder uses (absolute paths that do not exist are passed over; a bare name goes to the
/// loader's search).
CuptiProbe ProbeCuptiAmong(const std::vector<std::string>& candidates);

/// One kernel execution as CUPTI recorded it.
struct KernelActivity {
  uint32_t correlation_id = 0;  ///< Ties the record to its launch; increases launch by launch.
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  std::string name;  ///< The kernel's (mangled) function name.
  double duration_us() const { return static_cast<double>(end_ns - start_ns) / 1000.0; }
};

/// What a series of completed activity buffers held.
struct ActivityTally {
  std::vector<KernelActivity> kernels;  ///< KERNEL and CONCURRENT_KERNEL records.
  int64_t skipped = 0;  ///< Records of other kinds (memsets, copies, …): not kernels.
  int64_t untimed = 0;  ///< Kernel records whose start and end are both 0 (no timestamps).
  int64_t dropped = 0;  ///< Records CUPTI dropped for want of buffer space.
};

/// The activity kinds read as kernel executions (CUpti_ActivityKind values).
inline constexpr uint32_t kCuptiKindKernel = 3;
inline constexpr uint32_t kCuptiKindConcurrentKernel = 10;

/// Reads every record of one completed buffer (`valid_bytes` of it) into `tally` with
/// CUPTI's own record walker (cuptiActivityGetNextRecord), and adds `dropped` (what
/// cuptiActivityGetNumDroppedRecords reported with it). Fails without libcupti, or when
/// the walker rejects the buffer.
Status ReadActivityBuffer(std::span<const uint8_t> buffer, size_t valid_bytes, size_t dropped,
                          ActivityTally& tally);

/// The durations, in microseconds and launch order (by correlation id), of the executions
/// of the kernel named `entry`; an error that says why unless there is exactly one timed
/// record per launch (`launches`) and none was dropped.
Expected<std::vector<double>> KernelDurationsUs(const ActivityTally& tally, std::string_view entry,
                                                int64_t launches);

/// Records kernel executions process-wide (CUPTI has one set of buffers per process)
/// between Begin and End. Needs a CUDA context on the calling thread for Begin to succeed.
class KernelActivityRecorder {
 public:
  /// Loads libcupti and registers the buffer callbacks; an error names why it cannot.
  static Expected<std::unique_ptr<KernelActivityRecorder>> Create();
  ~KernelActivityRecorder();
  KernelActivityRecorder(const KernelActivityRecorder&) = delete;
  KernelActivityRecorder& operator=(const KernelActivityRecorder&) = delete;

  /// Starts recording CONCURRENT_KERNEL activity; earlier records are discarded.
  Status Begin();
  /// Stops recording, flushes every buffer CUPTI holds and returns what they held. Call after
  /// the recorded kernels finished (synchronised).
  Expected<ActivityTally> End();

 private:
  KernelActivityRecorder() = default;
  bool enabled_ = false;
};

}  // namespace tilesmith::tuner
