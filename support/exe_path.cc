#include "support/exe_path.h"

#include <system_error>
#include <utility>

namespace tilesmith {

namespace fs = std::filesystem;

std::optional<fs::path> ExecutablePath() {
  std::error_code error;
  fs::path path = fs::read_symlink("/proc/self/exe", error);
  if (error || path.empty()) return std::nullopt;
  return path;
}

std::optional<fs::path> FindBeside(const fs::path& executable, std::string_view relative) {
  fs::path candidate = executable.parent_path() / fs::path(relative);
  std::error_code error;
  if (!fs::exists(candidate, error)) return std::nullopt;
  return candidate;
}

std::optional<fs::path> BundledPath(std::string_view relative) {
  std::optional<fs::path> self = ExecutablePath();
  if (!self) return std::nullopt;
  return FindBeside(*self, relative);
}

fs::path BundledPathOr(std::string_view relative, fs::path fallback) {
  if (std::optional<fs::path> bundled = BundledPath(relative)) return *bundled;
  return fallback;
}

}  // namespace tilesmith
