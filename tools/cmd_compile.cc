// `tilesmith analyze` and `tilesmith compile`: what kind of fusion this is, and the kernel a
// config produces, at each stage of the pipeline.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/analysis/partitioner.h"
#include "compiler/codegen/host_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "tools/commands.h"
#include "tools/fusion_loader.h"
#include "tools/kernel_tools.h"

namespace tilesmith::tools {
namespace {

int RunAnalyze(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one fusion file");
    return kExitUsage;
  }
  auto loaded = LoadFusion(args.positionals()[0], args);
  if (!loaded) return ReportError(loaded.error().message);
  const hlo::HloComputation& fusion = *loaded->module->fusion();
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  analysis::PartitionedComputation partition = analysis::PartitionComputation(fusion);
  auto target = emitters::Target::Parse(args.Get("target", "cuda:sm_90"));
  if (!target) return ReportError(target.error().message);
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(*target);
  auto kernel = emitters::EmitKernel(analysis, nullptr, device);
  if (!kernel) return ReportError(kernel.error().message);

  nlohmann::json heroes = nlohmann::json::array();
  for (size_t i = 0; i < analysis.roots.size(); ++i) {
    heroes.push_back({{"root", analysis.roots[i]->name()}, {"hero", analysis.heroes[i]->name()}});
  }
  nlohmann::json functions = nlohmann::json::array();
  for (const analysis::Subgraph& subgraph : partition.subgraphs()) {
    nlohmann::json roots = nlohmann::json::array();
    nlohmann::json instructions = nlohmann::json::array();
    for (const hlo::HloInstruction* root : subgraph.roots) roots.push_back(root->name());
    for (const hlo::HloInstruction* instruction : subgraph.instructions) {
      instructions.push_back(instruction->name());
    }
    functions.push_back(
        {{"name", subgraph.name}, {"roots", roots}, {"instructions", instructions}});
  }
  nlohmann::json thread_maps = nlohmann::json::array();
  const std::vector<std::string> launch_names = {"th_x", "th_y", "th_z", "bl_x", "bl_y", "bl_z"};
  for (const emitters::Phase& phase : kernel->phases) {
    for (const emitters::LoopStmt& loop : phase.loops) {
      thread_maps.push_back(loop.map.ToString(launch_names));
    }
  }
  nlohmann::json input_maps = OutputToParameterMaps(fusion);
  nlohmann::json result = {{"fusion", fusion.name()},
                           {"emitter", std::string(analysis.emitter)},
                           {"emitted_by", std::string(emitters::EmitterFor(analysis).name())},
                           {"reason", analysis.reason},
                           {"hero", analysis.heroes.empty() ? "" : analysis.heroes[0]->name()},
                           {"heroes", heroes},
                           {"functions", functions},
                           {"thread_to_output", thread_maps},
                           {"output_to_input", input_maps},
                           {"default_config", emitters::DefaultConfig(analysis, device)},
                           {"target", target->ToString()}};
  if (analysis.reduction) {
    result["reduction"] = {
        {"row", analysis.reduction->is_row_reduction},
        {"dimensions", analysis.reduction->dimensions},
        {"variant", std::string(analysis::ReductionVariantName(analysis.reduction_variant))}};
  }
  if (args.Has("json")) {
    std::cout << result.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "fusion:   " << fusion.name() << "\n"
            << "emitter:  " << result["emitter"].get<std::string>() << " (" << analysis.reason
            << ")\n";
  if (result["emitted_by"] != result["emitter"]) {
    std::cout << "          emitted by the " << result["emitted_by"].get<std::string>()
              << " emitter until that emitter exists\n";
  }
  for (const auto& hero : heroes) {
    std::cout << "hero:     " << hero["root"].get<std::string>() << " <- "
              << hero["hero"].get<std::string>() << "\n";
  }
  std::cout << "partition:\n" << partition.ToString();
  std::cout << "thread -> output (default config " << result["default_config"].dump() << "):\n";
  for (const auto& map : thread_maps) std::cout << "  " << map.get<std::string>() << "\n";
  std::cout << "output -> input:\n";
  for (const auto& entry : input_maps) {
    std::cout << "  " << entry["output"].get<std::string>() << " -> "
              << entry["parameter"].get<std::string>() << ": " << entry["map"].get<std::string>()
              << "\n";
  }
  return kExitOk;
}

int RunCompile(const cli::Args& args) {
  if (args.positionals().size() != 1) {
    ReportError("expected one fusion file");
    return kExitUsage;
  }
  auto loaded = LoadFusion(args.positionals()[0], args);
  if (!loaded) return ReportError(loaded.error().message);
  auto target = emitters::Target::Parse(args.Get("target", "host"));
  if (!target) return ReportError(target.error().message);
  auto config = ParseConfigFlag(args);
  if (!config) return ReportError(config.error().message);
  std::string emit = args.Get("emit", "kernel-ir");
  auto output = CompileFusion(*loaded->module->fusion(), *target, *config, emit);
  if (!output) return ReportError(output.error().message);
  if (args.Has("out")) {
    std::ofstream file(args.Get("out"), std::ios::binary);
    file << output->text;
    if (!file) return ReportError("cannot write '" + args.Get("out") + "'");
    if (!args.Has("json")) return kExitOk;
  }
  bool binary = emit == "cubin";
  if (args.Has("json")) {
    nlohmann::json result = output->stats;
    // A cubin is bytes, not text: JSON gets its size (cubin_bytes) only.
    if (!args.Has("out") && emit != "stats" && !binary) result["text"] = output->text;
    std::cout << result.dump(2) << "\n";
  } else if (!args.Has("out")) {
    if (binary && isatty(STDOUT_FILENO)) {
      return ReportError("a cubin is binary: write it with --out PATH or redirect stdout");
    }
    std::cout << output->text;
    if (!binary && !output->text.empty() && output->text.back() != '\n') std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace

Subcommand AnalyzeSubcommand() {
  cli::Command command("analyze", "show a fusion's hero, emitter, partition and indexing maps",
                       "FILE [--target T] [--json]");
  AddFusionInputFlags(command)
      .Flag("target", "T", "device whose limits shape the default config (default cuda:sm_90)")
      .Switch("json",
              "print {fusion, emitter, hero, heroes, functions, thread_to_output, "
              "output_to_input, default_config, reason}")
      .Epilog(
          "Emitters: loop, transpose, reduction, concatenate, input_slices, scatter,\n"
          "dynamic_update_slice (XLA's order of preference).\n\n" +
          FusionInputHelp() + "\nExample:\n  tilesmith analyze configs/examples/gelu.hlo --json");
  return {std::move(command), &RunAnalyze};
}

Subcommand CompileSubcommand() {
  cli::Command command("compile", "compile a fusion for a target and print a stage",
                       "FILE --target cuda:sm_90|cuda:sm_80|host [--config JSON] "
                       "--emit kernel-ir|llvm|ptx|cubin|stats [--out PATH] [--json]");
  AddFusionInputFlags(command)
      .Flag("target", "T", "host (default), or cuda:sm_XX")
      .Flag("config", "JSON",
            "emitter config, e.g. '{\"threads_per_block\":256,\"vector\":2}'; "
            "default: XLA's choice")
      .Flag("emit", "STAGE", "kernel-ir (default), llvm, ptx, cubin or stats")
      .Flag("out", "PATH", "write the stage to PATH instead of stdout")
      .Switch("json", "print {registers, shared_bytes, spill_bytes, grid, block, compile_ms, …}")
      .Epilog(
          FusionInputHelp() +
          "\nExamples:\n"
          "  tilesmith compile configs/examples/gelu.hlo --target host --emit kernel-ir\n"
          "  tilesmith compile configs/examples/gelu.hlo --target cuda:sm_90 --emit ptx\n"
          "  tilesmith compile configs/examples/gelu.hlo --target cuda:sm_90 --emit stats --json");
  return {std::move(command), &RunCompile};
}

}  // namespace tilesmith::tools
