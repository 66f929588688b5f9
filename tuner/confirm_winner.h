// The tune's side of noise-aware winners: picks the search's top contenders and the default
// from the store, runs Confirm (confirm.h) through the tune's own worker, stores the verdict
// with every round's timings, and makes the tune's result answer with it.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "db/result_store.h"
#include "support/status.h"
#include "tuner/confirm.h"
#include "tuner/measurer.h"
#include "tuner/session.h"

namespace tilesmith::tuner {

/// What the confirmation of one tune needs from the session.
struct ConfirmContext {
  db::ResultStore* store = nullptr;
  db::ResultKey key;
  nlohmann::json default_config;
  HostMeasurer* measurer = nullptr;
  MeasureOptions measure;     ///< The tune's; each round's timing is shortened (confirm.h).
  ConfirmOptions options;     ///< time_s 0: chosen from `search_seconds` (ConfirmTime).
  double search_seconds = 0;  ///< Wall time of the search, for the default time.
  std::string job_id;
  std::function<bool()> should_stop;
};

/// The confirmation's time when none was asked for: a tenth of the search's, at least 3 s
/// and at most 30 s.
double ConfirmTime(double search_seconds);

/// The verdict as the tune's JSON carries it: {significant, reported_as_default, speedup,
/// speedup_low, speedup_high (null when unbounded), confidence, rounds, contenders, seconds,
/// method, reason}.
nlohmann::json TuneVerdictJson(const TuneVerdict& verdict);

/// Re-times `result.best`, its closest rivals (up to top_k contenders) and the default in
/// paired rounds, stores the verdict, and sets `result.verdict`; when the verdict is not
/// significant, `result.best` becomes the default and `result.speedup` 1 (the search's
/// winner is kept as `result.search_best`). Does nothing without a best and a default, or
/// with top_k 0.
Status ConfirmWinner(const ConfirmContext& context, TuneResult& result);

}  // namespace tilesmith::tuner
