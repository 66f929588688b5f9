#include "compiler/emitters/emitter_registry.h"

#include "compiler/emitters/loop_emitter.h"

namespace tilesmith::emitters {

std::string EmitterFor(const analysis::FusionAnalysis&) {
  // The transpose, reduction, concatenate, input-slices, scatter and in-place
  // dynamic-update-slice emitters arrive with the next emitter issue.
  return "loop";
}

nlohmann::json DefaultConfig(const analysis::FusionAnalysis& analysis, const DeviceInfo& device) {
  return DefaultLoopConfig(analysis, device).ToJson();
}

Status ValidateConfig(const analysis::FusionAnalysis& analysis, const nlohmann::json& config,
                      const DeviceInfo& device) {
  TS_ASSIGN_OR_RETURN(LoopConfig loop,
                      LoopConfig::FromJson(config, DefaultLoopConfig(analysis, device)));
  return ValidateLoopConfig(loop, analysis, device);
}

Expected<KernelIR> EmitKernel(const analysis::FusionAnalysis& analysis,
                              const nlohmann::json& config, const DeviceInfo& device) {
  LoopConfig loop = DefaultLoopConfig(analysis, device);
  if (!config.is_null()) {
    TS_ASSIGN_OR_RETURN(loop, LoopConfig::FromJson(config, loop));
  }
  return EmitLoopKernel(analysis, loop, device);
}

}  // namespace tilesmith::emitters
