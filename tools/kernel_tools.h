// Helpers shared by the commands that compile and run kernels (analyze, compile, run,
// check).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compiler/emitters/target.h"
#include "compiler/hlo/hlo_module.h"
#include "support/status.h"
#include "tools/cli.h"

namespace tilesmith::tools {

/// `--config JSON` (an object, or `@file.json`); null when absent (the default config).
Expected<nlohmann::json> ParseConfigFlag(const cli::Args& args);

/// One compiled stage: its text (kernel IR, LLVM IR, PTX, cubin bytes) and statistics
/// (`compile_ms`, `grid`, `block`, `registers`, `shared_bytes`, `spill_bytes`, …).
struct CompileOutput {
  std::string text;
  nlohmann::json stats;
};

/// Emits and compiles `fusion` with `config` for `target` up to stage `emit`.
Expected<CompileOutput> CompileFusion(const hlo::HloComputation& fusion,
                                      const emitters::Target& target, const nlohmann::json& config,
                                      const std::string& emit);

/// For every fusion output and parameter, the maps from an output element to the parameter
/// elements it reads: `[{output, parameter, map}]`.
nlohmann::json OutputToParameterMaps(const hlo::HloComputation& fusion);

}  // namespace tilesmith::tools
