#include "compiler/codegen/cuda_toolkit.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>
#include <vector>

#include "support/exe_path.h"

#ifdef TILESMITH_HAVE_NVJITLINK
#include <nvJitLink.h>
#endif

namespace tilesmith::codegen {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kLibdevice = "nvvm/libdevice/libdevice.10.bc";

// `$TILESMITH_CUDA_DIR`, or null when unset or empty.
const char* ChosenDir() {
  const char* chosen = std::getenv("TILESMITH_CUDA_DIR");
  return chosen != nullptr && *chosen != '\0' ? chosen : nullptr;
}

// `$TILESMITH_CUDA_DIR` alone when set (an explicit choice, also how tests see a machine
// without the toolkit), else the bundle's own `cuda/` beside the executable, else the usual
// places. The bundle's libdevice comes first because it is the one this LLVM was checked
// against; a GPU host's toolkit may be older or newer.
std::vector<fs::path> CandidateDirs() {
  if (const char* chosen = ChosenDir()) return {fs::path(chosen)};
  std::vector<fs::path> dirs;
  if (std::optional<fs::path> bundled = BundledPath("cuda")) dirs.push_back(*bundled);
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && *value != '\0') dirs.emplace_back(value);
  }
  dirs.emplace_back("/usr/local/cuda");
  return dirs;
}

bool IsExecutable(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<fs::path> CudaToolkitDir() {
  for (const fs::path& dir : CandidateDirs()) {
    std::error_code error;
    if (fs::is_regular_file(dir / kLibdevice, error)) return dir;
  }
  return std::nullopt;
}

Expected<fs::path> LibdevicePath() {
  std::optional<fs::path> dir = CudaToolkitDir();
  if (!dir) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the CUDA toolkit was not found (no " + std::string(kLibdevice) +
                         " under $TILESMITH_CUDA_DIR, or else cuda/ beside tilesmith, $CUDA_HOME, "
                         "$CUDA_PATH or /usr/local/cuda)");
  }
  return *dir / kLibdevice;
}

Expected<fs::path> PtxasPath() {
  std::vector<fs::path> candidates;
  for (const fs::path& dir : CandidateDirs()) candidates.push_back(dir / "bin/ptxas");
  if (const char* path = std::getenv("PATH"); path != nullptr && ChosenDir() == nullptr) {
    std::string_view rest(path);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view entry = rest.substr(0, colon);
      if (!entry.empty()) candidates.push_back(fs::path(entry) / "ptxas");
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  for (const fs::path& candidate : candidates) {
    if (IsExecutable(candidate)) return candidate;
  }
  return MakeError(ErrorCode::kFailedPrecondition,
                   "ptxas was not found (CUDA toolkit bin/ or PATH)");
}

bool HaveNvJitLink() {
#ifdef TILESMITH_HAVE_NVJITLINK
  return true;
#else
  return false;
#endif
}

bool CanMakeCubins() { return HaveNvJitLink() || PtxasPath().has_value(); }

std::string CubinToolkitVersion() {
#ifdef TILESMITH_HAVE_NVJITLINK
  unsigned major = 0;
  unsigned minor = 0;
  if (nvJitLinkVersion(&major, &minor) == NVJITLINK_SUCCESS) {
    return "CUDA " + std::to_string(major) + "." + std::to_string(minor);
  }
#endif
  return "";
}

}  // namespace tilesmith::codegen
