// Ascend platform descriptions (`configs/devices/ascend_910b*.json` or a custom file): the
// two hardware numbers the public tiling model needs, vector cores and usable unified buffer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/ascgraph/graph.h"
#include "support/status.h"

namespace tilesmith::costmodel::ascend {

/// Names `--platform` accepts besides a path: "910b1" … "910b4".
std::vector<std::string> KnownPlatformNames();

/// Reads a platform description from JSON text. Keys: `vector_cores` and `ub_bytes`
/// (required), `name`, `target`, `description`, `ub_total_bytes` (optional). Unknown keys
/// and out-of-range numbers are errors that name `source` and the key.
Expected<ascgraph::Platform> ParsePlatformJson(std::string_view text, std::string_view source);

/// Resolves `name_or_path`: a known name ("910b1", "ascend:910b1", "Ascend910B1") reads
/// `<devices_dir>/ascend_910b1.json`; anything else is read as a JSON file path.
Expected<ascgraph::Platform> LoadPlatform(std::string_view name_or_path,
                                          const std::string& devices_dir);

/// Where the shipped device descriptions live: `$TILESMITH_DEVICES_DIR`, else the source
/// tree's `configs/devices` recorded at build time.
std::string DefaultDevicesDir();

}  // namespace tilesmith::costmodel::ascend
