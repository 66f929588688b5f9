// The CUDA driver, looked up at run time with dlopen so that the same binary runs, compiles
// and predicts on machines without one; nothing links against libcuda at build time.
#pragma once

#include <string>

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

}  // namespace tilesmith::tuner
