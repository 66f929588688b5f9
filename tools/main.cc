// `tilesmith`: the command-line front door. `tilesmith --help` lists the subcommands;
// `tilesmith <subcommand> --help` explains one.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <span>

#include "support/log.h"
#include "tools/commands.h"

namespace tilesmith::tools {

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> subcommands = {
      LayoutSubcommand(),   ParseSubcommand(),    FingerprintSubcommand(), EvalSubcommand(),
      GenerateSubcommand(), AnalyzeSubcommand(),  CompileSubcommand(),     RunSubcommand(),
      CheckSubcommand(),    ScheduleSubcommand(), DbSubcommand(),          SpaceSubcommand(),
      TuneSubcommand(),     PredictSubcommand(),  ModelSubcommand(),       SweepSubcommand(),
      WorkerSubcommand(),   ServeSubcommand(),    AgentSubcommand(),       ReportSubcommand(),
      SplitSubcommand()};
  return subcommands;
}

int ReportError(const std::string& message) {
  // Parser messages already read `file:line:col: error: …`.
  if (message.find(": error: ") == std::string::npos) std::cerr << "error: ";
  std::cerr << message << "\n";
  return kExitFailure;
}

namespace {

void PrintUsage(std::FILE* out) {
  std::string text = "tilesmith " TILESMITH_VERSION
                     ": autotuning and cost-model service for fused kernels\n\n"
                     "Usage: tilesmith [--log-level LEVEL] <command> [options]\n\nCommands:\n";
  for (const Subcommand& subcommand : Subcommands()) {
    std::string name = "  " + subcommand.definition.name();
    name.append(name.size() < 16 ? 16 - name.size() : 1, ' ');
    text += name + subcommand.definition.summary() + "\n";
  }
  text +=
      "  version       print the tool and compiler versions\n\n"
      "Global options:\n"
      "  --log-level L  debug, info (default), warning or error; logs go to stderr\n\n"
      "Run 'tilesmith <command> --help' for a command's options.\n";
  std::fputs(text.c_str(), out);
}

}  // namespace
}  // namespace tilesmith::tools

int main(int argc, char** argv) {
  using namespace tilesmith::tools;
  std::span<char* const> args(argv + 1, argc - 1);
  while (!args.empty() && std::strncmp(args[0], "--log-level", 11) == 0) {
    std::string value;
    if (std::strlen(args[0]) > 11 && args[0][11] == '=') {
      value = args[0] + 12;
      args = args.subspan(1);
    } else if (args.size() >= 2) {
      value = args[1];
      args = args.subspan(2);
    } else {
      ReportError("--log-level needs a value");
      return kExitUsage;
    }
    tilesmith::LogLevel level;
    if (!tilesmith::ParseLogLevel(value, &level)) {
      ReportError("unknown log level '" + value + "' (debug, info, warning, error)");
      return kExitUsage;
    }
    tilesmith::SetLogLevel(level);
  }
  if (args.empty() || std::strcmp(args[0], "--help") == 0 || std::strcmp(args[0], "-h") == 0 ||
      std::strcmp(args[0], "help") == 0) {
    PrintUsage(args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  std::string name = args[0];
  if (name == "version" || name == "--version") {
    std::printf("tilesmith %s (compiler %s)\n", TILESMITH_VERSION, TILESMITH_COMPILER_VERSION);
    return kExitOk;
  }
  for (const Subcommand& subcommand : Subcommands()) {
    if (subcommand.definition.name() != name) continue;
    auto parsed = subcommand.definition.Parse(args.subspan(1));
    if (!parsed) {
      ReportError(parsed.error().message);
      return kExitUsage;
    }
    if (parsed->Has("help")) {
      std::fputs(subcommand.definition.Help().c_str(), stdout);
      return kExitOk;
    }
    return subcommand.run(*parsed);
  }
  ReportError("unknown command '" + name + "'");
  PrintUsage(stderr);
  return kExitUsage;
}
