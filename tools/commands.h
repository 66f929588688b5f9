// The tilesmith subcommands. Each has a definition (flags, help) and a runner that
// writes results to stdout (text, or JSON with --json) and logs to stderr.
#pragma once

#include <string>
#include <vector>

#include "tools/cli.h"

namespace tilesmith::tools {

/// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the input was bad or the work failed
inline constexpr int kExitUsage = 2;    // the command line was bad

struct Subcommand {
  cli::Command definition;
  int (*run)(const cli::Args& args);
};

/// Every subcommand, in the order `tilesmith --help` lists them.
const std::vector<Subcommand>& Subcommands();

// Registered by the command files.
Subcommand LayoutSubcommand();
Subcommand ParseSubcommand();
Subcommand FingerprintSubcommand();
Subcommand EvalSubcommand();
Subcommand GenerateSubcommand();
Subcommand ScheduleSubcommand();
Subcommand AnalyzeSubcommand();
Subcommand CompileSubcommand();
Subcommand RunSubcommand();
Subcommand CheckSubcommand();
Subcommand DbSubcommand();
Subcommand ReportSubcommand();
Subcommand SpaceSubcommand();
Subcommand TuneSubcommand();
Subcommand PredictSubcommand();
Subcommand ModelSubcommand();
Subcommand SweepSubcommand();
Subcommand SplitSubcommand();
Subcommand WorkerSubcommand();
Subcommand ServeSubcommand();
Subcommand AgentSubcommand();

/// Prints `error: <message>` to stderr and returns kExitFailure.
int ReportError(const std::string& message);

}  // namespace tilesmith::tools
