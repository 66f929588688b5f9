#include "tuner/confirm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace tilesmith::tuner {
namespace {

using Clock = std::chrono::steady_clock;

// Continued fraction of the regularized incomplete beta function (Lentz's method).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < 1e-14) break;
  }
  return h;
}

double RegularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                          b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

double StudentTCdf(double t, double df) {
  double tail = 0.5 * RegularizedBeta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

// The per-round medians of candidate `index`, every round so far.
std::vector<double> Column(const std::vector<std::vector<double>>& rounds, size_t index) {
  std::vector<double> column;
  column.reserve(rounds.size());
  for (const std::vector<double>& round : rounds) column.push_back(round[index]);
  return column;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t half = values.size() / 2;
  return values.size() % 2 ? values[half] : (values[half - 1] + values[half]) / 2;
}

std::string Micros(double us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", us);
  return std::string(text) + " µs";
}

std::string Percent(double confidence) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", confidence * 100);
  return text;
}

}  // namespace

double StudentTQuantile(double q, double df) {
  if (q == 0.5) return 0;
  if (q < 0.5) return -StudentTQuantile(1 - q, df);
  double low = 0;
  double high = 1;
  while (StudentTCdf(high, df) < q && high < 1e12) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    double mid = (low + high) / 2;
    (StudentTCdf(mid, df) < q ? low : high) = mid;
  }
  return (low + high) / 2;
}

RatioInterval PairedRatio(std::span<const double> a, std::span<const double> b, double confidence) {
  RatioInterval interval;
  interval.rounds = static_cast<int64_t>(std::min(a.size(), b.size()));
  interval.low = 0;
  interval.high = std::numeric_limits<double>::infinity();
  std::vector<double> logs;
  for (size_t r = 0; r < static_cast<size_t>(interval.rounds); ++r) {
    if (!(a[r] > 0) || !(b[r] > 0)) return interval;
    logs.push_back(std::log(a[r] / b[r]));
  }
  if (logs.size() < 2) return interval;
  double n = static_cast<double>(logs.size());
  double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / n;
  double squares = 0;
  for (double x : logs) squares += (x - mean) * (x - mean);
  double half_width =
      StudentTQuantile((1 + confidence) / 2, n - 1) * std::sqrt(squares / (n - 1) / n);
  interval.ratio = std::exp(mean);
  interval.low = std::exp(mean - half_width);
  interval.high = std::exp(mean + half_width);
  return interval;
}

