// The search space of one fusion on one device: every config the fusion's emitter can
// take, the ones hard constraints rule out kept with their reason, and the default (XLA's
// choice) always among the candidates.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/target.h"
#include "compiler/hlo/hlo_module.h"
#include "support/status.h"
#include "tuner/layouts.h"

namespace tilesmith::tuner {

/// One valid config. Its position in `Space::candidates` is its "config order", the last
/// tie-break between equally fast configs.
struct Candidate {
  nlohmann::json config;    ///< Every field set (and `layouts` when some layout is free).
  std::string config_hash;  ///< db::ConfigHash(config): how the database knows it.
  bool is_default = false;
  int64_t variant = 0;  ///< Its layout variant in Space::variants.
};

/// The fusion with one choice of parameter and output layouts (a layout changes the kernel).
struct LayoutVariant {
  nlohmann::json layouts;  ///< `{"p0": "{0,1}", "out0": …}`, or null when nothing is free.
  std::shared_ptr<hlo::HloModule> module;              ///< Owned copy; null: the caller's.
  std::shared_ptr<analysis::FusionAnalysis> owned;     ///< Owned analysis of `module`.
  const analysis::FusionAnalysis* analysis = nullptr;  ///< What emitters see.
  std::string emitter;  ///< The emitter of this variant (a layout may change the hero).
};

/// A config the constraints ruled out, and why.
struct PrunedConfig {
  nlohmann::json config;
  std::string reason;
};

struct Space {
  std::string emitter;  ///< The default variant's emitter.
  std::vector<LayoutVariant> variants;
  std::vector<Candidate> candidates;  ///< Valid configs in the emitter's order.
  std::vector<PrunedConfig> pruned;
  /// Pruned configs counted by reason, numbers in the reason written as N
  /// ("vector=N is not a multiple of …"), so one rule is one line.
  std::map<std::string, int64_t> pruned_by_reason;
  int64_t default_index = 0;  ///< The default config's candidate.

  int64_t total() const { return static_cast<int64_t>(candidates.size() + pruned.size()); }
  /// The candidate whose config hash is `hash`, or -1.
  int64_t Find(const std::string& hash) const;
  /// The analysis a candidate is emitted from.
  const analysis::FusionAnalysis& AnalysisOf(const Candidate& candidate) const {
    return *variants[candidate.variant].analysis;
  }
};

/// The space of `analysis`'s emitter on `device` (`analysis` must outlive it). When the
/// emitter's enumeration does not contain its own default (a launch size fitted to the
/// shape), the default is appended.
Expected<Space> BuildSpace(const analysis::FusionAnalysis& analysis,
                           const emitters::DeviceInfo& device);

/// The space of `module`'s fusion with the parameters and outputs in `free` layout-free: the
/// emitter's space under every layout choice (layouts.h), each config carrying its
/// `layouts`. A choice no kernel can be emitted for is pruned with the reason. The default
/// is the default config under the fusion's own layouts. Nothing free: BuildSpace above on
/// an owned analysis.
Expected<Space> BuildSpace(const hlo::HloModule& module, const emitters::DeviceInfo& device,
                           const FreeLayouts& free);

/// How a config combines the parts of a split reduction: "unsplit", "atomic" or "tree";
/// "" for a config without a `split` (not a reduction).
std::string SplitStrategy(const nlohmann::json& config);

/// `reason` with every run of digits replaced by N.
std::string ReasonClass(const std::string& reason);

}  // namespace tilesmith::tuner
