// The one interface every hero emitter implements (loop, transpose, reduction, …): its
// default config, validation with a reason, its config space for the tuner, and the
// kernel for a config. Configs are plain JSON objects; a partial object overlays the
// default, so `{"vector": 2}` means "the default, but 2-wide".
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/emitters/target.h"
#include "support/status.h"

namespace tilesmith::emitters {

/// One point of an emitter's config space: the whole config (every field set) and, when a
/// hard constraint rules it out, why (empty when it is valid). The tuner keeps the pruned
/// ones so that `tilesmith space` can show what was dropped and for what reason.
struct SpaceEntry {
  nlohmann::json config;
  std::string pruned_reason;

  bool valid() const { return pruned_reason.empty(); }
};

/// How a config field becomes columns of the learned model's features (costmodel/features.h).
enum class FeatureEncoding {
  kNumeric,  ///< `cfg.<field>`: the value as it is.
  kLog2,     ///< `cfg.<field>.log2`: log2 of a positive value (powers of two spread evenly).
  kBoolean,  ///< `cfg.<field>`: 1 or 0.
  kOneHot,   ///< `cfg.<field>.<value>`: 1 for the value set, 0 for the others of `values`.
  kNone,     ///< No column: a field the model does not see, said explicitly.
};

/// One field of an emitter's config and its encoding as a model feature. Fields that
/// several emitters share (`vector`) must be declared with the same encoding.
struct ConfigField {
  std::string_view name;
  FeatureEncoding encoding = FeatureEncoding::kNumeric;
  std::span<const std::string_view> values = {};  ///< kOneHot's closed set of values.
};

class Emitter {
 public:
  virtual ~Emitter() = default;

  /// The kind's name as `tilesmith analyze` reports it (`loop`, `transpose`, …).
  virtual std::string_view name() const = 0;

  /// Every field its configs can hold, with its feature encoding: the learned model's
  /// config columns are derived from these (every field of DefaultConfig and Space entries
  /// must be declared here).
  virtual std::span<const ConfigField> config_fields() const = 0;

  /// Whether this emitter emits `analysis`'s fusion: by default the fusions the analysis
  /// chose this emitter's name for. An emitter may claim a narrower pattern of another
  /// kind's fusions; among those that claim a fusion the last registered wins.
  virtual bool Handles(const analysis::FusionAnalysis& analysis) const {
    return analysis.emitter == name();
  }

  /// XLA's choice for this fusion on this device, every field set.
  virtual nlohmann::json DefaultConfig(const analysis::FusionAnalysis& analysis,
                                       const DeviceInfo& device) const = 0;

  /// OK when `config` (overlaid on the default) can be emitted for `device`, else the
  /// reason, naming the field: unknown fields, out-of-range values, device limits.
  virtual Status Validate(const analysis::FusionAnalysis& analysis, const nlohmann::json& config,
                          const DeviceInfo& device) const = 0;

  /// The kernel for `config` (overlaid on the default; null means the default). Validates
  /// first, so an invalid config is an error before any code exists.
  virtual Expected<KernelIR> Emit(const analysis::FusionAnalysis& analysis,
                                  const nlohmann::json& config, const DeviceInfo& device) const = 0;

  /// The emitter's full config space for this fusion and device, in a fixed order (the
  /// default need not be first), pruned entries included with their reason.
  virtual std::vector<SpaceEntry> Space(const analysis::FusionAnalysis& analysis,
                                        const DeviceInfo& device) const = 0;
};

/// `base` with every field of `overlay` (a JSON object) replacing its value; an overlay
/// that is not an object is returned as it is, so the caller's parse reports it.
nlohmann::json OverlayConfig(const nlohmann::json& base, const nlohmann::json& overlay);

}  // namespace tilesmith::emitters
