// The learned model's training rows from the results database: every verified measurement
// of a device (under one compiler version), its fusion re-parsed from the stored canonical
// text and its config re-emitted to Kernel IR (no code generation), so features come from
// the same kernel that was timed. And the deterministic held-out split `model eval` uses.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "costmodel/learned_model.h"
#include "db/result_store.h"

namespace tilesmith::costmodel {

/// Rows of one device, and what could not become a row.
struct TrainingSet {
  std::vector<TrainingRow> rows;  ///< By fusion fingerprint, then config hash.
  int64_t fusions = 0;
  int64_t measurements = 0;  ///< Verified trials read (several per config collapse to one row).
  int64_t skipped = 0;       ///< Configs that could not be re-emitted or predicted.
  std::vector<std::string> notes;  ///< Why, one line per distinct reason (a few at most).
};

/// Every verified config measured on `device_key` under `compiler_version`: one row per
/// (fusion, config), its time the median of its latest trial. Configs with tuned output
/// layouts are skipped (the fusion would need re-laying out, which is the tuner's business).
Expected<TrainingSet> LoadTrainingSet(db::ResultStore& store, const std::string& device_key,
                                      const std::string& compiler_version,
                                      const DeviceFigures& device, const CostModel& analytic);

/// Distinct fusions among `rows`.
int64_t FusionCount(const std::vector<TrainingRow>& rows);

/// The fusions held out for evaluation: the first max(1, round(fraction x n)) fingerprints in
/// sorted order. Fingerprints are SHA-256 hashes, so this is a fixed pseudo-random choice
/// that never depends on the order rows were measured in.
std::set<std::string> HeldOutFusions(const std::vector<TrainingRow>& rows, double fraction);

}  // namespace tilesmith::costmodel
