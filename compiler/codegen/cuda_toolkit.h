// Where the CUDA toolkit pieces the NVPTX target needs live: libdevice (math), ptxas (the
// cubin fallback) and whether nvJitLink (in-process cubins) was linked in. Compiling for a
// GPU needs only the toolkit, never a GPU or its driver.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "support/status.h"

namespace tilesmith::codegen {

/// The toolkit root: the first of `cuda/` beside the executable (an unpacked bundle),
/// `$CUDA_HOME`, `$CUDA_PATH` and `/usr/local/cuda` that holds
/// `nvvm/libdevice/libdevice.10.bc`, or only `$TILESMITH_CUDA_DIR` when that is set. Empty
/// when none does.
std::optional<std::filesystem::path> CudaToolkitDir();

/// `<toolkit>/nvvm/libdevice/libdevice.10.bc`, or FailedPrecondition naming where we looked.
Expected<std::filesystem::path> LibdevicePath();

/// `bin/ptxas` under the toolkit candidates (or `ptxas` on PATH unless `$TILESMITH_CUDA_DIR`
/// is set), or FailedPrecondition.
Expected<std::filesystem::path> PtxasPath();

/// True when this build links nvJitLink, so cubins are made in-process.
bool HaveNvJitLink();

/// True when PTX can be turned into a cubin here (nvJitLink, or a ptxas to run).
bool CanMakeCubins();

/// The CUDA version of the nvJitLink that makes cubins (`CUDA 13.0`); empty without one
/// (a ptxas found at run time may differ from call to call, so it names no version).
std::string CubinToolkitVersion();

}  // namespace tilesmith::codegen
