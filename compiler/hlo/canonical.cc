#include "compiler/hlo/canonical.h"

#include <memory>
#include <unordered_map>

#include "compiler/hlo/printer.h"
#include "support/sha256.h"

namespace tilesmith::hlo {

std::string CanonicalText(const HloComputation& fusion) {
  std::vector<const HloComputation*> computations = HloModule::CalleesPostOrder(&fusion);
  std::unordered_map<const HloComputation*, std::string> computation_names;
  for (size_t i = 0; i + 1 < computations.size(); ++i) {
    computation_names[computations[i]] = "comp_" + std::to_string(i);
  }
  computation_names[&fusion] = "fusion";

  std::unordered_map<const HloInstruction*, std::string> instruction_names;
  PrintOptions options;
  options.print_non_semantic_attributes = false;
  options.instruction_name = [&](const HloInstruction& instruction) {
    return instruction_names.at(&instruction);
  };
  options.computation_name = [&](const HloComputation& computation) {
    return computation_names.at(&computation);
  };
  std::string text;
  for (const HloComputation* computation : computations) {
    std::vector<const HloInstruction*> order = computation->PostOrder();
    instruction_names.clear();
    for (size_t i = 0; i < order.size(); ++i) {
      instruction_names[order[i]] = "tmp_" + std::to_string(i);
    }
    text += PrintComputation(*computation, options, order);
  }
  return text;
}

std::string CanonicalFusionText(const HloModule& module) { return CanonicalText(*module.fusion()); }

Expected<std::string> FusionFingerprint(const HloModule& module) {
  return Sha256Hex(CanonicalFusionText(module));
}

}  // namespace tilesmith::hlo
