#include "bench/model_bench_generated.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <set>

#include "bench/bench_util.h"
#include "bench/model_bench_timings.h"
#include "compiler/hlo/canonical.h"
#include "costmodel/ranking_metrics.h"
#include "tuner/layouts.h"
#include "tuner/space.h"

namespace tilesmith::bench {
namespace {

// A ranking of fusion `i` to score against run `truth` (0: A, 1: B), µs by sampled config.
using RankingOf = std::function<std::vector<double>(size_t i, int truth)>;

// The generated fusion's module kept alive beside its timings: a space's analyses point
// into it.
struct Timed {
  std::shared_ptr<hlo::HloModule> module;
  TimedFusion fusion;
};

Expected<Timed> TimeFusion(const hlo::GeneratedFusion& generated, const tuner::Device& device,
                           const costmodel::HostModel& model,
                           const GeneratedBenchOptions& options) {
  TS_ASSIGN_OR_RETURN(std::shared_ptr<hlo::HloModule> module,
                      hlo::ParseHloModule(generated.text, generated.name));
  const hlo::HloComputation& fusion = *module->fusion();
  TS_ASSIGN_OR_RETURN(tuner::Space space, tuner::BuildSpace(*module, device.info, {}));
  TS_ASSIGN_OR_RETURN(std::vector<hlo::Literal> arguments,
                      hlo::MakeRandomArguments(fusion, /*seed=*/1));
  std::vector<int64_t> picked = Sample(space, options.cap);
  if (picked.size() < 2) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        "a space of " + std::to_string(space.candidates.size()) + " config(s): nothing to rank");
  }
  std::vector<PreparedKernel> prepared;
  for (int64_t index : picked) {
    const tuner::Candidate& candidate = space.candidates[index];
    TS_ASSIGN_OR_RETURN(PreparedKernel kernel,
                        TryPrepare(fusion, space.AnalysisOf(candidate), arguments,
                                   tuner::EmitterConfig(candidate.config)));
    kernel.evict_buffers = options.evict_buffers;
    prepared.push_back(std::move(kernel));
  }
  std::vector<std::vector<double>> runs =
      TimeInterleavedRuns(prepared, options.repetitions, options.rounds, /*runs=*/2);
  Timed timed{module, {}};
  TimedFusion& result = timed.fusion;
  result.name = generated.name;
  result.pattern = generated.pattern;
  result.type = std::string(hlo::PrimitiveTypeName(generated.type));
  result.bytes = generated.bytes;
  costmodel::DeviceFigures figures{device.info, device.cache_bytes};
  for (size_t k = 0; k < picked.size(); ++k) {
    double best = std::min(runs[0][k], runs[1][k]);
    TS_ASSIGN_OR_RETURN(
        PredictedConfig config,
        PredictConfig(generated.name, prepared[k].kernel->kernel(), model, figures, best));
    result.analytic_us.push_back(config.prediction.microseconds);
    result.rows.push_back(std::move(config.row));
  }
  for (int run = 0; run < 2; ++run) {
    result.runs[run] = runs[run];
    result.samples[run] = MakeMeasuredSample(space, picked, runs[run]);
  }
  result.best_us = std::min(result.samples[0].best_us, result.samples[1].best_us);
  return timed;
}

