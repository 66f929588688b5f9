// Writing a file so that readers see the old contents or the new, never half of them.
#pragma once

#include <string>
#include <string_view>

#include "support/status.h"

namespace tilesmith {

/// Writes `text` to a temporary file beside `path`, flushes it to disk and renames it over
/// `path`. On failure nothing is left behind and the error names the step and the file.
Status WriteFileAtomically(const std::string& path, std::string_view text);

}  // namespace tilesmith
