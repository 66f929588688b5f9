#include "tuner/space.h"

#include <cctype>

#include "compiler/emitters/emitter_registry.h"
#include "db/records.h"
#include "tuner/layouts.h"

namespace tilesmith::tuner {

int64_t Space::Find(const std::string& hash) const {
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].config_hash == hash) return static_cast<int64_t>(i);
  }
  return -1;
}

std::string SplitStrategy(const nlohmann::json& config) {
  auto split = config.find("split");
  if (split == config.end() || !split->is_number_integer()) return "";
  if (split->get<int64_t>() <= 1) return "unsplit";
  return config.value("second_pass", "atomic") == "tree" ? "tree" : "atomic";
}

std::string ReasonClass(const std::string& reason) {
  std::string out;
  for (size_t i = 0; i < reason.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(reason[i]))) {
      out += 'N';
      while (i + 1 < reason.size() && std::isdigit(static_cast<unsigned char>(reason[i + 1]))) ++i;
    } else {
      out += reason[i];
    }
  }
  return out;
}

namespace {

// Adds the emitter's configs for one variant; `layouts` (null: none) goes into each config.
Status AddVariant(Space& space, LayoutVariant variant, const emitters::DeviceInfo& device,
                  bool is_default_variant) {
  const analysis::FusionAnalysis& analysis = *variant.analysis;
  nlohmann::json layouts = variant.layouts;
  variant.emitter = std::string(emitters::EmitterFor(analysis).name());
  if (is_default_variant) space.emitter = variant.emitter;
  int64_t variant_index = static_cast<int64_t>(space.variants.size());
  space.variants.push_back(std::move(variant));
  auto with_layouts = [&](nlohmann::json config) {
    if (!layouts.is_null()) config[kLayoutsField] = layouts;
    return config;
  };
  nlohmann::json default_config = with_layouts(emitters::DefaultConfig(analysis, device));
  TS_ASSIGN_OR_RETURN(std::string default_hash, db::ConfigHash(default_config));
  bool default_found = false;
  for (emitters::SpaceEntry& entry : emitters::ConfigSpace(analysis, device)) {
    nlohmann::json config = with_layouts(std::move(entry.config));
    if (!entry.valid()) {
      ++space.pruned_by_reason[ReasonClass(entry.pruned_reason)];
      space.pruned.push_back({std::move(config), std::move(entry.pruned_reason)});
      continue;
    }
    TS_ASSIGN_OR_RETURN(std::string hash, db::ConfigHash(config));
    if (space.Find(hash) >= 0) continue;  // an emitter may list a config twice
    bool is_default = is_default_variant && hash == default_hash;
    if (is_default) {
      space.default_index = static_cast<int64_t>(space.candidates.size());
      default_found = true;
    }
    space.candidates.push_back({std::move(config), std::move(hash), is_default, variant_index});
  }
  if (is_default_variant && !default_found) {
    if (auto valid = emitters::ValidateConfig(analysis, EmitterConfig(default_config), device);
        !valid) {
      return std::unexpected(valid.error().WithContext("the emitter's default config"));
    }
    space.default_index = static_cast<int64_t>(space.candidates.size());
    space.candidates.push_back(
        {std::move(default_config), std::move(default_hash), true, variant_index});
  }
  return OkStatus();
}

}  // namespace

Expected<Space> BuildSpace(const analysis::FusionAnalysis& analysis,
                           const emitters::DeviceInfo& device) {
  Space space;
  LayoutVariant variant;
  variant.analysis = &analysis;
  TS_RETURN_IF_ERROR(AddVariant(space, std::move(variant), device, true));
  return space;
}

Expected<Space> BuildSpace(const hlo::HloModule& module, const emitters::DeviceInfo& device,
                           const FreeLayouts& free) {
  Space space;
  std::vector<nlohmann::json> choices = LayoutChoices(*module.fusion(), free);
  bool any_free = !free.empty();
  for (size_t i = 0; i < choices.size(); ++i) {
    auto copy = WithLayouts(module, choices[i]);
    if (!copy) {
      if (i == 0) return std::unexpected(copy.error());
      ++space.pruned_by_reason[ReasonClass(copy.error().message)];
      space.pruned.push_back({{{kLayoutsField, choices[i]}}, copy.error().message});
      continue;
    }
    LayoutVariant variant;
    variant.layouts = any_free ? choices[i] : nlohmann::json();
    variant.module = std::move(*copy);
    variant.owned = std::make_shared<analysis::FusionAnalysis>(
        analysis::AnalyzeFusion(*variant.module->fusion()));
    variant.analysis = variant.owned.get();
    TS_RETURN_IF_ERROR(AddVariant(space, std::move(variant), device, i == 0));
  }
  return space;
}

}  // namespace tilesmith::tuner
