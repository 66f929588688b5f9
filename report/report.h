// The tuning report: one self-contained HTML page (inline CSS and SVG, no script, no network)
// built from the results store — a summary over every fusion (table and speedup chart) and,
// per fusion, every measured config's time, failures by class, the search's best-so-far curve
// and, for two-parameter spaces, a heat map. `tilesmith report` writes it; the service serves
// it at GET /report and GET /report/{fingerprint}.
#pragma once

#include <optional>
#include <string>

#include "db/result_store.h"
#include "support/status.h"

namespace tilesmith::report {

/// What to include and how to label the page.
struct ReportOptions {
  std::optional<std::string> fingerprint;  ///< A full fingerprint: only this fusion.
  std::optional<std::string> device_key;   ///< A full device key: only this device.
  std::optional<std::string> compiler_version;
  std::string source;  ///< Where the data came from (the database path), shown in the header.
};

/// The page. A fingerprint the store does not know is a kNotFound error.
Expected<std::string> RenderReport(db::ResultStore& store, const ReportOptions& options);

}  // namespace tilesmith::report
