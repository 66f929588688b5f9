// PTX -> cubin: in-process through nvJitLink when the build links it, else by running
// ptxas. Either way the resources ptxas assigned are read from its verbose report.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "support/status.h"

namespace tilesmith::codegen {

/// What ptxas assigned to one kernel (per thread unless said otherwise).
struct ResourceUsage {
  int64_t registers = 0;
  int64_t shared_bytes = 0;  // static shared memory per block
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t stack_bytes = 0;     // stack frame
  int64_t local_bytes = 0;     // local memory (lmem) beyond the stack frame, when reported
  int64_t constant_bytes = 0;  // constant bank 0 (parameters and driver data)
  int64_t spill_bytes() const { return spill_store_bytes + spill_load_bytes; }
};

/// A cubin and how it was made.
struct Cubin {
  std::string bytes;
  ResourceUsage usage;
  std::string compiler;  // "nvJitLink 13.0" or the ptxas path
  std::string info_log;  // ptxas's verbose report
};

/// Which assembler makes the cubin.
enum class CubinTool {
  kAuto,       // nvJitLink when linked in; ptxas if it is not or fails
  kNvJitLink,  // in-process only
  kPtxas,      // the ptxas subprocess only
};

/// Assembles `ptx` for `sm_<sm_version>` at -O3 and reports the resources of kernel
/// `entry`. With kAuto, both errors are returned when both tools fail.
Expected<Cubin> CompilePtxToCubin(std::string_view ptx, int sm_version, std::string_view entry,
                                  CubinTool tool = CubinTool::kAuto);

/// Reads the resources of `entry` from ptxas's verbose report: `ptxas -v` stderr or
/// nvJitLink's `-verbose` info log (lines such as `Function properties for NAME`,
/// `N bytes stack frame, N bytes spill stores, N bytes spill loads`, `Used N registers,
/// …, N bytes smem, N bytes cmem[0]`). NotFound when the report never names `entry`.
Expected<ResourceUsage> ParsePtxasReport(std::string_view report, std::string_view entry);

}  // namespace tilesmith::codegen
