// Layout-free parameters and outputs: when a request leaves the layout of a fusion
// parameter (`p0`) or output (`out0`) to tilesmith, the space holds every minor_to_major
// permutation of it and tiled layouts from a menu, and the layout is part of the Config
// (`"layouts": {"p0": "{0,1,2}", "out0": "{0,1}"}`), because it changes the kernel. The
// fingerprint stays that of the fusion as given, and every candidate is fed and checked
// with the same logical values: only the bytes' arrangement differs.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "support/status.h"

namespace tilesmith::tuner {

/// The config field holding the layout choices.
inline constexpr char kLayoutsField[] = "layouts";

/// What a request leaves layout-free, by number: fusion parameters (named `p<N>` as the
/// Kernel IR buffers are) and fusion outputs (`out<N>`).
struct FreeLayouts {
  std::vector<int64_t> parameters;
  std::vector<int64_t> outputs;
  bool empty() const { return parameters.empty() && outputs.empty(); }
};

/// The parameters and outputs a list such as `p0,out2` names, checked against the fusion.
/// A scalar or vector has one layout and is left out. A tuple-shaped parameter, or one a
/// bitcast reads (its result depends on the operand's layout), is an error.
Expected<FreeLayouts> ParseFreeLayouts(std::string_view list, const hlo::HloComputation& fusion);
/// The same for names already apart (a sweep's or a job's list).
Expected<FreeLayouts> ParseFreeLayouts(std::span<const std::string> names,
                                       const hlo::HloComputation& fusion);

/// Layouts an array may take: its own first, then every other minor_to_major permutation
/// (rank <= 4), then `T(8,128)` tiles on the row-major order (rank >= 2), with a `(2,1)`
/// second level for 16-bit types.
std::vector<std::string> LayoutMenu(const hlo::Shape& array);

/// Every combination of the menus of the free parameters and outputs, the fusion's own
/// layouts first; each is an object `{"p0": "{0,1,2}", "out0": "{1,0}", …}`.
std::vector<nlohmann::json> LayoutChoices(const hlo::HloComputation& fusion,
                                          const FreeLayouts& free);

/// A copy of `module` whose fusion parameters and outputs are laid out as `layouts` says.
/// A parameter's layout also goes to the entry parameter passed to the fusion, so that
/// caller and callee agree. An invalid layout or name is an error naming it.
Expected<std::unique_ptr<hlo::HloModule>> WithLayouts(const hlo::HloModule& module,
                                                      const nlohmann::json& layouts);

/// `config` without its layouts (what the emitter sees), and the layouts (null if none).
nlohmann::json EmitterConfig(const nlohmann::json& config);
nlohmann::json ConfigLayouts(const nlohmann::json& config);

}  // namespace tilesmith::tuner
