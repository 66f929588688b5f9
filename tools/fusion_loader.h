// One way for every subcommand to read "a fusion": HLO text, or an AscGraph request
// lowered to HLO (compiler/ascgraph). The format comes from the file name or --format.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "compiler/ascgraph/graph.h"
#include "compiler/hlo/hlo_module.h"
#include "support/status.h"
#include "tools/cli.h"

namespace tilesmith::tools {

/// A fusion read from a file: the module (for AscGraph input, the lowered one) and the
/// request it came from.
struct LoadedFusion {
  std::unique_ptr<hlo::HloModule> module;
  std::optional<ascgraph::Request> request;  // set for AscGraph input
};

/// Adds `--format hlo|ascgraph` and `--sizes s0=N,…` to a subcommand.
cli::Command& AddFusionInputFlags(cli::Command& command);

/// Help text on the accepted inputs, for a subcommand's epilog.
std::string FusionInputHelp();

/// Reads `path` as the flags of `AddFusionInputFlags` say.
Expected<LoadedFusion> LoadFusion(const std::string& path, const cli::Args& args);

}  // namespace tilesmith::tools