ConfirmVerdict Confirm(std::span<const ConfirmCandidate> candidates, const TimeCandidate& time,
                       const ConfirmOptions& options, const std::function<bool()>& should_stop) {
  ConfirmVerdict verdict;
  verdict.confidence = options.confidence;
  verdict.method =
      "paired rounds in shuffled order; mean of log(time ratio) per round with a Student t "
      "interval, mapped back by exp";
  const size_t n = candidates.size();
  std::vector<std::string> dropped(n);
  std::vector<std::vector<double>> rounds;  // complete rounds: one median per candidate
  std::mt19937_64 random(options.seed);
  auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto active = [&](size_t i) { return dropped[i].empty(); };
  auto ratio_to_default = [&](size_t i) {
    return PairedRatio(Column(rounds, 0), Column(rounds, i), options.confidence);
  };
  std::string ended;
  bool decided = false;
  // Judges the rounds so far; true when nothing more needs to be measured.
  auto judge = [&]() {
    std::vector<std::pair<double, size_t>> standing;  // (ratio default/candidate, index)
    for (size_t i = 0; i < n; ++i) {
      if (active(i)) standing.push_back({i == 0 ? 1.0 : ratio_to_default(i).ratio, i});
    }
    std::stable_sort(standing.begin(), standing.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    verdict.leader = static_cast<int64_t>(standing[0].second);
    verdict.runner_up = standing.size() > 1 ? static_cast<int64_t>(standing[1].second) : -1;
    if (verdict.leader == 0) {
      verdict.over_default = {1, 1, 1, static_cast<int64_t>(rounds.size())};
    } else {
      verdict.over_default = ratio_to_default(static_cast<size_t>(verdict.leader));
    }
    verdict.over_runner_up = {1, 1, 1, static_cast<int64_t>(rounds.size())};
    if (verdict.runner_up >= 0) {
      verdict.over_runner_up =
          PairedRatio(Column(rounds, static_cast<size_t>(verdict.runner_up)),
                      Column(rounds, static_cast<size_t>(verdict.leader)), options.confidence);
    }
    verdict.significant = verdict.leader != 0 && verdict.over_default.significant();
    verdict.leader_clear = verdict.runner_up < 0 || verdict.over_runner_up.significant();
    // The default leading needs only its lead over the runner-up.
    return verdict.leader == 0 ? verdict.leader_clear : verdict.significant && verdict.leader_clear;
  };
  while (true) {
    if (should_stop && should_stop()) {
      ended = "stopped";
      break;
    }
    if (static_cast<int64_t>(rounds.size()) >= options.max_rounds) {
      ended = "rounds";
      break;
    }
    // Two rounds are the fewest an interval needs: they are run whatever the time.
    if (rounds.size() >= 2 && elapsed() >= options.time_s) {
      ended = "time";
      break;
    }
    std::vector<size_t> order;
    for (size_t i = 0; i < n; ++i) {
      if (active(i)) order.push_back(i);
    }
    std::shuffle(order.begin(), order.end(), random);
    nlohmann::json log = {{"order", order}, {"timings", nlohmann::json::array()}};
    std::vector<double> medians(n, 0);
    bool cancelled = false;
    for (size_t index : order) {
      RoundTiming timing = time(index);
      if (timing.cancelled) {
        cancelled = true;
        break;
      }
      log["timings"].push_back({{"index", index},
                                {"ok", timing.ok},
                                {"median_us", timing.median_us},
                                {"times_us", timing.times_us},
                                {"message", timing.message}});
      if (timing.ok) {
        medians[index] = timing.median_us;
      } else {
        dropped[index] = "round " + std::to_string(rounds.size() + 1) + ": " + timing.message;
      }
    }
    verdict.round_log.push_back(std::move(log));
    if (cancelled) {
      ended = "stopped";
      break;
    }
    if (!active(0)) {
      ended = "default failed";
      break;
    }
    rounds.push_back(std::move(medians));
    if (static_cast<int64_t>(rounds.size()) >= options.min_rounds && judge()) {
      decided = true;
      break;
    }
  }
  verdict.rounds = static_cast<int64_t>(rounds.size());
  verdict.seconds = elapsed();
  for (size_t i = 0; i < n; ++i) {
    verdict.candidates.push_back({{"config", candidates[i].config},
                                  {"is_default", candidates[i].is_default},
                                  {"search_median_us", candidates[i].search_median_us},
                                  {"median_us", active(i) ? Median(Column(rounds, i)) : 0.0},
                                  {"dropped", dropped[i]}});
  }
  if (rounds.empty() || !active(0)) {
    verdict.chosen = 0;
    verdict.leader = 0;
    verdict.significant = false;
    verdict.over_default = {1, 0, std::numeric_limits<double>::infinity(), 0};
    verdict.reason = !active(0) ? "the default failed while re-timed (" + dropped[0] +
                                      "); nothing could be confirmed"
                                : "stopped before a paired round finished; nothing confirmed";
    return verdict;
  }
  if (!decided) judge();
  verdict.chosen = verdict.significant ? verdict.leader : 0;
  const std::string over = " over " + std::to_string(verdict.rounds) + " paired rounds at " +
                           Percent(options.confidence);
  auto median_of = [&](int64_t i) {
    return Micros(Median(Column(rounds, static_cast<size_t>(i))));
  };
  if (verdict.leader == 0) {
    verdict.reason = "the default (" + median_of(0) + ") was the fastest" + over;
  } else if (!verdict.significant) {
    verdict.reason = "the best config (" + median_of(verdict.leader) +
                     ") was not significantly faster than the default (" + median_of(0) + ")" +
                     over;
  } else {
    verdict.reason = "the best config (" + median_of(verdict.leader) +
                     ") was significantly faster than the default (" + median_of(0) + ")" + over;
    if (!verdict.leader_clear) {
      verdict.reason +=
          "; its lead over the runner-up (" + median_of(verdict.runner_up) + ") was within noise";
    }
  }
  if (ended == "time") verdict.reason += " (the confirmation's time ran out)";
  if (ended == "stopped") verdict.reason += " (the tune was stopped)";
  return verdict;
}

}  // namespace tilesmith::tuner
