#include "compiler/emitters/emitter_registry.h"

#include <algorithm>
#include <memory>

#include "compiler/emitters/concatenate_emitter.h"
#include "compiler/emitters/dynamic_update_slice_emitter.h"
#include "compiler/emitters/input_slices_emitter.h"
#include "compiler/emitters/loop_emitter.h"
#include "compiler/emitters/reduction_emitter.h"
#include "compiler/emitters/scatter_emitter.h"
#include "compiler/emitters/transpose_emitter.h"

namespace tilesmith::emitters {
namespace {

// Every emitter that exists: adding one is one line here. The order is the learned model's
// column order (costmodel/features.cc), so new emitters go at the end. The loop emitter
// must be present: it is the fallback for kinds whose emitter has not been written.
const std::vector<std::unique_ptr<Emitter>>& Registry() {
  static const auto* emitters = [] {
    auto* list = new std::vector<std::unique_ptr<Emitter>>();
    list->push_back(MakeLoopEmitter());
    list->push_back(MakeTransposeEmitter());
    list->push_back(MakeConcatenateEmitter());
    list->push_back(MakeDynamicUpdateSliceEmitter());
    list->push_back(MakeInputSlicesEmitter());
    list->push_back(MakeReductionEmitter());
    list->push_back(MakeScatterEmitter());
    return list;
  }();
  return *emitters;
}

const std::vector<const Emitter*>& Pointers() {
  static const auto* pointers = [] {
    auto* list = new std::vector<const Emitter*>();
    for (const auto& emitter : Registry()) list->push_back(emitter.get());
    return list;
  }();
  return *pointers;
}

}  // namespace

nlohmann::json OverlayConfig(const nlohmann::json& base, const nlohmann::json& overlay) {
  if (!overlay.is_object() || !base.is_object()) return overlay;
  nlohmann::json merged = base;
  for (const auto& [key, value] : overlay.items()) merged[key] = value;
  return merged;
}

std::span<const Emitter* const> RegisteredEmitters() { return Pointers(); }

const Emitter* FindEmitter(std::string_view name) {
  for (const auto& emitter : Registry()) {
    if (emitter->name() == name) return emitter.get();
  }
  return nullptr;
}

const Emitter& EmitterFor(const analysis::FusionAnalysis& analysis) {
  // Later emitters are the more specific: one that claims a pattern within another kind's
  // fusions is registered after that kind's emitter.
  const auto& emitters = Registry();
  for (auto it = emitters.rbegin(); it != emitters.rend(); ++it) {
    if ((*it)->Handles(analysis)) return **it;
  }
  return *FindEmitter("loop");
}

nlohmann::json DefaultConfig(const analysis::FusionAnalysis& analysis, const DeviceInfo& device) {
  return EmitterFor(analysis).DefaultConfig(analysis, device);
}

Status ValidateConfig(const analysis::FusionAnalysis& analysis, const nlohmann::json& config,
                      const DeviceInfo& device) {
  return EmitterFor(analysis).Validate(analysis, config, device);
}

Expected<KernelIR> EmitKernel(const analysis::FusionAnalysis& analysis,
                              const nlohmann::json& config, const DeviceInfo& device) {
  return EmitterFor(analysis).Emit(analysis, config, device);
}

std::vector<SpaceEntry> ConfigSpace(const analysis::FusionAnalysis& analysis,
                                    const DeviceInfo& device) {
  return EmitterFor(analysis).Space(analysis, device);
}

namespace {

// The most values one element of a reduce or reduce-window inside `fusion` combines. The
// elemental code of every emitter folds them with several accumulators side by side
// (codegen's interleaved reduce), so not in the evaluator's order either.
int64_t ElementalReducedTerms(const hlo::HloComputation& fusion) {
  int64_t terms = 1;
  for (const auto& instruction : fusion.instructions()) {
    int64_t count = 1;
    if (instruction->opcode() == hlo::HloOpcode::kReduce) {
      const hlo::Shape& operand = instruction->operand(0)->shape();
      for (int64_t d : instruction->dimensions()) count *= operand.dim(d);
    } else if (instruction->opcode() == hlo::HloOpcode::kReduceWindow &&
               instruction->attributes().window) {
      for (const hlo::WindowDim& window : *instruction->attributes().window) count *= window.size;
    }
    terms = std::max(terms, count);
  }
  return terms;
}

}  // namespace

int64_t ReassociatedTerms(const analysis::FusionAnalysis& analysis, const KernelIR& kernel) {
  // Reductions the elemental code folds, in any emitter's kernel (an epilogue's too).
  int64_t terms = analysis.fusion != nullptr ? ElementalReducedTerms(*analysis.fusion) : 1;
  if (kernel.emitter == "reduction") return std::max(terms, ReassociatedTerms(analysis));
  if (kernel.emitter == "scatter") {
    // Updates that land on one element are combined in the order the atomics happen.
    const hlo::HloInstruction* scatter = analysis.roots.front();
    const hlo::Shape& updates = scatter->operand(2)->shape();
    std::span<const int64_t> window = scatter->attributes().scatter->update_window_dims;
    int64_t count = 1;
    for (int64_t d = 0; d < updates.rank(); ++d) {
      if (std::find(window.begin(), window.end(), d) == window.end()) count *= updates.dim(d);
    }
    return std::max(terms, count);
  }
  return terms;
}

}  // namespace tilesmith::emitters
