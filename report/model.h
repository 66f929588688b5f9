// What the report shows, read from the results store: every trial of each (fusion, device,
// compiler version) key in measurement order, the store's best result and default time, and
// the two parameters a heat map can be drawn over.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/result_store.h"
#include "support/status.h"

namespace tilesmith::report {

/// One result key's trials and what is derived from them.
struct KeyTrials {
  db::ResultKey key;
  std::string kernel_name;
  std::string source_format;
  std::string emitter;
  std::vector<db::MeasurementRecord> trials;  ///< Oldest first (measurement order).
  std::optional<db::BestResult> best;         ///< The store's winner (tune's own rule).
  int64_t configs = 0;                        ///< Distinct configs tried.
  int64_t failures = 0;                       ///< Trials whose status is not ok.

  /// The default config's fastest verified median: the store's, else from the trials.
  std::optional<double> DefaultMedian() const;
  std::optional<double> BestMedian() const;
  /// Default ÷ best, when both are known and positive.
  std::optional<double> Speedup() const;
};

/// Every key the filter admits, ordered by kernel name, then device, then compiler version.
Expected<std::vector<KeyTrials>> LoadTrials(db::ResultStore& store, const db::ResultFilter& filter);

/// The config fields whose value differs between the verified trials, sorted by name.
std::vector<std::string> VaryingParameters(const std::vector<db::MeasurementRecord>& trials);

/// The heat map's axes (x, y) when the verified trials vary in exactly two parameters and
/// both are numeric; x is the one with more distinct values (then the name order).
std::optional<std::pair<std::string, std::string>> HeatMapAxes(
    const std::vector<db::MeasurementRecord>& trials);

}  // namespace tilesmith::report
