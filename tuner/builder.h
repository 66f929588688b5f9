// The builder: compiles a batch of candidates in parallel on a thread pool (compilation is
// what dominates tuning time elsewhere), each through its backend's Build (backends/): for
// CUDA to the cubin, with the registers, shared memory and spills ptxas assigned; for the
// host to optimised LLVM IR — machine code cannot cross into the worker process, so the
// worker JITs it again. The builder's part there is to reject what does not compile before
// anything is run, and to count what the optimised code executes for the host model.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "tuner/backends/backend.h"
#include "tuner/backends/build_stats.h"

namespace tilesmith::tuner {

/// One candidate to compile: the fusion (under its layout choice) and the emitter config.
struct BuildRequest {
  const analysis::FusionAnalysis* analysis = nullptr;
  nlohmann::json config;
};

/// The message of a build skipped because `cancelled` said so (never a compile failure).
inline constexpr std::string_view kBuildCancelled = "cancelled before compiling";

/// Compiles every request with `backend` on `threads` threads (0: one per core); results in
/// the requests' order. Once `cancelled` answers true, requests not yet started are skipped
/// (not ok, message kBuildCancelled), so a stop waits for at most one compile per thread.
std::vector<BuildResult> BuildBatch(std::span<const BuildRequest> requests, const Backend& backend,
                                    int threads = 0, const std::function<bool()>& cancelled = {});

}  // namespace tilesmith::tuner
