// Noise-aware verdicts as the database keeps them (schema version 6, table `verdicts`): what
// re-timing the search's top contenders beside the default in paired rounds concluded, with
// every round's timings, so an answer can say whether its speedup is more than noise. Kept
// apart from `measurements`: a verdict changes no trial and no best result; the newest
// verdict of a key answers.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "db/records.h"
#include "support/status.h"

namespace tilesmith::db {

/// One confirmation of a key's winner.
struct VerdictRecord {
  int64_t id = 0;  ///< Assigned by the store.
  ResultKey key;
  /// The config the search named best (the best_results view's winner when it was judged);
  /// the verdict speaks for that winner only.
  nlohmann::json best_config = nlohmann::json::object();
  std::string best_config_hash;  ///< Filled by the store.
  /// The answer: the best contender when its lead over the default was significant, else the
  /// default.
  nlohmann::json chosen_config = nlohmann::json::object();
  std::string chosen_config_hash;  ///< Filled by the store.
  bool chosen_is_default = false;
  double chosen_median_us = 0;   ///< Median of its per-round medians in the confirmation.
  double default_median_us = 0;  ///< The same for the default.
  /// The answer's speedup over the default (1 when the answer is the default), and the
  /// interval of the best contender's lead over the default at `confidence` (it covers 1
  /// when not significant; `speedup_high` may be infinite with fewer than two rounds).
  double speedup = 1;
  double speedup_low = 0;
  double speedup_high = 0;
  double confidence = 0.95;
  bool significant = false;
  int64_t rounds = 0;
  std::string method;  ///< How the interval was computed.
  std::string reason;  ///< Why the answer is what it is, as a sentence.
  /// Every contender (config, search and confirmed medians, why dropped) and every round's
  /// timings ({order, timings: [{index, ok, median_us, times_us, message}]}).
  nlohmann::json details = nlohmann::json::object();
  std::string decided_at;  ///< ISO 8601 UTC; now when empty.
  std::string job_id;
  bool operator==(const VerdictRecord&) const = default;
};

/// Checks a verdict before it is written; messages name the field.
Status ValidateVerdict(const VerdictRecord& verdict);

/// The verdict as answers carry it: {significant, speedup, speedup_low, speedup_high,
/// confidence, rounds, reason, method, reported_as_default, chosen_config, decided_at} (an
/// infinite bound is null).
nlohmann::json VerdictJson(const VerdictRecord& verdict);

}  // namespace tilesmith::db
