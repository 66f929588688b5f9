// Where the running tilesmith lives, and the data that travels with it. A relocatable bundle
// (scripts/device-bundle) carries configs/devices, configs/examples and libdevice beside the
// binary, and may be unpacked anywhere; a development build finds the same data in the source
// tree whose path is compiled in. Lookups try beside the executable first, so one rule serves
// both and an unpacked bundle never reaches back into a source tree that is not there.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace tilesmith {

/// The running executable's own path (`/proc/self/exe`, symlinks resolved), or nullopt when
/// it cannot be read (no /proc).
std::optional<std::filesystem::path> ExecutablePath();

/// `<dir of executable>/<relative>` when that file or directory exists, else nullopt.
/// `executable` is the binary to look beside (a parameter so tests need not move themselves).
std::optional<std::filesystem::path> FindBeside(const std::filesystem::path& executable,
                                                std::string_view relative);

/// FindBeside(the running executable, `relative`): data shipped with this binary, e.g.
/// `BundledPath("configs/devices")` in an unpacked bundle.
std::optional<std::filesystem::path> BundledPath(std::string_view relative);

/// BundledPath(`relative`), else `fallback` (the source-tree path of a development build).
std::filesystem::path BundledPathOr(std::string_view relative, std::filesystem::path fallback);

}  // namespace tilesmith
