// Search strategies in the ask/tell style: a strategy proposes batches of candidates of a
// Space and is told how they went. It knows nothing of compiling or timing, so the same
// strategy drives a host tune, a GPU tune or a replay of stored results.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "support/status.h"
#include "tuner/ranking.h"
#include "tuner/space.h"

namespace tilesmith::tuner {

/// What became of one candidate.
struct TrialOutcome {
  int64_t candidate = 0;  ///< Index into Space::candidates.
  bool ok = false;        ///< Compiled, ran and verified.
  double median_us = 0;   ///< Meaningful when ok.
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;

  /// Up to `max_count` candidates never proposed nor told before; empty when the budget is
  /// spent or nothing is left. The same seed and the same outcomes give the same batches.
  std::vector<int64_t> Ask(int64_t max_count);

  /// Results of proposed candidates, or of candidates measured before this strategy
  /// existed (a resumed tune); every told candidate counts against the budget.
  void Tell(std::span<const TrialOutcome> outcomes);

  int64_t budget() const { return budget_; }
  /// Candidates proposed or told so far.
  int64_t spent() const { return static_cast<int64_t>(seen_.size()); }
  /// Why Ask answered nothing before the budget and the space ran out (a strategy that
  /// judged further measurement pointless); empty otherwise.
  virtual std::string stop_reason() const { return {}; }

 protected:
  Strategy(const Space& space, int64_t budget) : space_(space), budget_(budget) {}

  /// Up to `count` unseen candidates, best guess first (count > 0, some are unseen).
  virtual std::vector<int64_t> Pick(int64_t count) = 0;
  virtual void Learn(std::span<const TrialOutcome>) {}

  bool Seen(int64_t candidate) const { return seen_.contains(candidate); }
  std::vector<int64_t> Unseen() const;

  const Space& space_;

 private:
  int64_t budget_;
  std::unordered_set<int64_t> seen_;
};

struct StrategyOptions {
  int64_t budget = 0;  ///< Most candidates to measure (0: the whole space).
  uint64_t seed = 0;
  /// Predicts candidates' times for `model` and best-first (required there;
  /// tuner/model_ranking.h).
  const Ranking* ranking = nullptr;
  /// The times told are predictions of compiled configs (a CUDA tune without a GPU), not
  /// measurements: a strategy's stop reason then speaks of compiled configs.
  bool told_predictions = false;
};

/// Exactly `candidates`, in that order (a batch of a tune split across agents); the budget
/// is their count.
std::unique_ptr<Strategy> MakeListedStrategy(const Space& space, std::vector<int64_t> candidates);

/// Whether `name`'s order is decided before anything is measured (exhaustive, random), so
/// that a tune can be split into batches measured apart (PlannedOrder).
bool IsPlannedStrategy(std::string_view name);

/// The candidates a planned strategy measures, in order, the default first as a tune runs
/// it, at most `budget` (0: all).
Expected<std::vector<int64_t>> PlannedOrder(std::string_view name, const Space& space,
                                            int64_t budget, uint64_t seed);

/// `model`, `exhaustive`, `random`, `best-first` or `evolutionary`; an unknown name is an
/// error that lists them.
Expected<std::unique_ptr<Strategy>> MakeStrategy(std::string_view name, const Space& space,
                                                 const StrategyOptions& options);

/// The names MakeStrategy takes, the default (`model`) first.
const std::vector<std::string>& StrategyNames();
/// The same, comma-separated, for help texts and errors.
std::string StrategyNamesText();

}  // namespace tilesmith::tuner
