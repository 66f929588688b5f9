// Sweep files (`tilesmith sweep SWEEP.json`, docs/sweeps.md): which fusions to tune on which
// targets, with which budget and strategy. This part only reads and checks the file and
// expands its globs; it knows nothing of tuning.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"
#include "tuner/measurer.h"

namespace tilesmith::tools {

/// How one fusion is tuned: the sweep's top-level settings with its entry's overrides.
struct SweepSettings {
  std::vector<std::string> targets;
  std::string targets_from = "targets";  ///< Where `targets` was given, for messages.
  std::string strategy = "model";
  std::string strategy_from = "strategy";  ///< Where `strategy` was given, for messages.
  int64_t budget = 0;  ///< Configs per (fusion, target), the default included; 0: all.
  double time_s = 0;   ///< No new batch after this long per (fusion, target); 0: no limit.
  uint64_t seed = 0;
  int64_t batch = 8;
  double warmup_ms = tuner::MeasureOptions{}.warmup_ms;
  double rep_ms = tuner::MeasureOptions{}.budget_ms;
  double timeout_ms = tuner::MeasureOptions{}.timeout_ms;
  bool flush = true;
  std::vector<std::string>
      free_layouts;  ///< Parameters (`p0`) and outputs (`out0`) whose layout is tuned.
  std::map<std::string, int64_t> sizes;  ///< AscGraph size bindings (AscGraph files only).
  std::string format;                    ///< `hlo`, `ascgraph`, or empty: from the name.

  /// Everything that decides what a tune measures (targets excepted), for keys and --json.
  nlohmann::json ToJson() const;
};

/// One fusion file of a sweep.
struct SweepFusion {
  std::string path;   ///< Absolute and lexically normal.
  std::string name;   ///< Shown in the table: the path below the folder all fusions share.
  std::string entry;  ///< The entry that named it, e.g. `fusions[2]`.
  SweepSettings settings;

  /// `--format F` and `--sizes s0=N,…` as `tilesmith worker` and the fusion loader take
  /// them (sizes only for AscGraph files).
  std::vector<std::string> InputFlags() const;
};

/// A sweep file, read and checked, with its globs expanded.
struct SweepFile {
  std::string path;                  ///< The file, as given.
  std::string name;                  ///< Its `name`, else the file name without `.json`.
  std::vector<SweepFusion> fusions;  ///< In entry order; each entry's matches sorted.
  /// `target` -> device description id (`devices`), for targets with a non-default part.
  std::map<std::string, std::string> devices;
  /// What was skipped and why: globs matching nothing, files named twice.
  std::vector<std::string> warnings;
};

/// Reads the sweep file at `path`. Syntax errors name `path:line:col`; other errors the
/// field (`path: error: fusions[2].budget: …`); a named file that does not exist is an
/// error, a glob matching nothing only a warning.
Expected<SweepFile> ReadSweepFile(const std::string& path);

/// Parses sweep JSON `text` as if read from `path` (relative fusion paths start at its
/// folder).
Expected<SweepFile> ParseSweep(std::string_view text, const std::string& path);

/// True when `pattern` holds a wildcard (`*`, `?`, `[`).
bool HasGlob(std::string_view pattern);

/// The regular files `pattern` matches, sorted: relative patterns start at `base`; `*`, `?`
/// and `[…]` match within one name (not a leading dot), `**` any number of folders.
std::vector<std::string> ExpandGlob(const std::string& pattern, const std::string& base);

}  // namespace tilesmith::tools
