// `tilesmith parse` and `tilesmith fingerprint`: read a fusion (HLO text, or an AscGraph
// request lowered to HLO), check it, print it back normalised or canonical, and key it.
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "support/log.h"
#include "tools/commands.h"
#include "tools/fusion_loader.h"

namespace tilesmith::tools {
namespace {

int64_t CountInstructions(const hlo::HloModule& module) {
  int64_t count = 0;
  for (const auto& computation : module.computations()) count += computation->instruction_count();
  return count;
}

int RunParse(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one HLO or AscGraph file");
    return kExitUsage;
  }
  if (std::string emit = args.Get("emit", "hlo"); emit != "hlo") {
    ReportError("--emit supports hlo, not '" + emit + "'");
    return kExitUsage;
  }
  const std::string& path = args.positionals()[0];
  auto loaded = LoadFusion(path, args);
  if (!loaded) return ReportError(loaded.error().message);
  const hlo::HloModule& module = *loaded->module;
  TS_LOG(kDebug) << "parsed " << path << ": " << CountInstructions(module) << " instructions";
  if (args.Has("json")) {
    auto fingerprint = hlo::FusionFingerprint(module);
    if (!fingerprint) return ReportError(fingerprint.error().message);
    nlohmann::json computations = nlohmann::json::array();
    for (const auto& computation : module.computations()) {
      computations.push_back({{"name", computation->name()},
                              {"instructions", computation->instruction_count()},
                              {"parameters", computation->parameter_count()},
                              {"root_shape", hlo::ShapeToString(computation->root()->shape())}});
    }
    nlohmann::json result = {{"file", path},
                             {"format", loaded->request ? "ascgraph" : "hlo"},
                             {"module", module.name()},
                             {"entry", module.entry()->name()},
                             {"fusion", module.fusion()->name()},
                             {"instructions", CountInstructions(module)},
                             {"computations", computations},
                             {"fingerprint", *fingerprint}};
    if (loaded->request) {
      result["graph"] = loaded->request->graph.name;
      result["sizes"] = nlohmann::json::object();
      for (const auto& [name, value] : loaded->request->sizes) result["sizes"][name] = value;
    }
    if (args.Has("canonical")) result["canonical"] = hlo::CanonicalFusionText(module);
    std::cout << result.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << (args.Has("canonical") ? hlo::CanonicalFusionText(module)
                                      : hlo::PrintModule(module));
  return kExitOk;
}

int RunFingerprint(const cli::Args& args) {
  if (args.positionals().empty()) {
    ReportError("expected one or more HLO or AscGraph files");
    return kExitUsage;
  }
  nlohmann::json results = nlohmann::json::array();
  int status = kExitOk;
  for (const std::string& path : args.positionals()) {
    auto loaded = LoadFusion(path, args);
    if (!loaded) {
      status = ReportError(loaded.error().message);
      continue;
    }
    const hlo::HloModule& module = *loaded->module;
    auto fingerprint = hlo::FusionFingerprint(module);
    if (!fingerprint) {
      status = ReportError(fingerprint.error().message);
      continue;
    }
    if (args.Has("json")) {
      results.push_back(
          {{"file", path}, {"fusion", module.fusion()->name()}, {"fingerprint", *fingerprint}});
    } else {
      std::cout << *fingerprint << "  " << path << "\n";
    }
  }
  if (args.Has("json")) std::cout << results.dump(2) << "\n";
  return status;
}

}  // namespace

Subcommand ParseSubcommand() {
  cli::Command command("parse", "check a fusion and print it back as normalised HLO",
                       "FILE [--emit hlo] [--canonical] [--json] [--format F] [--sizes S=N,...]");
  AddFusionInputFlags(command)
      .Flag("emit", "hlo",
            "what to print: hlo (default), the module normalised; for AscGraph input, the "
            "lowered fusion")
      .Switch("canonical",
              "print the fusion's canonical form (positional names, no metadata): the text "
              "that is fingerprinted")
      .Switch("json",
              "print a JSON summary: format, module, entry, fusion, computations, fingerprint "
              "(AscGraph input: also graph and sizes)")
      .Epilog(FusionInputHelp() +
              "\n\nShapes are checked against operands; errors name FILE:LINE:COL.\n"
              "The fusion is the computation called by the entry's root fusion instruction, or\n"
              "the entry itself (the last computation when none is marked ENTRY).\n\n"
              "Examples:\n  tilesmith parse configs/examples/gelu.hlo --canonical\n"
              "  tilesmith parse configs/examples/ascgraph/softmax_last_axis.ascgraph.txt "
              "--sizes s0=8,s1=128 --emit hlo");
  return {std::move(command), &RunParse};
}

Subcommand FingerprintSubcommand() {
  cli::Command command("fingerprint", "print the SHA-256 key of each file's fusion",
                       "FILE... [--json] [--format F] [--sizes S=N,...]");
  AddFusionInputFlags(command)
      .Switch("json", "print a JSON array of {file, fusion, fingerprint}")
      .Epilog(
          FusionInputHelp() +
          "\n\nThe key ignores instruction names, metadata, backend_config and text order; it\n"
          "changes with any shape, layout, constant or attribute. An AscGraph's key is that of\n"
          "its lowered fusion, so it covers the graph and the size bindings.\n\n"
          "Example:\n  tilesmith fingerprint configs/examples/gelu.hlo");
  return {std::move(command), &RunFingerprint};
}

}  // namespace tilesmith::tools