// Times fusions [0, count) of `seed`; what cannot be built is skipped, counted, and the
// first few reasons printed.
std::vector<Timed> TimeSeed(const char* label, uint64_t seed, int64_t count,
                            const tuner::Device& device, const costmodel::HostModel& model,
                            const GeneratedBenchOptions& options, Clock::time_point start,
                            std::vector<std::string>& skipped) {
  std::vector<Timed> timed;
  for (int64_t i = 0; i < count; ++i) {
    hlo::GeneratedFusion generated = hlo::GenerateFusion(seed, i, options.generator);
    auto fusion_start = Clock::now();
    auto result = TimeFusion(generated, device, model, options);
    if (!result) {
      skipped.push_back(generated.name + " (" + generated.pattern + "): " + result.error().message);
      if (skipped.size() <= 5) {
        std::fprintf(stderr, "skipped %s\n", skipped.back().c_str());
      }
      continue;
    }
    const TimedFusion& f = result->fusion;
    std::fprintf(stderr,
                 "[%s %lld/%lld] %s %s %s %.0f KiB: %zu configs, best %.1f us, %.1f s "
                 "(elapsed %.0f s)\n",
                 label, static_cast<long long>(i + 1), static_cast<long long>(count),
                 f.name.c_str(), f.pattern.c_str(), f.type.c_str(),
                 static_cast<double>(f.bytes) / 1024, f.rows.size(), f.best_us,
                 Seconds(fusion_start), Seconds(start));
    timed.push_back(std::move(*result));
  }
  return timed;
}

GeneratedScores Score(const std::vector<TimedFusion>& fusions, const RankingOf& ranking,
                      double min_best_us) {
  GeneratedScores scores;
  for (int truth = 0; truth < 2; ++truth) {
    std::vector<double> rho, top1, top5, shares;
    double sum_best = 0, sum_top5 = 0, missed = 0;
    for (size_t i = 0; i < fusions.size(); ++i) {
      const TimedFusion& f = fusions[i];
      if (f.best_us < min_best_us) continue;
      const std::vector<double>& measured = f.runs[truth];
      std::vector<double> predicted = ranking(i, truth);
      rho.push_back(costmodel::Spearman(predicted, measured));
      top1.push_back(costmodel::TopKRegret(predicted, measured, 1));
      top5.push_back(costmodel::TopKRegret(predicted, measured, 5));
      double best = *std::min_element(measured.begin(), measured.end());
      sum_best += best;
      sum_top5 += best * (1 + top5.back());
      auto [share, found] = ReplayModelStrategy(f.samples[truth], predicted, {});
      shares.push_back(share);
      missed += !found;
    }
    if (rho.empty()) return scores;
    auto mean = [](const std::vector<double>& v) {
      return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    scores.fusions = static_cast<int64_t>(rho.size());
    scores.spearman += mean(rho) / 2;
    scores.top1_regret += mean(top1) / 2;
    scores.top5_regret += mean(top5) / 2;
    scores.top5_score += sum_best / sum_top5 / 2;
    scores.strategy_share += Median(shares) / 2;
    scores.strategy_missed += missed / 2;
  }
  return scores;
}

GeneratedScores Average(const std::vector<GeneratedScores>& all) {
  GeneratedScores mean;
  double n = static_cast<double>(all.size());
  for (const GeneratedScores& s : all) {
    mean.fusions = s.fusions;
    mean.spearman += s.spearman / n;
    mean.top1_regret += s.top1_regret / n;
    mean.top5_regret += s.top5_regret / n;
    mean.top5_score += s.top5_score / n;
    mean.strategy_share += s.strategy_share / n;
    mean.strategy_missed += s.strategy_missed / n;
  }
  return mean;
}

void PrintRow(const std::string& model, const GeneratedScores& s) {
  std::printf("%-26s %7lld %9.3f %11.1f%% %11.1f%% %10.3f %9.1f%%+%.1f\n", model.c_str(),
              static_cast<long long>(s.fusions), s.spearman, 100 * s.top1_regret,
              100 * s.top5_regret, s.top5_score, 100 * s.strategy_share, s.strategy_missed);
}

}  // namespace

nlohmann::json GeneratedScores::ToJson() const {
  return {{"fusions", fusions},
          {"spearman", spearman},
          {"top1_regret", top1_regret},
          {"top5_regret", top5_regret},
          {"top5_score", top5_score},
          {"median_model_strategy_share", strategy_share},
          {"model_strategy_missed", strategy_missed}};
}

