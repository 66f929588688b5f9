// What compiling one candidate told: a typed record the session, the rankings and the cost
// models read by field. It is stored with every trial and prediction as JSON (ToJson), under
// the field names the database and the CLI have always used, and read back with FromJson.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "costmodel/cost_model.h"

namespace tilesmith::tuner {

/// One candidate's compile statistics. Zero means "not known" (a build that failed before
/// the emitter gave a launch grid, a host build without a cubin); ToJson leaves those out.
struct BuildStats {
  double compile_ms = 0;          ///< Emit + compile in the builder.
  int64_t threads_per_block = 0;  ///< Of the emitted launch grid.
  int64_t blocks = 0;
  /// CUDA: the cubin's registers, shared bytes and spills; host: what a block executes.
  costmodel::ResourceUsage usage;
  /// The worker's own compile of a measured candidate (`worker_compile_ms`).
  std::optional<double> worker_compile_ms;

  /// The stored form: `compile_ms`, `threads_per_block`, `blocks`, `registers`,
  /// `shared_bytes`, `spill_bytes`, `executed_*`, `worker_compile_ms` (known fields only).
  nlohmann::json ToJson() const;
  /// Reads the stored form back; absent or non-numeric fields count as not known.
  static BuildStats FromJson(const nlohmann::json& stats);
};

/// One candidate's compilation: its stats (what is known even when it failed: a failed
/// compile still has its launch grid) and, when it failed, why.
struct BuildResult {
  bool ok = false;
  std::string message;  ///< Why it failed.
  BuildStats stats;
};

}  // namespace tilesmith::tuner
