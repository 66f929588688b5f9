// `tilesmith generate`: random but valid fusions (compiler/hlo/fusion_generator.h), the same
// text for the same seed and index on every machine, to judge cost models on fusions nobody
// tuned them to.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/hlo/fusion_generator.h"
#include "tools/commands.h"

namespace tilesmith::tools {
namespace {

namespace fs = std::filesystem;

Expected<hlo::FusionGeneratorOptions> GeneratorOptions(const cli::Args& args) {
  hlo::FusionGeneratorOptions options;
  if (args.Has("max-bytes")) {
    TS_ASSIGN_OR_RETURN(options.max_bytes, hlo::ParseByteCount(args.Get("max-bytes")));
  }
  if (args.Has("min-bytes")) {
    TS_ASSIGN_OR_RETURN(options.min_bytes, hlo::ParseByteCount(args.Get("min-bytes")));
  }
  TS_ASSIGN_OR_RETURN(int64_t max_ops, args.GetWholeNumber("max-ops", options.max_ops));
  options.max_ops = static_cast<int>(std::min<int64_t>(max_ops, 1 << 20));
  TS_RETURN_IF_ERROR(hlo::ValidateGeneratorOptions(options));
  return options;
}

int RunGenerate(const cli::Args& args) {
  if (!args.positionals().empty()) {
    ReportError("generate takes no files; it writes to --out DIR or stdout");
    return kExitUsage;
  }
  if (!args.Has("seed")) {
    ReportError("--seed S is required: the same seed gives the same fusions");
    return kExitUsage;
  }
  auto seed = args.GetWholeNumber("seed", 0);
  auto count = args.GetWholeNumber("count", 1);
  auto first = args.GetWholeNumber("first", 0);
  auto options = GeneratorOptions(args);
  for (const auto* status : {&seed, &count, &first}) {
    if (!*status) {
      ReportError(status->error().message);
      return kExitUsage;
    }
  }
  if (!options) {
    ReportError(options.error().message);
    return kExitUsage;
  }
  fs::path out = args.Get("out");
  if (!out.empty()) {
    std::error_code error;
    fs::create_directories(out, error);
    if (error) return ReportError("cannot create '" + out.string() + "': " + error.message());
  }
  nlohmann::json listing = nlohmann::json::array();
  for (int64_t index = *first; index < *first + *count; ++index) {
    hlo::GeneratedFusion fusion =
        hlo::GenerateFusion(static_cast<uint64_t>(*seed), index, *options);
    nlohmann::json entry = {
        {"name", fusion.name},       {"index", index},
        {"pattern", fusion.pattern}, {"type", hlo::PrimitiveTypeName(fusion.type)},
        {"bytes", fusion.bytes},     {"ops", fusion.ops}};
    if (out.empty()) {
      if (!args.Has("json")) std::cout << (index > *first ? "// -----\n" : "") << fusion.text;
      entry["text"] = fusion.text;
    } else {
      fs::path path = out / (fusion.name + ".hlo");
      std::ofstream file(path);
      file << fusion.text;
      file.close();
      if (!file) return ReportError("cannot write '" + path.string() + "'");
      entry["file"] = path.string();
      if (!args.Has("json")) std::cout << path.string() << "\n";
    }
    listing.push_back(std::move(entry));
  }
  if (args.Has("json")) std::cout << listing.dump(2) << "\n";
  return kExitOk;
}

}  // namespace

Subcommand GenerateSubcommand() {
  cli::Command command("generate", "write random but valid fusions, the same for the same seed",
                       "--seed S [--count N] [--first I] [--max-bytes B] [--min-bytes B] "
                       "[--max-ops N] [--out DIR] [--json]");
  command
      .Flag("seed", "S",
            "the seed (a whole number): fusion I of seed S is the same text "
            "on every machine")
      .Flag("count", "N", "how many fusions (default 1)")
      .Flag("first", "I", "the index of the first (default 0)")
      .Flag("max-bytes", "B",
            "the most bytes of parameters and outputs together (default 64M; at least 16K; "
            "K, M and G are powers of 1024)")
      .Flag("min-bytes", "B", "the fewest bytes (default 1K)")
      .Flag("max-ops", "N",
            "the most instructions besides parameters and constants (default "
            "12, at least 4)")
      .Flag("out", "DIR",
            "write gen_<seed>_<index>.hlo files into DIR (made if missing) and "
            "print their paths; without it the modules go to stdout, separated "
            "by a `// -----` line")
      .Switch("json",
              "print a JSON list instead: name, index, pattern, type, bytes, ops, and "
              "the file (with --out) or the text")
      .Epilog(
          "Each fusion is a module in the corpus's dialect: the fused computation (and its\n"
          "reducers) and an ENTRY whose root is a `fusion` calling it. Patterns: loop,\n"
          "broadcast, slice, input_slices, concatenate, transpose, row_reduction,\n"
          "column_reduction, reduce_window, dynamic_update_slice, scatter; inputs f32, bf16,\n"
          "f16, s32 or s8; 1 to --max-ops ops; sizes log-uniform between the byte bounds.\n\n"
          "Examples:\n  tilesmith generate --seed 7 --count 40 --max-bytes 8M --out gen/\n"
          "  tilesmith generate --seed 7 --first 3 | tilesmith check /dev/stdin --target host");
  return {std::move(command), &RunGenerate};
}

}  // namespace tilesmith::tools
