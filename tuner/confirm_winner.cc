#include "tuner/confirm_winner.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tilesmith::tuner {
namespace {

// The latest verified trial of every config under the key, by config hash.
Expected<std::map<std::string, db::MeasurementRecord>> LatestVerified(db::ResultStore& store,
                                                                      const db::ResultKey& key) {
  TS_ASSIGN_OR_RETURN(std::vector<db::MeasurementRecord> trials,
                      store.Measurements({key.fingerprint, key.device_key, key.compiler_version}));
  std::map<std::string, db::MeasurementRecord> latest;
  for (db::MeasurementRecord& trial : trials) {
    TS_ASSIGN_OR_RETURN(std::string hash, db::ConfigHash(trial.config));
    latest[hash] = std::move(trial);
  }
  std::erase_if(latest, [](const auto& entry) {
    return entry.second.status != db::TrialStatus::kOk || !entry.second.timing;
  });
  return latest;
}

}  // namespace

nlohmann::json TuneVerdictJson(const TuneVerdict& verdict) {
  auto bound = [](double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
  };
  return {{"significant", verdict.significant},
          {"reported_as_default", verdict.reported_as_default},
          {"speedup", verdict.speedup},
          {"speedup_low", bound(verdict.speedup_low)},
          {"speedup_high", bound(verdict.speedup_high)},
          {"confidence", verdict.confidence},
          {"rounds", verdict.rounds},
          {"contenders", verdict.contenders},
          {"seconds", verdict.seconds},
          {"method", verdict.method},
          {"reason", verdict.reason}};
}

double ConfirmTime(double search_seconds) { return std::clamp(search_seconds / 10, 3.0, 30.0); }

Status ConfirmWinner(const ConfirmContext& context, TuneResult& result) {
  if (context.options.top_k <= 0 || !result.best || !result.default_config ||
      context.store == nullptr || context.measurer == nullptr) {
    return OkStatus();
  }
  TS_ASSIGN_OR_RETURN(auto latest, LatestVerified(*context.store, context.key));
  TS_ASSIGN_OR_RETURN(std::string default_hash, db::ConfigHash(context.default_config));
  TS_ASSIGN_OR_RETURN(std::string best_hash, db::ConfigHash(result.best->config));
  if (!latest.contains(default_hash) || !latest.contains(best_hash)) return OkStatus();

  // The default first, then the search's winner, then its fastest rivals up to top_k.
  std::vector<const db::MeasurementRecord*> chosen = {&latest[default_hash]};
  if (best_hash != default_hash) chosen.push_back(&latest[best_hash]);
  std::vector<const db::MeasurementRecord*> rivals;
  for (const auto& [hash, trial] : latest) {
    if (hash != default_hash && hash != best_hash) rivals.push_back(&trial);
  }
  std::stable_sort(rivals.begin(), rivals.end(), [](const auto* a, const auto* b) {
    return a->timing->median_us < b->timing->median_us;
  });
  for (const db::MeasurementRecord* rival : rivals) {
    if (static_cast<int64_t>(chosen.size()) - 1 >= context.options.top_k) break;
    chosen.push_back(rival);
  }
  std::vector<ConfirmCandidate> candidates;
  for (const db::MeasurementRecord* trial : chosen) {
    candidates.push_back({trial->config, trial == chosen[0], trial->timing->median_us});
  }

  // Shorter timings than the search's, so that more rounds fit: the pairing, not the length
  // of one timing, is what takes drift out.
  MeasureOptions measure = context.measure;
  measure.warmup_ms = std::min(measure.warmup_ms, 5.0);
  measure.budget_ms = std::min(measure.budget_ms, 10.0);
  ConfirmOptions options = context.options;
  if (options.time_s <= 0) options.time_s = ConfirmTime(context.search_seconds);
  ConfirmVerdict verdict;
  if (candidates.size() == 1) {
    verdict.chosen = verdict.leader = 0;
    verdict.confidence = options.confidence;
    verdict.reason = "the default is the only verified config; nothing to confirm";
  } else {
    verdict = Confirm(
        candidates,
        [&](size_t index) {
          WorkerResult run = context.measurer->Measure(candidates[index].config, measure);
          RoundTiming timing;
          timing.cancelled = run.cancelled;
          timing.ok = run.status == db::TrialStatus::kOk && !run.times_us.empty();
          timing.message = run.message;
          if (timing.ok) timing.median_us = Summarize(run.times_us).median_us;
          timing.times_us = std::move(run.times_us);
          return timing;
        },
        options, context.should_stop);
  }

  TuneVerdict tune_verdict;
  tune_verdict.significant = verdict.significant;
  tune_verdict.reported_as_default = verdict.chosen == 0;
  tune_verdict.speedup = verdict.chosen == 0 ? 1.0 : verdict.over_default.ratio;
  tune_verdict.speedup_low = verdict.over_default.low;
  tune_verdict.speedup_high = verdict.over_default.high;
  tune_verdict.confidence = verdict.confidence;
  tune_verdict.rounds = verdict.rounds;
  tune_verdict.contenders = static_cast<int64_t>(candidates.size()) - 1;
  tune_verdict.seconds = verdict.seconds;
  tune_verdict.method = verdict.method;
  tune_verdict.reason = verdict.reason;
  if (candidates.size() == 1) tune_verdict.speedup_low = tune_verdict.speedup_high = 1;

  const db::MeasurementRecord& answer = *chosen[static_cast<size_t>(verdict.chosen)];
  db::VerdictRecord record;
  record.key = context.key;
  record.best_config = result.best->config;
  record.chosen_config = answer.config;
  record.chosen_is_default = verdict.chosen == 0;
  auto confirmed_median = [&](size_t index) {
    return verdict.candidates.size() > index ? verdict.candidates[index].value("median_us", 0.0)
                                             : chosen[index]->timing->median_us;
  };
  record.chosen_median_us = confirmed_median(static_cast<size_t>(verdict.chosen));
  record.default_median_us = confirmed_median(0);
  record.speedup = tune_verdict.speedup;
  record.speedup_low = tune_verdict.speedup_low;
  record.speedup_high = tune_verdict.speedup_high;
  record.confidence = tune_verdict.confidence;
  record.significant = tune_verdict.significant;
  record.rounds = tune_verdict.rounds;
  record.method = tune_verdict.method;
  record.reason = tune_verdict.reason;
  record.details = {{"leader", verdict.leader},
                    {"runner_up", verdict.runner_up},
                    {"leader_speedup", verdict.over_default.ratio},
                    {"over_runner_up",
                     {{"ratio", verdict.over_runner_up.ratio},
                      {"low", verdict.over_runner_up.low},
                      {"high", std::isfinite(verdict.over_runner_up.high)
                                   ? nlohmann::json(verdict.over_runner_up.high)
                                   : nlohmann::json(nullptr)}}},
                    {"leader_clear", verdict.leader_clear},
                    {"seconds", verdict.seconds},
                    {"round_warmup_ms", measure.warmup_ms},
                    {"round_budget_ms", measure.budget_ms},
                    {"candidates", verdict.candidates},
                    {"rounds", verdict.round_log}};
  record.job_id = context.job_id;
  // Stored before it is reported, as every measurement is.
  TS_RETURN_IF_ERROR(context.store->RecordVerdict(record));

  if (&answer != &latest[best_hash]) {
    result.search_best = result.best;
    result.best = SummaryOf(answer);
  }
  result.speedup = tune_verdict.speedup;
  result.verdict = std::move(tune_verdict);
  return OkStatus();
}

}  // namespace tilesmith::tuner
