// `tilesmith eval`: run a fusion through the reference evaluator.
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/npy.h"
#include "compiler/hlo/parser.h"
#include "support/log.h"
#include "support/sha256.h"
#include "tools/commands.h"
#include "tools/fusion_loader.h"

namespace tilesmith::tools {
namespace {

// Tuple results become one output per array, depth first.
void FlattenOutputs(const hlo::Literal& value, std::vector<const hlo::Literal*>& outputs) {
  if (value.shape().IsTuple()) {
    for (const hlo::Literal& element : value.tuple_elements()) FlattenOutputs(element, outputs);
  } else {
    outputs.push_back(&value);
  }
}

std::string Preview(const hlo::Literal& value, int64_t count) {
  std::string text;
  int64_t shown = std::min(count, value.element_count());
  for (int64_t i = 0; i < shown; ++i) {
    if (i > 0) text += ", ";
    text += hlo::ScalarToString(value, i);
  }
  if (shown < value.element_count()) text += ", ...";
  return text;
}

Expected<std::vector<hlo::Literal>> LoadArguments(const cli::Args& args,
                                                  const hlo::HloComputation& fusion,
                                                  const hlo::EvaluatorOptions& options) {
  std::vector<std::string> inputs = args.GetAll("input");
  if (!inputs.empty() && args.Has("random")) {
    return InvalidArgument("give either --input files or --random, not both");
  }
  if (args.Has("random") || (inputs.empty() && fusion.parameter_count() == 0)) {
    uint64_t seed = 0;
    try {
      seed = std::stoull(args.Get("seed", "0"));
    } catch (const std::exception&) {
      return InvalidArgument("--seed expects a non-negative integer");
    }
    return hlo::MakeRandomArguments(fusion, seed, options);
  }
  if (static_cast<int64_t>(inputs.size()) != fusion.parameter_count()) {
    std::string message =
        "'" + fusion.name() + "' has " + std::to_string(fusion.parameter_count()) + " parameters (";
    for (int64_t i = 0; i < fusion.parameter_count(); ++i) {
      if (i > 0) message += ", ";
      message +=
          fusion.parameter(i)->name() + ": " + hlo::ShapeToString(fusion.parameter(i)->shape());
    }
    message += "); give one --input per parameter, in order, or --random";
    return InvalidArgument(message);
  }
  std::vector<hlo::Literal> arguments;
  for (int64_t i = 0; i < fusion.parameter_count(); ++i) {
    TS_ASSIGN_OR_RETURN(hlo::Literal argument,
                        hlo::ReadNpy(inputs[i], fusion.parameter(i)->shape()));
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

int Run(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one HLO or AscGraph file");
    return kExitUsage;
  }
  hlo::EvaluatorOptions options;
  if (args.Has("max-memory-gib")) {
    try {
      options.max_value_bytes =
          static_cast<int64_t>(std::stod(args.Get("max-memory-gib")) * (int64_t{1} << 30));
    } catch (const std::exception&) {
      return ReportError("--max-memory-gib expects a number");
    }
  }
  const std::string& path = args.positionals()[0];
  auto loaded = LoadFusion(path, args);
  if (!loaded) return ReportError(loaded.error().message);
  const hlo::HloModule& module = *loaded->module;
  const hlo::HloComputation& fusion = *module.fusion();
  auto arguments = LoadArguments(args, fusion, options);
  if (!arguments) return ReportError(arguments.error().message);

  auto start = std::chrono::steady_clock::now();
  auto result = hlo::Evaluate(fusion, *arguments, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result) return ReportError(result.error().message);
  TS_LOG(kInfo) << "evaluated '" << fusion.name() << "' in " << seconds << " s";

  std::vector<const hlo::Literal*> outputs;
  FlattenOutputs(*result, outputs);
  std::vector<std::string> output_paths = args.GetAll("output");
  if (output_paths.size() > outputs.size()) {
    return ReportError(std::to_string(output_paths.size()) + " --output files for " +
                       std::to_string(outputs.size()) + " outputs");
  }
  nlohmann::json json_outputs = nlohmann::json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto bytes = hlo::SerializeNpy(*outputs[i]);
    if (!bytes) return ReportError(bytes.error().message);
    auto checksum =
        Sha256Hex(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    if (!checksum) return ReportError(checksum.error().message);
    if (i < output_paths.size()) {
      if (auto written = hlo::WriteNpy(output_paths[i], *outputs[i]); !written) {
        return ReportError(written.error().message);
      }
    }
    nlohmann::json entry = {{"shape", hlo::ShapeToString(outputs[i]->shape())},
                            {"elements", outputs[i]->element_count()},
                            {"checksum", *checksum}};
    if (i < output_paths.size()) entry["file"] = output_paths[i];
    if (args.Has("json")) {
      json_outputs.push_back(entry);
      continue;
    }
    std::cout << "output " << i << ": " << entry["shape"].get<std::string>() << "\n"
              << "  sha256 " << *checksum << "  (of the .npy bytes)\n"
              << "  values " << Preview(*outputs[i], 8) << "\n";
    if (i < output_paths.size()) std::cout << "  written to " << output_paths[i] << "\n";
  }
  if (args.Has("json")) {
    auto fingerprint = hlo::FusionFingerprint(module);
    nlohmann::json out = {{"file", path},
                          {"fusion", fusion.name()},
                          {"fingerprint", fingerprint.value_or("")},
                          {"seconds", seconds},
                          {"outputs", json_outputs}};
    std::cout << out.dump(2) << "\n";
  }
  return kExitOk;
}

}  // namespace

Subcommand EvalSubcommand() {
  cli::Command command(
      "eval", "run a fusion through the reference evaluator",
      "FILE [--input P.npy]... [--random [--seed N]] [--output O.npy]... [--json] [--format F] "
      "[--sizes S=N,...]");
  AddFusionInputFlags(command)
      .Flag("input", "P.npy",
            "value of the next parameter, in parameter order (AscGraph: Data index order)", true)
      .Switch("random", "use deterministic random inputs instead of --input files")
      .Flag("seed", "N", "seed for --random (default 0)")
      .Flag("output", "O.npy", "write the next output (tuple results: one per element)", true)
      .Flag("max-memory-gib", "G", "largest single value the evaluator may create (default 4)")
      .Switch("json",
              "print {file, fusion, fingerprint, seconds, outputs: [{shape, elements, "
              "checksum, file}]}")
      .Epilog(
          FusionInputHelp() +
          "\n\nFiles are NumPy .npy. Types NumPy lacks are stored as same-width unsigned integers\n"
          "holding the bits (bf16 as uint16, f8/f4 types as uint8), sub-byte integers one per\n"
          "byte. The checksum is the SHA-256 of the .npy bytes --output would write.\n"
          "Random inputs: floats uniform in [-1, 1), signed ints in [-8, 8), unsigned in\n"
          "[0, 16), pred 50/50.\n\n"
          "Examples:\n"
          "  tilesmith eval configs/examples/gelu.hlo --random --seed 1\n"
          "  tilesmith eval fusion.hlo --input x.npy --input y.npy --output out.npy --json\n"
          "  tilesmith eval configs/examples/ascgraph/abs_chain_3d.ascgraph.txt "
          "--sizes s0=4,s1=8,s2=16 --random");
  return {std::move(command), &Run};
}

}  // namespace tilesmith::tools
