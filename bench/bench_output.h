// Where a benchmark writes its figures, timings and rows. Written atomically, so a rerun
// that saves over its own --timings file never leaves half of it; a write that fails ends
// the run with the reason instead of reporting a file that is not there.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "support/atomic_file.h"

namespace tilesmith::bench {

/// Writes `text` to `path` and says so on stderr as "`what` written to PATH"; exits with
/// status 1 and the reason if it cannot.
inline void WriteOutput(const std::string& path, std::string_view text, std::string_view what) {
  if (Status written = WriteFileAtomically(path, text); !written) {
    std::fprintf(stderr, "cannot write the %.*s: %s\n", static_cast<int>(what.size()), what.data(),
                 written.error().message.c_str());
    std::exit(1);
  }
  std::fprintf(stderr, "%.*s written to %s\n", static_cast<int>(what.size()), what.data(),
               path.c_str());
}

}  // namespace tilesmith::bench
