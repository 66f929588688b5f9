// Noise-aware winners: after the search, the top contenders and the default are timed again
// in interleaved, paired rounds (every round times each of them once, in a shuffled order,
// through the same worker), so drift of the machine hits all of them alike. A contender
// counts as faster only when the paired log ratio of its times to the default's says so at
// the stated confidence; otherwise the default is the answer.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace tilesmith::tuner {

/// A two-sided interval of a ratio, from paired per-round samples.
struct RatioInterval {
  double ratio = 1;  ///< exp(mean log ratio): the geometric mean of the per-round ratios.
  double low = 1;
  double high = 1;
  int64_t rounds = 0;
  /// The interval lies wholly above 1 (low > 1).
  bool significant() const { return low > 1; }
};

/// The interval of a/b from paired samples (round r timed both a[r] and b[r]): the mean of
/// log(a[r]/b[r]) with a Student t interval at `confidence`, mapped back by exp. Fewer than
/// two rounds, or non-positive times, give ratio 1 with an unbounded interval [0, inf).
RatioInterval PairedRatio(std::span<const double> a, std::span<const double> b, double confidence);

/// The q-quantile of Student's t distribution with `df` degrees of freedom (0 < q < 1).
double StudentTQuantile(double q, double df);

/// How the confirmation runs.
struct ConfirmOptions {
  int64_t top_k = 5;         ///< Contenders re-timed beside the default (0: no confirmation).
  double confidence = 0.95;  ///< Two-sided confidence of every interval.
  double time_s = 3;         ///< Rounds stop starting after this long (after two at least).
  int64_t min_rounds = 5;    ///< Never judged on fewer rounds.
  int64_t max_rounds = 200;
  uint64_t seed = 0;  ///< Of the round orders.
};

/// One candidate of the confirmation: the default, or one of the search's best.
struct ConfirmCandidate {
  nlohmann::json config;
  bool is_default = false;
  double search_median_us = 0;  ///< What the search measured.
};

/// One timing of one candidate in one round.
struct RoundTiming {
  bool ok = false;
  double median_us = 0;
  std::vector<double> times_us;
  std::string message;     ///< Why it failed.
  bool cancelled = false;  ///< The tune was stopped: the confirmation ends here.
};

/// Times candidate `index` once (the session passes its measurer).
using TimeCandidate = std::function<RoundTiming(size_t index)>;

/// What the confirmation concluded.
struct ConfirmVerdict {
  /// Index into the candidates of the answer: the leader when its lead over the default is
  /// significant, else the default.
  int64_t chosen = -1;
  int64_t leader = -1;           ///< The contender with the best paired ratio against the default.
  int64_t runner_up = -1;        ///< The next one (-1 with a single contender left).
  RatioInterval over_default;    ///< default / leader.
  RatioInterval over_runner_up;  ///< runner-up / leader (ratio 1 without a runner-up).
  bool significant = false;      ///< The leader beats the default at `confidence`.
  bool leader_clear = false;     ///< The leader beats the runner-up at `confidence` too.
  double confidence = 0.95;
  int64_t rounds = 0;
  double seconds = 0;
  std::string method;  ///< How the interval was computed, for the reader of the answer.
  std::string reason;  ///< One sentence on why the answer is what it is.
  /// Per candidate: {config, is_default, search_median_us, median_us (of its round medians),
  /// rounds, dropped (why, when a round failed it)}.
  nlohmann::json candidates = nlohmann::json::array();
  /// Every round: {order: [index…], timings: [{index, ok, median_us, times_us, message}]}.
  nlohmann::json round_log = nlohmann::json::array();
};

/// Runs paired rounds over `candidates` (index 0 must be the default) until the leader's
/// lead over the default and over the runner-up are significant, or the default's lead over
/// every other is, or the time or rounds run out. `should_stop` (may be empty) ends it early.
ConfirmVerdict Confirm(std::span<const ConfirmCandidate> candidates, const TimeCandidate& time,
                       const ConfirmOptions& options, const std::function<bool()>& should_stop);

}  // namespace tilesmith::tuner
