// Layout-free outputs: when a request leaves an output's layout to tilesmith, the space
// holds every minor_to_major permutation of it and tiled layouts from a menu, and the
// layout is part of the Config (`"layouts": {"out0": "{0,1}"}`), because it changes the
// kernel. The fingerprint stays that of the fusion as given.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "support/status.h"

namespace tilesmith::tuner {

/// The config field holding the layout choices.
inline constexpr char kLayoutsField[] = "layouts";

/// Output numbers from `out0,out2` (checked against the fusion's outputs).
Expected<std::vector<int64_t>> ParseFreeOutputs(std::string_view list,
                                                const hlo::HloComputation& fusion);

/// Layouts an output may take: its own first, then every other minor_to_major permutation
/// (rank <= 4), then `T(8,128)` tiles on the row-major order (rank >= 2), with a `(2,1)`
/// second level for 16-bit types.
std::vector<std::string> LayoutMenu(const hlo::Shape& output);

/// Every combination of the menus of `outputs`, the fusion's own layouts first; each is an
/// object `{"out0": "{1,0}", …}`.
std::vector<nlohmann::json> LayoutChoices(const hlo::HloComputation& fusion,
                                          const std::vector<int64_t>& outputs);

/// A copy of `module` whose fusion outputs are laid out as `layouts` says. An invalid
/// layout is an error naming the output.
Expected<std::unique_ptr<hlo::HloModule>> WithOutputLayouts(const hlo::HloModule& module,
                                                            const nlohmann::json& layouts);

/// `config` without its layouts (what the emitter sees), and the layouts (null if none).
nlohmann::json EmitterConfig(const nlohmann::json& config);
nlohmann::json ConfigLayouts(const nlohmann::json& config);

}  // namespace tilesmith::tuner