int RunGeneratedBench(const GeneratedBenchOptions& options, const tuner::Device& device,
                      const costmodel::HostModel& model,
                      const std::vector<costmodel::TrainingRow>& corpus_rows,
                      int64_t corpus_fusions) {
  if (options.train_seed == options.seed && options.train_count > 0) {
    Fail("--train-seed must differ from --seed: the models are judged on fusions they never saw");
  }
  auto start = Clock::now();
  std::vector<std::string> skipped, train_skipped;
  std::vector<Timed> evaluated_timed =
      TimeSeed("eval", options.seed, options.count, device, model, options, start, skipped);
  std::vector<Timed> train_timed = TimeSeed("train", options.train_seed, options.train_count,
                                            device, model, options, start, train_skipped);
  double timing_seconds = Seconds(start);
  std::vector<TimedFusion> evaluated;
  for (Timed& t : evaluated_timed) evaluated.push_back(std::move(t.fusion));

  // The training set: the corpus and the other seed's fusions, less any that happens to be
  // one of the judged fusions (the same canonical fingerprint).
  std::set<std::string> judged;
  for (const Timed& t : evaluated_timed) {
    if (auto key = hlo::FusionFingerprint(*t.module)) judged.insert(*key);
  }
  std::vector<costmodel::TrainingRow> train_rows = corpus_rows;
  int64_t train_fusions = 0, overlapping = 0;
  for (const Timed& t : train_timed) {
    auto key = hlo::FusionFingerprint(*t.module);
    if (key && judged.contains(*key)) {
      ++overlapping;
      continue;
    }
    ++train_fusions;
    train_rows.insert(train_rows.end(), t.fusion.rows.begin(), t.fusion.rows.end());
  }

  std::printf("\n%-20s %-20s %-5s %9s %7s %10s %9s %9s\n", "fusion", "pattern", "type", "KiB",
              "configs", "best_us", "agreement", "analytic");
  nlohmann::json fusions_json = nlohmann::json::array();
  for (const TimedFusion& f : evaluated) {
    double agreement = costmodel::Spearman(f.runs[0], f.runs[1]);
    double analytic = (costmodel::Spearman(f.analytic_us, f.runs[0]) +
                       costmodel::Spearman(f.analytic_us, f.runs[1])) /
                      2;
    std::printf("%-20s %-20s %-5s %9.1f %7zu %10.1f %9.3f %9.3f\n", f.name.c_str(),
                f.pattern.c_str(), f.type.c_str(), static_cast<double>(f.bytes) / 1024,
                f.rows.size(), f.best_us, agreement, analytic);
    fusions_json.push_back({{"fusion", f.name},
                            {"pattern", f.pattern},
                            {"type", f.type},
                            {"bytes", f.bytes},
                            {"configs", f.rows.size()},
                            {"best_us", f.best_us},
                            {"agreement_spearman", agreement},
                            {"analytic_spearman", analytic}});
  }

  // The rankings: run B for run A (and back), the analytic model, and learned models.
  struct Ranked {
    std::string model;
    GeneratedScores all, long_only;
  };
  std::vector<Ranked> ranked;
  auto score = [&](const std::string& name, const RankingOf& ranking) {
    ranked.push_back(
        {name, Score(evaluated, ranking, 0), Score(evaluated, ranking, options.long_us)});
  };
  score("run-to-run agreement", [&](size_t i, int truth) { return evaluated[i].runs[1 - truth]; });
  score(std::string(model.name()), [&](size_t i, int) { return evaluated[i].analytic_us; });
  std::string learned_description;
  for (costmodel::Objective objective :
       {costmodel::Objective::kLogTime, costmodel::Objective::kPairwise}) {
    std::vector<GeneratedScores> all, long_only;
    for (int seed = 0; seed < options.seeds; ++seed) {
      costmodel::LearnedModelOptions learned_options;
      learned_options.min_rows = 50;  // a bench run holds a few thousand rows, not a fleet's
      learned_options.min_fusions = 3;
      learned_options.objective = objective;
      learned_options.seed = static_cast<uint64_t>(seed);
      costmodel::LearnedModel learned(std::make_unique<costmodel::HostModel>(model.calibration()),
                                      learned_options);
      if (auto trained = learned.Retrain(train_rows); !trained) Fail(trained.error().message);
      learned_description = learned.Describe();
      std::vector<std::vector<double>> predicted;
      for (const TimedFusion& f : evaluated) {
        auto rows = learned.PredictRows(f.rows);
        if (!rows) Fail(rows.error().message);
        predicted.push_back(std::move(*rows));
      }
      RankingOf ranking = [&](size_t i, int) { return predicted[i]; };
      all.push_back(Score(evaluated, ranking, 0));
      long_only.push_back(Score(evaluated, ranking, options.long_us));
    }
    ranked.push_back({"learned " + std::string(costmodel::ObjectiveName(objective)), Average(all),
                      Average(long_only)});
  }

  std::printf(
      "\n%lld fusions of seed %llu judged (%zu skipped); learned models trained on %lld corpus "
      "fusions and %lld of seed %llu (%zu skipped, %lld the same as a judged one), %zu rows; "
      "timing took %.0f s\n",
      static_cast<long long>(evaluated.size()), static_cast<unsigned long long>(options.seed),
      skipped.size(), static_cast<long long>(corpus_fusions), static_cast<long long>(train_fusions),
      static_cast<unsigned long long>(options.train_seed), train_skipped.size(),
      static_cast<long long>(overlapping), train_rows.size(), timing_seconds);
  nlohmann::json models_json = nlohmann::json::array();
  for (bool long_only : {false, true}) {
    if (long_only) {
      std::printf("\nfusions whose best config takes at least %.0f us:\n", options.long_us);
    }
    std::printf("%-26s %7s %9s %12s %12s %10s %12s\n", "model", "fusions", "spearman",
                "top1_regret", "top5_regret", "top5_score", "strategy");
    for (const Ranked& r : ranked) PrintRow(r.model, long_only ? r.long_only : r.all);
  }
  for (const Ranked& r : ranked) {
    models_json.push_back(
        {{"model", r.model}, {"all", r.all.ToJson()}, {"long", r.long_only.ToJson()}});
  }
  std::printf(
      "(each figure against run A and run B, averaged; run-to-run agreement ranks by the other "
      "run; top5_score: sum of best times / sum of the best of the model's top 5; strategy: "
      "median share of the space the `model` strategy measures before a config within 5%% "
      "of the best, +fusions it stopped short on; learned: means over %d seeds)\n",
      options.seeds);
  std::printf("learned model (last trained): %s\n", learned_description.c_str());

  if (!options.json_path.empty()) {
    nlohmann::json json = {{"seed", options.seed},
                           {"count", options.count},
                           {"train_seed", options.train_seed},
                           {"train_count", options.train_count},
                           {"max_bytes", options.generator.max_bytes},
                           {"configs_per_fusion", options.cap},
                           {"rounds", options.rounds},
                           {"repetitions", options.repetitions},
                           {"flush", options.evict_buffers ? "buffers" : "cache"},
                           {"calibration", model.calibration().ToJson()},
                           {"timing_seconds", timing_seconds},
                           {"skipped", skipped},
                           {"train_skipped", train_skipped},
                           {"train",
                            {{"corpus_fusions", corpus_fusions},
                             {"generated_fusions", train_fusions},
                             {"same_as_judged", overlapping},
                             {"rows", train_rows.size()}}},
                           {"long_us", options.long_us},
                           {"models", models_json},
                           {"fusions", fusions_json}};
    std::ofstream(options.json_path) << json.dump(2) << "\n";
    std::fprintf(stderr, "figures written to %s\n", options.json_path.c_str());
  }
  return 0;
}

}  // namespace tilesmith::bench
