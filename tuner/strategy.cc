#include "tuner/strategy.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "tuner/model_strategy.h"

namespace tilesmith::tuner {

std::vector<int64_t> Strategy::Ask(int64_t max_count) {
  int64_t total = static_cast<int64_t>(space_.candidates.size());
  int64_t limit = budget_ > 0 ? std::min(budget_, total) : total;
  int64_t count = std::min(max_count, limit - spent());
  if (count <= 0) return {};
  std::vector<int64_t> picked = Pick(count);
  std::vector<int64_t> batch;
  for (int64_t candidate : picked) {
    if (static_cast<int64_t>(batch.size()) == count) break;
    if (candidate < 0 || candidate >= total || !seen_.insert(candidate).second) continue;
    batch.push_back(candidate);
  }
  return batch;
}

void Strategy::Tell(std::span<const TrialOutcome> outcomes) {
  for (const TrialOutcome& outcome : outcomes) seen_.insert(outcome.candidate);
  Learn(outcomes);
}

std::vector<int64_t> Strategy::Unseen() const {
  std::vector<int64_t> unseen;
  for (int64_t i = 0; i < static_cast<int64_t>(space_.candidates.size()); ++i) {
    if (!seen_.contains(i)) unseen.push_back(i);
  }
  return unseen;
}

namespace {

// Proposes the candidates in one order fixed up front, skipping what was seen: the
// emitter's order (exhaustive), a seeded permutation drawn once so that resuming with the
// same seed proposes the same order (random), or fastest predicted first with equal
// predictions in config order (best-first).
class FixedOrderStrategy : public Strategy {
 public:
  FixedOrderStrategy(const Space& space, int64_t budget, std::string_view name,
                     std::vector<int64_t> order)
      : Strategy(space, budget), name_(name), order_(std::move(order)) {}
  std::string_view name() const override { return name_; }

 protected:
  std::vector<int64_t> Pick(int64_t count) override {
    std::vector<int64_t> batch;
    for (int64_t candidate : order_) {
      if (static_cast<int64_t>(batch.size()) == count) break;
      if (!Seen(candidate)) batch.push_back(candidate);
    }
    return batch;
  }

 private:
  std::string_view name_;
  std::vector<int64_t> order_;
};

std::vector<int64_t> ConfigOrder(const Space& space) {
  std::vector<int64_t> order(space.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  return order;
}

std::vector<int64_t> SeededOrder(const Space& space, uint64_t seed) {
  std::vector<int64_t> order = ConfigOrder(space);
  std::mt19937_64 random(seed);
  std::shuffle(order.begin(), order.end(), random);
  return order;
}

std::vector<int64_t> PredictedOrder(const Space& space, const Ranking& ranking) {
  std::vector<double> predicted = ranking.PredictUs(space);
  std::vector<int64_t> order = ConfigOrder(space);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return predicted[a] < predicted[b]; });
  return order;
}

// A random first generation, then children of the fastest measured configs: a mutation
// changes one field to a value another candidate has there, a crossover takes each field
// from one of two parents. Only children that are candidates of the space are proposed.
class EvolutionaryStrategy : public Strategy {
 public:
  EvolutionaryStrategy(const Space& space, int64_t budget, uint64_t seed)
      : Strategy(space, budget), random_(seed) {
    for (size_t i = 0; i < space.candidates.size(); ++i) {
      const nlohmann::json& config = space.candidates[i].config;
      by_config_[config.dump()] = static_cast<int64_t>(i);
      for (const auto& [field, value] : config.items()) {
        auto& values = field_values_[field];
        if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
      }
    }
    for (auto& [field, values] : field_values_) std::sort(values.begin(), values.end());
  }
  std::string_view name() const override { return "evolutionary"; }

 protected:
  std::vector<int64_t> Pick(int64_t count) override {
    std::vector<int64_t> batch;
    std::vector<int64_t> parents = Parents();
    for (int attempt = 0;
         attempt < 64 * count && static_cast<int64_t>(batch.size()) < count && parents.size() >= 1;
         ++attempt) {
      int64_t child = parents.size() >= 2 && Coin() ? Crossover(parents) : Mutate(parents);
      if (child >= 0 && !Seen(child) &&
          std::find(batch.begin(), batch.end(), child) == batch.end()) {
        batch.push_back(child);
      }
    }
    // The first generation, and whatever the parents cannot reach: random unseen candidates.
    std::vector<int64_t> unseen = Unseen();
    std::shuffle(unseen.begin(), unseen.end(), random_);
    for (int64_t candidate : unseen) {
      if (static_cast<int64_t>(batch.size()) == count) break;
      if (std::find(batch.begin(), batch.end(), candidate) == batch.end())
        batch.push_back(candidate);
    }
    return batch;
  }

  void Learn(std::span<const TrialOutcome> outcomes) override {
    for (const TrialOutcome& outcome : outcomes) {
      if (outcome.ok) measured_.push_back(outcome);
    }
    std::stable_sort(
        measured_.begin(), measured_.end(), [](const TrialOutcome& a, const TrialOutcome& b) {
          return a.median_us != b.median_us ? a.median_us < b.median_us : a.candidate < b.candidate;
        });
  }

 private:
  static constexpr size_t kPopulation = 6;

