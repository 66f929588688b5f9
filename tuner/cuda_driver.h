// The CUDA driver, looked up at run time with dlopen so that the same binary runs, compiles
// and predicts on machines without one; nothing links against libcuda at build time.
#pragma once

#include <string>

#include "support/status.h"

namespace tilesmith::tuner {

/// What this machine offers for timing CUDA kernels.
struct CudaDriverProbe {
  bool loaded = false;     ///< libcuda.so.1 was found and cuInit succeeded.
  int driver_version = 0;  ///< cuDriverGetVersion, e.g. 12040.
  int device_count = 0;
  std::string message;  ///< One line for a human: what was found, or why nothing was.
};

/// Loads libcuda.so.1 (once per process) and asks it for its version and GPUs.
CudaDriverProbe ProbeCudaDriver();

/// `cuda:sm_90` for `cuda:0` (the GPU's architecture, from nvidia-smi: the driver's own
/// report); any other target unchanged. Only GPU 0 is timed, so other ordinals are errors,
/// as is `cuda:0` on a machine without a GPU (the message says to name the architecture).
Expected<std::string> GpuTargetOf(const std::string& target);

/// The driver of GPU 0 as results are keyed by: nvidia-smi's driver version (`580.159.04`),
/// else the driver API's (`CUDA 13.0`); empty without a driver and a GPU.
std::string GpuDriverVersion();

}  // namespace tilesmith::tuner
