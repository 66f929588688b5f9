#include "tools/kernel_tools.h"

#include <fstream>
#include <sstream>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/analysis/fusion_indexing.h"
#include "compiler/codegen/host_backend.h"
#include "compiler/codegen/kernel_cache.h"
#include "compiler/codegen/nvptx_backend.h"
#include "compiler/emitters/emitter_registry.h"

namespace tilesmith::tools {

Expected<nlohmann::json> ParseConfigFlag(const cli::Args& args) {
  if (!args.Has("config")) return nlohmann::json(nullptr);
  std::string text = args.Get("config");
  if (text.starts_with("@")) {
    std::ifstream file(text.substr(1));
    if (!file) return MakeError(ErrorCode::kIo, "cannot read config file '" + text.substr(1) + "'");
    std::stringstream contents;
    contents << file.rdbuf();
    text = contents.str();
  }
  try {
    nlohmann::json config = nlohmann::json::parse(text);
    if (!config.is_object()) return InvalidArgument("--config must be a JSON object");
    return config;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("--config is not valid JSON: ") + e.what());
  }
}

namespace {

// The stats of an NVPTX compilation: resources ptxas assigned and the time of each step.
void AddNvptxStats(const codegen::NvptxKernel& compiled, nlohmann::json& stats) {
  const codegen::NvptxTimings& timings = compiled.timings;
  stats["entry"] = compiled.entry;
  stats["ptx_target"] = compiled.ptx_target;
  stats["compile_ms"] = timings.total_ms();
  stats["emit_ms"] = timings.emit_ms;
  stats["libdevice_ms"] = timings.libdevice_ms;
  stats["optimize_ms"] = timings.optimize_ms;
  stats["ptx_ms"] = timings.ptx_ms;
  if (compiled.cubin.bytes.empty()) return;
  const codegen::ResourceUsage& usage = compiled.cubin.usage;
  stats["cubin_ms"] = timings.cubin_ms;
  stats["cubin_compiler"] = compiled.cubin.compiler;
  stats["cubin_bytes"] = compiled.cubin.bytes.size();
  stats["registers"] = usage.registers;
  stats["shared_bytes"] = usage.shared_bytes;
  stats["spill_bytes"] = usage.spill_bytes();
  stats["spill_store_bytes"] = usage.spill_store_bytes;
  stats["spill_load_bytes"] = usage.spill_load_bytes;
  stats["stack_bytes"] = usage.stack_bytes;
  stats["local_bytes"] = usage.local_bytes;
  stats["constant_bytes"] = usage.constant_bytes;
}

Expected<CompileOutput> CompileForCuda(const hlo::HloComputation& fusion,
                                       const emitters::KernelIR& kernel,
                                       const emitters::Target& target, const std::string& emit,
                                       CompileOutput output) {
  if (emit == "llvm") {
    TS_ASSIGN_OR_RETURN(codegen::NvptxKernel compiled,
                        codegen::CompileForNvptx(kernel, target, codegen::NvptxStage::kLlvm));
    AddNvptxStats(compiled, output.stats);
    output.text = std::move(compiled.llvm_ir);
    return output;
  }
  if (emit != "ptx" && emit != "cubin" && emit != "stats") {
    return InvalidArgument("--emit " + emit + " is not available for " + target.ToString() +
                           " (kernel-ir, llvm, ptx, cubin or stats)");
  }
  codegen::NvptxStage stage =
      emit == "ptx" ? codegen::NvptxStage::kPtx : codegen::NvptxStage::kCubin;
  bool cached = false;
  TS_ASSIGN_OR_RETURN(std::shared_ptr<const codegen::NvptxKernel> compiled,
                      codegen::CompileForNvptxCached(fusion, kernel, target, stage, &cached));
  AddNvptxStats(*compiled, output.stats);
  output.stats["cached"] = cached;
  if (emit == "ptx") {
    output.text = compiled->ptx;
  } else if (emit == "cubin") {
    output.text = compiled->cubin.bytes;
  } else {
    output.text = output.stats.dump(2);
  }
  return output;
}

}  // namespace

Expected<CompileOutput> CompileFusion(const hlo::HloComputation& fusion,
                                      const emitters::Target& target, const nlohmann::json& config,
                                      const std::string& emit) {
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(target);
  if (!config.is_null()) TS_RETURN_IF_ERROR(emitters::ValidateConfig(analysis, config, device));
  TS_ASSIGN_OR_RETURN(emitters::KernelIR kernel, emitters::EmitKernel(analysis, config, device));
  CompileOutput output;
  output.stats = {{"target", target.ToString()},
                  {"emitter", kernel.emitter},
                  {"config", nlohmann::json::parse(kernel.config_json)},
                  {"grid", kernel.launch.blocks},
                  {"block", kernel.launch.threads}};
  if (emit == "kernel-ir") {
    output.text = kernel.ToString();
    return output;
  }
  if (target.is_cuda()) return CompileForCuda(fusion, kernel, target, emit, std::move(output));
  if (emit == "llvm") {
    TS_ASSIGN_OR_RETURN(output.text, codegen::HostLlvmIr(kernel));
    return output;
  }
  if (emit == "stats") {
    TS_ASSIGN_OR_RETURN(codegen::KernelKey key, codegen::KernelKey::For(fusion, kernel, target));
    TS_ASSIGN_OR_RETURN(std::shared_ptr<const codegen::HostKernel> compiled,
                        codegen::HostKernelCache().GetOrCompile(
                            key, [&] { return codegen::CompileForHost(std::move(kernel)); }));
    const codegen::CompileStats& stats = compiled->stats();
    output.stats["compile_ms"] = stats.total_ms();
    output.stats["emit_ms"] = stats.emit_ms;
    output.stats["optimize_ms"] = stats.optimize_ms;
    output.stats["codegen_ms"] = stats.codegen_ms;
    // Host kernels use no registers budget, shared memory or spill slots in the GPU sense.
    output.stats["registers"] = 0;
    output.stats["shared_bytes"] = 0;
    output.stats["spill_bytes"] = 0;
    output.stats["stack_bytes"] = 0;
    output.text = output.stats.dump(2);
    return output;
  }
  return InvalidArgument("--emit " + emit + " is not available for " + target.ToString() +
                         " (kernel-ir, llvm or stats)");
}

nlohmann::json OutputToParameterMaps(const hlo::HloComputation& fusion) {
  nlohmann::json result = nlohmann::json::array();
  std::vector<const hlo::HloInstruction*> roots = analysis::FusionRoots(fusion);
  for (const hlo::HloInstruction* root : roots) {
    auto maps = analysis::ComputeOutputToParameterIndexing(fusion, *root);
    if (!maps) continue;
    for (size_t p = 0; p < maps->size(); ++p) {
      for (const analysis::IndexingMap& map : (*maps)[p]) {
        result.push_back({{"output", root->name()},
                          {"parameter", fusion.parameter(static_cast<int64_t>(p))->name()},
                          {"map", map.ToString()}});
      }
    }
  }
  return result;
}

}  // namespace tilesmith::tools
