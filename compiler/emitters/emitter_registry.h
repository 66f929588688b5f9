// One front door to the emitters: the emitter for a fusion's kind, its default config, its
// config space and its kernel for a given config. Adding an emitter means writing one
// `Emitter` (compiler/emitters/emitter.h) and listing it in emitter_registry.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/emitter.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/emitters/target.h"
#include "support/status.h"

namespace tilesmith::emitters {

/// The emitter that will emit `analysis`'s fusion: the last registered one that handles it
/// (Emitter::Handles; by default the one named by the analysis's choice), else the loop
/// emitter's elemental path (which computes every fusion correctly).
const Emitter& EmitterFor(const analysis::FusionAnalysis& analysis);

/// Every registered emitter, in registry order (which is also the order of the learned
/// model's emitter and config columns, so new emitters go at the end).
std::span<const Emitter* const> RegisteredEmitters();

/// The emitter registered under `name` (`loop`, `transpose`, …), or null.
const Emitter* FindEmitter(std::string_view name);

/// The emitter's default config (XLA's choice) as JSON.
nlohmann::json DefaultConfig(const analysis::FusionAnalysis& analysis, const DeviceInfo& device);

/// Checks `config` (overlaid on the default) against the emitter and the device; the
/// error says why not.
Status ValidateConfig(const analysis::FusionAnalysis& analysis, const nlohmann::json& config,
                      const DeviceInfo& device);

/// The kernel for `config` (null: the default; fields it leaves out take the default's).
Expected<KernelIR> EmitKernel(const analysis::FusionAnalysis& analysis,
                              const nlohmann::json& config, const DeviceInfo& device);

/// The emitter's config space for this fusion and device, pruned entries with reasons.
std::vector<SpaceEntry> ConfigSpace(const analysis::FusionAnalysis& analysis,
                                    const DeviceInfo& device);

/// How many values each output element of `kernel` combines in another order than the
/// evaluator (a reduction's tree, a scatter's atomics, a reduce or reduce-window inside a
/// loop fusion, whose elemental code keeps several accumulators), for the comparison's float
/// tolerance; 1 when the kernel computes every element as the evaluator does.
int64_t ReassociatedTerms(const analysis::FusionAnalysis& analysis, const KernelIR& kernel);

}  // namespace tilesmith::emitters
