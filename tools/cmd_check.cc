// `tilesmith run` and `tilesmith check`: execute compiled kernels on the host, and compare
// every output of every config with the reference evaluator.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/host_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/emitters/loop_emitter.h"
#include "compiler/emitters/reduction_emitter.h"
#include "compiler/hlo/canonical.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/npy.h"
#include "support/log.h"
#include "support/sha256.h"
#include "tools/commands.h"
#include "tools/fusion_loader.h"
#include "tools/kernel_tools.h"
#include "tuner/host_memory.h"
#include "tuner/verify.h"

namespace tilesmith::tools {
namespace {

Expected<emitters::Target> HostTarget(const cli::Args& args) {
  TS_ASSIGN_OR_RETURN(emitters::Target target, emitters::Target::Parse(args.Get("target", "host")));
  // `check` runs the kernel in this process, through the host's JIT.
  if (target != emitters::Target::Host()) {
    return Unimplemented("running on " + target.ToString() +
                         " needs the CUDA measurer (a GPU); use --target host");
  }
  return target;
}

Expected<std::vector<hlo::Literal>> Arguments(const cli::Args& args,
                                              const hlo::HloComputation& fusion) {
  std::vector<std::string> inputs = args.GetAll("input");
  if (inputs.empty()) {
    uint64_t seed = std::stoull(args.Get("seed", "0"));
    return hlo::MakeRandomArguments(fusion, seed);
  }
  if (static_cast<int64_t>(inputs.size()) != fusion.parameter_count()) {
    return InvalidArgument("'" + fusion.name() + "' has " +
                           std::to_string(fusion.parameter_count()) +
                           " parameters; give one --input per parameter or none for random inputs");
  }
  std::vector<hlo::Literal> arguments;
  for (int64_t i = 0; i < fusion.parameter_count(); ++i) {
    TS_ASSIGN_OR_RETURN(hlo::Literal argument,
                        hlo::ReadNpy(inputs[i], fusion.parameter(i)->shape()));
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

int RunRun(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one fusion file");
    return kExitUsage;
  }
  auto loaded = LoadFusion(args.positionals()[0], args);
  if (!loaded) return ReportError(loaded.error().message);
  const hlo::HloComputation& fusion = *loaded->module->fusion();
  auto target = HostTarget(args);
  if (!target) return ReportError(target.error().message);
  if (auto fits = tuner::CheckFitsHostMemory(fusion); !fits) {
    return ReportError(fits.error().message);
  }
  auto config = ParseConfigFlag(args);
  if (!config) return ReportError(config.error().message);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(*target);
  if (!config->is_null()) {
    if (auto valid = emitters::ValidateConfig(analysis, *config, device); !valid) {
      return ReportError(valid.error().message);
    }
  }
  auto kernel = emitters::EmitKernel(analysis, *config, device);
  if (!kernel) return ReportError(kernel.error().message);
  auto compiled = codegen::CompileForHost(std::move(*kernel));
  if (!compiled) return ReportError(compiled.error().message);
  auto arguments = Arguments(args, fusion);
  if (!arguments) return ReportError(arguments.error().message);
  auto start = std::chrono::steady_clock::now();
  auto outputs = (*compiled)->Run(*arguments);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!outputs) return ReportError(outputs.error().message);
  TS_LOG(kInfo) << "ran '" << fusion.name() << "' on the host in " << seconds << " s";
  std::vector<std::string> paths = args.GetAll("output");
  if (paths.size() > outputs->size()) {
    return ReportError(std::to_string(paths.size()) + " --output files for " +
                       std::to_string(outputs->size()) + " outputs");
  }
  nlohmann::json json_outputs = nlohmann::json::array();
  for (size_t i = 0; i < outputs->size(); ++i) {
    const hlo::Literal& output = (*outputs)[i];
    if (i < paths.size()) {
      if (auto written = hlo::WriteNpy(paths[i], output); !written) {
        return ReportError(written.error().message);
      }
    }
    auto bytes = hlo::SerializeNpy(output);
    if (!bytes) return ReportError(bytes.error().message);
    auto checksum =
        Sha256Hex(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    json_outputs.push_back(
        {{"shape", hlo::ShapeToString(output.shape())}, {"checksum", checksum.value_or("")}});
    if (!args.Has("json")) {
      std::cout << "output " << i << ": " << hlo::ShapeToString(output.shape()) << "  sha256 "
                << checksum.value_or("") << "\n";
    }
  }
  if (args.Has("json")) {
    std::cout << nlohmann::json{{"fusion", fusion.name()},
                                {"seconds", seconds},
                                {"config",
                                 nlohmann::json::parse((*compiled)->kernel().config_json)},
                                {"outputs", json_outputs}}
                     .dump(2)
              << "\n";
  }
  return kExitOk;
}

int RunCheck(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one fusion file");
    return kExitUsage;
  }
  auto loaded = LoadFusion(args.positionals()[0], args);
  if (!loaded) return ReportError(loaded.error().message);
  const hlo::HloComputation& fusion = *loaded->module->fusion();
  auto target = HostTarget(args);
  if (!target) return ReportError(target.error().message);
  if (auto fits = tuner::CheckFitsHostMemory(fusion); !fits) {
    return ReportError(fits.error().message);
  }
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(*target);

  std::string which = args.Get("configs", "default");
  std::vector<nlohmann::json> configs;
  int64_t valid_configs = 0;  // the space's valid configs, when a sample of them is checked
  if (which == "default") {
    configs.push_back(emitters::DefaultConfig(analysis, device));
  } else if (!which.empty() && which.front() == '{') {
    nlohmann::json config = nlohmann::json::parse(which, nullptr, false);
    if (config.is_discarded() || !config.is_object()) {
      ReportError("--configs: '" + which + "' is not a JSON object");
      return kExitUsage;
    }
    configs.push_back(emitters::OverlayConfig(emitters::DefaultConfig(analysis, device), config));
  } else {
    for (const emitters::SpaceEntry& entry : emitters::ConfigSpace(analysis, device)) {
      if (entry.valid()) configs.push_back(entry.config);
    }
    if (which != "all") {
      int64_t count = 0;
      try {
        count = std::stoll(which);
      } catch (const std::exception&) {
        ReportError("--configs expects default, all or a number");
        return kExitUsage;
      }
      std::mt19937_64 random(std::stoull(args.Get("seed", "0")));
      std::shuffle(configs.begin(), configs.end(), random);
      if (count < static_cast<int64_t>(configs.size())) {
        valid_configs = static_cast<int64_t>(configs.size());
        configs.resize(std::max<int64_t>(count, 0));
      }
    }
  }
  auto arguments = Arguments(args, fusion);
  if (!arguments) return ReportError(arguments.error().message);
  auto reference = hlo::Evaluate(fusion, *arguments);
  if (!reference)
    return ReportError("the reference evaluator failed: " + reference.error().message);
  // Tuple results become one output per array, depth first (as `eval` writes them).
  std::vector<const hlo::Literal*> expected = tuner::FlattenOutputs(*reference);
  // Each output is judged at the narrowest precision its value was rounded to.
  std::vector<hlo::PrimitiveType> precisions = tuner::OutputPrecisions(fusion);

  nlohmann::json results = nlohmann::json::array();
  int64_t passed = 0;
  if (valid_configs > 0 && !args.Has("json")) {
    std::cout << "sampled " << configs.size() << " of " << valid_configs
              << " valid configs (--seed " << args.Get("seed", "0") << ")\n";
  }
  for (const nlohmann::json& config : configs) {
    nlohmann::json entry = {{"config", config}};
    auto kernel = emitters::EmitKernel(analysis, config, device);
    int64_t terms = kernel ? emitters::ReassociatedTerms(analysis, *kernel) : 1;
    auto compiled =
        kernel ? codegen::CompileForHost(std::move(*kernel))
               : Expected<std::unique_ptr<codegen::HostKernel>>(std::unexpected(kernel.error()));
    auto outputs = compiled
                       ? (*compiled)->Run(*arguments)
                       : Expected<std::vector<hlo::Literal>>(std::unexpected(compiled.error()));
    if (!outputs) {
      entry["passed"] = false;
      entry["error"] = outputs.error().message;
    } else {
      tuner::OutputComparison comparison =
          tuner::CompareOutputs(*outputs, expected, terms, precisions);
      entry["passed"] = comparison.matches;
      entry["largest_error"] = comparison.largest_error;
      entry["tolerance"] = {{"relative", comparison.relative_tolerance},
                            {"absolute", comparison.absolute_tolerance},
                            {"reassociated_terms", terms}};
      entry["mismatches"] = comparison.mismatches;
      if (!comparison.first_mismatch.empty()) entry["first_mismatch"] = comparison.first_mismatch;
    }
    passed += entry["passed"].get<bool>();
    if (!args.Has("json")) {
      std::cout << (entry["passed"].get<bool>() ? "pass " : "FAIL ") << config.dump();
      if (entry.contains("largest_error")) {
        std::cout << "  largest error " << entry["largest_error"].get<double>();
        const nlohmann::json& tolerance = entry["tolerance"];
        if (tolerance["relative"].get<double>() > 0) {
          std::cout << " (tolerance " << tolerance["relative"].get<double>() << " relative, "
                    << tolerance["absolute"].get<double>() << " absolute";
          if (tolerance["reassociated_terms"].get<int64_t>() > 1) {
            std::cout << ", up to " << tolerance["reassociated_terms"].get<int64_t>()
                      << " terms combined in another order";
          }
          std::cout << ")";
        }
      }
      if (entry.contains("first_mismatch")) {
        std::cout << "  " << entry["first_mismatch"].get<std::string>();
      }
      if (entry.contains("error")) std::cout << "  " << entry["error"].get<std::string>();
      std::cout << "\n";
    }
    results.push_back(std::move(entry));
  }
  int64_t checked = static_cast<int64_t>(configs.size());
  if (args.Has("json")) {
    nlohmann::json summary{{"fusion", fusion.name()},    {"target", target->ToString()},
                           {"checked", checked},         {"passed", passed},
                           {"failed", checked - passed}, {"results", results}};
    if (valid_configs > 0) {
      summary["sampled"] = true;
      summary["valid_configs"] = valid_configs;
    }
    std::cout << summary.dump(2) << "\n";
  } else {
    std::cout << "checked " << checked << ", passed " << passed << ", failed " << checked - passed
              << "\n";
  }
  // The exit status says it too, and stderr says why, so a script sees more than a code.
  if (checked == 0 || passed != checked) {
    std::cerr << "tilesmith check: " << checked - passed << " of " << checked
              << " configs did not match the evaluator\n";
  }
  return checked > 0 && passed == checked ? kExitOk : kExitFailure;
}

}  // namespace

Subcommand RunSubcommand() {
  cli::Command command("run", "compile a fusion and execute it on the host",
                       "FILE --target host [--config JSON] [--input P.npy]... [--seed N] "
                       "[--output O.npy]... [--json]");
  AddFusionInputFlags(command)
      .Flag("target", "T", "host (the only target that runs here)")
      .Flag("config", "JSON", "emitter config (default: XLA's choice)")
      .Flag("input", "P.npy", "value of the next parameter (none: random inputs)", true)
      .Flag("seed", "N", "seed of the random inputs (default 0)")
      .Flag("output", "O.npy", "write the next output", true)
      .Switch("json", "print {fusion, seconds, config, outputs: [{shape, checksum}]}")
      .Epilog(FusionInputHelp());
  return {std::move(command), &RunRun};
}

Subcommand CheckSubcommand() {
  cli::Command command("check", "run configs on the host and compare with the evaluator",
                       "FILE --target host [--configs default|all|N|JSON] [--seed N] [--json]");
  AddFusionInputFlags(command)
      .Flag("target", "T", "host (the only target that runs here)")
      .Flag("configs", "WHICH",
            "default (XLA's choice), all, N random valid configs of the space (says so "
            "when it sampled), or one config as JSON over the default, e.g. '{\"split\":4}'")
      .Flag("input", "P.npy", "value of the next parameter (none: random inputs)", true)
      .Flag("seed", "N", "seed of the random inputs and config sample (default 0)")
      .Switch("json",
              "print {checked, passed, failed, results: [{config, passed, largest_error, "
              "tolerance, mismatches, first_mismatch, error}]}")
      .Epilog(
          "Integers and pred must match exactly; floats within a few units in the last\n"
          "place of their type; NaNs and infinities must match. A reduction kernel sums in\n"
          "a tree and a scatter kernel with atomics in any order, the evaluator in order:\n"
          "their float tolerance grows with log2 of the terms per output and with the\n"
          "largest expected magnitude, and each result line says the tolerance it used. Exit "
          "status 0 only when every config checked passed.\n\n" +
          FusionInputHelp());
  return {std::move(command), &RunCheck};
}

}  // namespace tilesmith::tools
