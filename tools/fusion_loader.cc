#include "tools/fusion_loader.h"

#include <filesystem>

#include "compiler/ascgraph/lower.h"
#include "compiler/ascgraph/reader.h"
#include "compiler/hlo/parser.h"
#include "support/log.h"

namespace tilesmith::tools {

cli::Command& AddFusionInputFlags(cli::Command& command) {
  return command
      .Flag("format", "F",
            "hlo or ascgraph (default: ascgraph for *.ascgraph.txt, *.ascgraph.json, *.pb)")
      .Flag("sizes", "S=N,...",
            "bind AscGraph size variables, e.g. s0=2048,s1=64 (overrides the request's sizes)");
}

std::string FusionInputHelp() {
  return "FILE is HLO text, or an AscGraph request: an AscGraphDef in protobuf text format\n"
         "(*.ascgraph.txt), binary (*.pb) or proto3 JSON (*.ascgraph.json, optionally a request\n"
         "{\"graph\": …, \"sizes\": {\"s0\": 2048}, \"platform\": {…}}). AscGraphs are validated\n"
         "and lowered to an HLO fusion; size variables need bindings (--sizes or \"sizes\").";
}

Expected<LoadedFusion> LoadFusion(const std::string& path, const cli::Args& args) {
  std::string format = args.Get("format");
  if (!format.empty() && format != "hlo" && format != "ascgraph") {
    return InvalidArgument("--format must be hlo or ascgraph, not '" + format + "'");
  }
  // Reading a directory "succeeds" with no bytes, which would read as an empty module.
  if (std::error_code error; std::filesystem::is_directory(path, error)) {
    return InvalidArgument(path +
                           ": is a directory; FILE must be a fusion file (HLO text or "
                           "an AscGraph request)");
  }
  bool ascgraph = format.empty() ? ascgraph::IsAscGraphPath(path) : format == "ascgraph";
  LoadedFusion loaded;
  if (!ascgraph) {
    if (args.Has("sizes")) return InvalidArgument("--sizes applies to AscGraph input only");
    TS_ASSIGN_OR_RETURN(loaded.module, hlo::ParseHloModuleFile(path));
    return loaded;
  }
  ascgraph::ReadOptions options;
  if (args.Has("sizes")) {
    auto sizes = ascgraph::ParseSizeBindings(args.Get("sizes"));
    if (!sizes) return std::unexpected(sizes.error().WithContext("--sizes"));
    options.sizes = std::move(*sizes);
  }
  TS_ASSIGN_OR_RETURN(ascgraph::Request request, ascgraph::ReadRequestFile(path, options));
  auto module = ascgraph::LowerToHlo(request);
  if (!module) return std::unexpected(module.error().WithContext(path + ": error"));
  TS_LOG(kDebug) << "lowered AscGraph '" << request.graph.name << "' from " << path;
  loaded.module = std::move(*module);
  loaded.request = std::move(request);
  return loaded;
}

}  // namespace tilesmith::tools