  std::vector<int64_t> Parents() const {
    std::vector<int64_t> parents;
    for (size_t i = 0; i < measured_.size() && i < kPopulation; ++i) {
      parents.push_back(measured_[i].candidate);
    }
    return parents;
  }

  bool Coin() { return std::uniform_int_distribution<int>(0, 1)(random_) == 1; }
  int64_t Choose(size_t size) {
    return std::uniform_int_distribution<int64_t>(0, static_cast<int64_t>(size) - 1)(random_);
  }

  int64_t Lookup(const nlohmann::json& config) const {
    auto it = by_config_.find(config.dump());
    return it == by_config_.end() ? -1 : it->second;
  }

  // The better of two random parents (parents are fastest first): selection pressure
  // without losing the rest of the population.
  int64_t Tournament(const std::vector<int64_t>& parents) {
    return parents[std::min(Choose(parents.size()), Choose(parents.size()))];
  }

  // Tile sizes and widths are ordered: three times in four a mutation steps to a
  // neighbouring value (local search), else it jumps anywhere.
  int64_t Mutate(const std::vector<int64_t>& parents) {
    nlohmann::json child = space_.candidates[Tournament(parents)].config;
    if (child.empty()) return -1;
    auto field = std::next(field_values_.begin(), Choose(field_values_.size()));
    const std::vector<nlohmann::json>& values = field->second;
    auto at = std::find(values.begin(), values.end(), child[field->first]);
    if (at != values.end() && Choose(4) != 0) {
      int64_t position = at - values.begin() + (Coin() ? 1 : -1);
      if (position < 0 || position >= static_cast<int64_t>(values.size())) return -1;
      child[field->first] = values[position];
    } else {
      child[field->first] = values[Choose(values.size())];
    }
    return Lookup(child);
  }

  int64_t Crossover(const std::vector<int64_t>& parents) {
    const nlohmann::json& a = space_.candidates[Tournament(parents)].config;
    const nlohmann::json& b = space_.candidates[Tournament(parents)].config;
    nlohmann::json child = a;
    for (const auto& [field, value] : b.items()) {
      if (Coin()) child[field] = value;
    }
    return Lookup(child);
  }

  std::mt19937_64 random_;
  std::map<std::string, int64_t> by_config_;
  std::map<std::string, std::vector<nlohmann::json>> field_values_;
  std::vector<TrialOutcome> measured_;  // fastest first
};

}  // namespace

const std::vector<std::string>& StrategyNames() {
  static const std::vector<std::string> names = {"model", "exhaustive", "random", "best-first",
                                                 "evolutionary"};
  return names;
}

std::string StrategyNamesText() {
  std::string text;
  for (const std::string& name : StrategyNames()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::unique_ptr<Strategy> MakeListedStrategy(const Space& space, std::vector<int64_t> candidates) {
  int64_t budget = static_cast<int64_t>(candidates.size());
  return std::make_unique<FixedOrderStrategy>(space, budget, "listed", std::move(candidates));
}

bool IsPlannedStrategy(std::string_view name) { return name == "exhaustive" || name == "random"; }

Expected<std::vector<int64_t>> PlannedOrder(std::string_view name, const Space& space,
                                            int64_t budget, uint64_t seed) {
  if (!IsPlannedStrategy(name)) {
    return InvalidArgument("the " + std::string(name) +
                           " strategy picks each batch from the last one's times, so its tune "
                           "cannot be planned ahead and split (exhaustive and random can)");
  }
  TS_ASSIGN_OR_RETURN(std::unique_ptr<Strategy> strategy,
                      MakeStrategy(name, space, {.budget = budget, .seed = seed}));
  // As Tune runs it: the default first, told before the strategy is asked.
  std::vector<int64_t> order = {space.default_index};
  std::vector<TrialOutcome> told = {{space.default_index, true, 0}};
  strategy->Tell(told);
  while (true) {
    std::vector<int64_t> batch = strategy->Ask(256);
    if (batch.empty()) break;
    order.insert(order.end(), batch.begin(), batch.end());
  }
  return order;
}

Expected<std::unique_ptr<Strategy>> MakeStrategy(std::string_view name, const Space& space,
                                                 const StrategyOptions& options) {
  if (name == "exhaustive") {
    return std::make_unique<FixedOrderStrategy>(space, options.budget, "exhaustive",
                                                ConfigOrder(space));
  }
  if (name == "random") {
    return std::make_unique<FixedOrderStrategy>(space, options.budget, "random",
                                                SeededOrder(space, options.seed));
  }
  if (name == "model") {
    if (options.ranking == nullptr) return InvalidArgument("model needs a ranking");
    return MakeModelGuidedStrategy(space, options.budget, *options.ranking,
                                   {.told_predictions = options.told_predictions});
  }
  if (name == "best-first") {
    if (options.ranking == nullptr) return InvalidArgument("best-first needs a ranking");
    return std::make_unique<FixedOrderStrategy>(space, options.budget, "best-first",
                                                PredictedOrder(space, *options.ranking));
  }
  if (name == "evolutionary") {
    return std::make_unique<EvolutionaryStrategy>(space, options.budget, options.seed);
  }
  return InvalidArgument("unknown strategy '" + std::string(name) + "' (" + StrategyNamesText() +
                         ")");
}

}  // namespace tilesmith::tuner
