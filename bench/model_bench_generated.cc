#include "bench/model_bench_generated.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include "bench/bench_output.h"
#include "bench/bench_util.h"
#include "bench/model_bench_replay.h"
#include "bench/model_bench_timings.h"
#include "compiler/hlo/canonical.h"
#include "costmodel/features.h"
#include "costmodel/learned_selection.h"
#include "costmodel/model_eval.h"
#include "costmodel/ranking_metrics.h"
#include "tuner/layouts.h"
#include "tuner/space.h"

namespace tilesmith::bench {
namespace {

// Folds of the training fusions on which the learned model's selection is decided.
constexpr int kSelectionFolds = 5;

// The row of trees fitted within each judged fusion: the features' ceiling, not a model.
constexpr const char* kWithinFusion = "fitted within each fusion";

// A ranking of fusion `i` to score against run `truth` (0: A, 1: B), µs by sampled config.
using RankingOf = std::function<std::vector<double>(size_t i, int truth)>;

// The generated fusion's module kept alive beside its timings: a space's analyses point
// into it.
struct Timed {
  std::shared_ptr<hlo::HloModule> module;
  TimedFusion fusion;
};

// Fusion `generated` timed in two runs, or replayed from `options.replay` when it holds the
// fusion; its runs are added to `saved`.
Expected<Timed> TimeFusion(const hlo::GeneratedFusion& generated, const tuner::Device& device,
                           const costmodel::HostModel& model, const GeneratedBenchOptions& options,
                           SavedGenerated& saved) {
  TS_ASSIGN_OR_RETURN(std::shared_ptr<hlo::HloModule> module,
                      hlo::ParseHloModule(generated.text, generated.name));
  const hlo::HloComputation& fusion = *module->fusion();
  TS_ASSIGN_OR_RETURN(tuner::Space space, tuner::BuildSpace(*module, device.info, {}));
  const SavedGeneratedFusion* replayed = nullptr;
  if (options.replay != nullptr) {
    auto it = options.replay->fusions.find(generated.name);
    if (it != options.replay->fusions.end()) replayed = &it->second;
  }
  std::vector<int64_t> picked;
  if (replayed != nullptr) {
    std::map<std::string, double> run_a;
    for (const auto& [config, runs] : replayed->runs) run_a[config] = runs.first;
    int64_t skipped = 0;
    picked = ReplayedSample(space, options.cap, run_a, skipped);
  } else {
    picked = Sample(space, options.cap);
  }
  if (picked.size() < 2) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        "a space of " + std::to_string(space.candidates.size()) + " config(s): nothing to rank");
  }
  std::vector<std::vector<double>> runs(2);
  std::vector<emitters::KernelIR> kernels;
  if (replayed != nullptr) {
    auto host = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
    for (int64_t index : picked) {
      const tuner::Candidate& candidate = space.candidates[index];
      TS_ASSIGN_OR_RETURN(emitters::KernelIR kernel,
                          emitters::EmitKernel(space.AnalysisOf(candidate),
                                               tuner::EmitterConfig(candidate.config), host));
      kernels.push_back(std::move(kernel));
      const auto& [a, b] = replayed->runs.at(candidate.config.dump());
      runs[0].push_back(a);
      runs[1].push_back(b);
    }
  } else {
    TS_ASSIGN_OR_RETURN(std::vector<hlo::Literal> arguments,
                        hlo::MakeRandomArguments(fusion, /*seed=*/1));
    std::vector<PreparedKernel> prepared;
    for (int64_t index : picked) {
      const tuner::Candidate& candidate = space.candidates[index];
      TS_ASSIGN_OR_RETURN(PreparedKernel kernel,
                          TryPrepare(fusion, space.AnalysisOf(candidate), arguments,
                                     tuner::EmitterConfig(candidate.config)));
      kernel.evict_buffers = options.evict_buffers;
      prepared.push_back(std::move(kernel));
    }
    runs = TimeInterleavedRuns(prepared, options.repetitions, options.rounds, /*runs=*/2);
    for (PreparedKernel& kernel : prepared) kernels.push_back(kernel.kernel->kernel());
  }
  Timed timed{module, {}};
  TimedFusion& result = timed.fusion;
  result.name = generated.name;
  result.pattern = generated.pattern;
  result.type = std::string(hlo::PrimitiveTypeName(generated.type));
  result.bytes = generated.bytes;
  result.replayed = replayed != nullptr;
  SavedGeneratedFusion& record = saved.fusions[generated.name];
  record = {result.pattern, result.type, result.bytes, {}};
  costmodel::DeviceFigures figures{device.info, device.cache_bytes};
  for (size_t k = 0; k < picked.size(); ++k) {
    record.runs[space.candidates[picked[k]].config.dump()] = {runs[0][k], runs[1][k]};
    double best = std::min(runs[0][k], runs[1][k]);
    TS_ASSIGN_OR_RETURN(PredictedConfig config,
                        PredictConfig(generated.name, kernels[k], model, figures, best));
    result.analytic_us.push_back(config.prediction.microseconds);
    result.rows.push_back(std::move(config.row));
    if (options.detail) {
      nlohmann::json terms = config.prediction.breakdown;
      terms.erase("calibration");
      const std::vector<float>& x = result.rows.back().features;
      for (const char* name :
           {"code.instructions", "code.divisions", "code.constant_divisions", "code.gather_lanes",
            "code.half_lanes", "code.machine_instructions", "code.float_divisions"}) {
        terms[name] = x[costmodel::FeatureIndex(name)];
      }
      std::fprintf(stderr, "%s %c %10.1f %10.1f %10.1f  %s  %s\n", generated.name.c_str(),
                   picked[k] == space.default_index ? '*' : ' ', runs[0][k], runs[1][k],
                   config.prediction.microseconds,
                   space.candidates[picked[k]].config.dump().c_str(), terms.dump().c_str());
    }
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
                            std::vector<std::string>& skipped, SavedGenerated& saved) {
  std::vector<Timed> timed;
  for (int64_t i = 0; i < count; ++i) {
    hlo::GeneratedFusion generated = hlo::GenerateFusion(seed, i, options.generator);
    auto fusion_start = Clock::now();
    auto result = TimeFusion(generated, device, model, options, saved);
    if (!result) {
      skipped.push_back(generated.name + " (" + generated.pattern + "): " + result.error().message);
      if (skipped.size() <= 5) {
        std::fprintf(stderr, "skipped %s\n", skipped.back().c_str());
      }
      continue;
    }
    const TimedFusion& f = result->fusion;
    std::fprintf(stderr,
                 "[%s %lld/%lld] %s %s %s %.0f KiB: %zu configs, best %.1f us, %.1f s%s "
                 "(elapsed %.0f s)\n",
                 label, static_cast<long long>(i + 1), static_cast<long long>(count),
                 f.name.c_str(), f.pattern.c_str(), f.type.c_str(),
                 static_cast<double>(f.bytes) / 1024, f.rows.size(), f.best_us,
                 Seconds(fusion_start), f.replayed ? " (replayed)" : "", Seconds(start));
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

// `1,2,3`: seeds as the command line takes them.
std::string SeedList(const std::vector<uint64_t>& seeds) {
  std::string list;
  for (uint64_t seed : seeds) list += (list.empty() ? "" : ",") + std::to_string(seed);
  return list;
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

// Spearman per fusion of `ranking` against run A and run B, averaged.
std::vector<double> PerFusionSpearman(const std::vector<TimedFusion>& fusions,
                                      const RankingOf& ranking) {
  std::vector<double> rho;
  for (size_t i = 0; i < fusions.size(); ++i) {
    rho.push_back((costmodel::Spearman(ranking(i, 0), fusions[i].runs[0]) +
                   costmodel::Spearman(ranking(i, 1), fusions[i].runs[1])) /
                  2);
  }
  return rho;
}

// The emitter of a fusion's default config, which is what a fusion's kind is to the models.
std::string DefaultEmitter(const TimedFusion& fusion) {
  std::string emitter = costmodel::EmitterOfFeatures(
      fusion.rows[static_cast<size_t>(fusion.samples[0].space.default_index)].features);
  return emitter.empty() ? "?" : emitter;
}

// `learned pairwise` -> `pairwise`: a column header.
std::string ShortName(const std::string& model) {
  if (model == "run-to-run agreement") return "agreement";
  if (model == kWithinFusion) return "within";
  if (model.starts_with("analytic")) return "analytic";
  if (model.starts_with("learned ")) {
    std::string name = model.substr(8);
    return name.ends_with(" (selected)") ? name.substr(0, name.size() - 11) + "+sel" : name;
  }
  return model.size() > 9 ? model.substr(0, 9) : model;
}

// Mean Spearman of each model over the fusions of each group (`key` of a fusion).
void PrintGroups(const char* by, const std::vector<TimedFusion>& fusions,
                 const std::vector<std::pair<std::string, std::vector<double>>>& per_fusion,
                 const std::function<std::string(const TimedFusion&)>& key) {
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < fusions.size(); ++i) groups[key(fusions[i])].push_back(i);
  std::printf("\nmean Spearman by %s:\n%-22s %7s", by, by, "fusions");
  for (const auto& [name, rho] : per_fusion) std::printf(" %9s", ShortName(name).c_str());
  std::printf("\n");
  for (const auto& [group, members] : groups) {
    std::printf("%-22s %7zu", group.c_str(), members.size());
    for (const auto& [name, rho] : per_fusion) {
      double sum = 0;
      for (size_t i : members) sum += rho[i];
      std::printf(" %9.3f", sum / static_cast<double>(members.size()));
    }
    std::printf("\n");
  }
}

// The learned models' training rows, as compiled (their estimates, which the models also
// train on, are left out), and the judged fusions' rows with both runs' times, for
// `--dump-rows`.
nlohmann::json GeneratedRowsToJson(const std::vector<costmodel::TrainingRow>& train_rows,
                                   const std::vector<TimedFusion>& judged) {
  nlohmann::json train = nlohmann::json::array();
  for (const costmodel::TrainingRow& row : train_rows) {
    train.push_back({{"fusion", row.fusion},
                     {"measured_us", row.measured_us},
                     {"analytic_us", row.analytic_us},
                     {"compiled", row.compiled},
                     {"features", FeaturesToJson(row.features)}});
  }
  nlohmann::json judged_rows = nlohmann::json::array();
  for (const TimedFusion& fusion : judged) {
    for (size_t k = 0; k < fusion.rows.size(); ++k) {
      judged_rows.push_back({{"fusion", fusion.name},
                             {"pattern", fusion.pattern},
                             {"type", fusion.type},
                             {"run_a_us", fusion.runs[0][k]},
                             {"run_b_us", fusion.runs[1][k]},
                             {"analytic_us", fusion.rows[k].analytic_us},
                             {"features", FeaturesToJson(fusion.rows[k].features)}});
    }
  }
  return {{"feature_names", FeatureNamesToJson()},
          {"train", std::move(train)},
          {"judged", std::move(judged_rows)}};
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
                      int64_t corpus_fusions, nlohmann::json corpus_timings) {
  auto start = Clock::now();
  std::vector<std::string> skipped, train_skipped;
  if (options.replay != nullptr && !options.replay->fusions.empty() &&
      options.replay->max_bytes != options.generator.max_bytes) {
    Fail("--timings: its generated fusions were made with --max-bytes " +
         std::to_string(options.replay->max_bytes) + ", not " +
         std::to_string(options.generator.max_bytes) + ": the same names are other fusions");
  }
  SavedGenerated saved{options.generator.max_bytes, {}};
  std::vector<Timed> evaluated_timed =
      TimeSeed("eval", options.seed, options.count, device, model, options, start, skipped, saved);
  std::vector<Timed> train_timed;
  for (uint64_t train_seed : options.train_seeds) {
    std::vector<Timed> timed = TimeSeed("train", train_seed, options.train_count, device, model,
                                        options, start, train_skipped, saved);
    std::ranges::move(timed, std::back_inserter(train_timed));
  }
  double timing_seconds = Seconds(start);
  if (!options.save_path.empty()) {
    // The replayed file's other generated fusions are kept, so a file can grow by seeds.
    if (options.replay != nullptr) {
      for (const auto& [name, fusion] : options.replay->fusions)
        saved.fusions.try_emplace(name, fusion);
    }
    corpus_timings["generated"] = GeneratedTimingsToJson(saved);
    WriteOutput(options.save_path, corpus_timings.dump(1) + "\n", "timings");
  }
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

  if (!options.rows_path.empty()) {
    WriteOutput(options.rows_path, GeneratedRowsToJson(train_rows, evaluated).dump() + "\n",
                "training and judged rows");
  }

  // The rankings: run B for run A (and back), the analytic model, and learned models.
  struct Ranked {
    std::string model;
    GeneratedScores all, long_only;
  };
  std::vector<Ranked> ranked;
  // Each model's Spearman per judged fusion (against both runs, averaged; learned: over seeds).
  std::vector<std::pair<std::string, std::vector<double>>> per_fusion;
  auto score = [&](const std::string& name, const RankingOf& ranking) {
    ranked.push_back(
        {name, Score(evaluated, ranking, 0), Score(evaluated, ranking, options.long_us)});
    per_fusion.emplace_back(name, PerFusionSpearman(evaluated, ranking));
  };
  score("run-to-run agreement", [&](size_t i, int truth) { return evaluated[i].runs[1 - truth]; });
  score(std::string(model.name()), [&](size_t i, int) { return evaluated[i].analytic_us; });
  std::string learned_description;
  std::vector<std::string> selections;
  for (costmodel::Objective objective :
       {costmodel::Objective::kLogTime, costmodel::Objective::kPairwise}) {
    costmodel::LearnedModelOptions learned_options;
    learned_options.min_rows = 50;  // a bench run holds a few thousand rows, not a fleet's
    learned_options.min_fusions = 3;
    learned_options.objective = objective;
    // Where the learned model answers, decided as `tilesmith model train` decides it: on the
    // training fusions' held-out folds, never on the judged fusions.
    int folds =
        static_cast<int>(std::min<int64_t>(kSelectionFolds, costmodel::FusionCount(train_rows)));
    auto decided = costmodel::DecideSelection(
        train_rows, folds,
        [&] { return std::make_unique<costmodel::HostModel>(model.calibration()); },
        learned_options);
    // Too few training fusions to decide: the learned model answers everywhere, and says so.
    costmodel::LearnedSelection selection = decided ? *decided : costmodel::LearnedSelection{};
    std::string name = "learned " + std::string(costmodel::ObjectiveName(objective));
    selections.push_back(name + ": " + selection.Describe() +
                         (decided ? "" : " (" + decided.error().message + ")"));
    std::array<std::vector<GeneratedScores>, 2> all, long_only;  // plain, selected
    std::array<std::vector<double>, 2> fusion_rho;
    for (auto& rho : fusion_rho) rho.assign(evaluated.size(), 0);
    for (int seed = 0; seed < options.seeds; ++seed) {
      learned_options.seed = static_cast<uint64_t>(seed);
      costmodel::LearnedModel learned(std::make_unique<costmodel::HostModel>(model.calibration()),
                                      learned_options);
      if (auto trained = learned.Retrain(train_rows); !trained) Fail(trained.error().message);
      for (int selected = 0; selected < 2; ++selected) {
        if (selected) learned.set_selection(selection);
        learned_description = learned.Describe();
        std::vector<std::vector<double>> predicted;
        for (const TimedFusion& f : evaluated) {
          auto rows = learned.PredictRows(f.rows);
          if (!rows) Fail(rows.error().message);
          predicted.push_back(std::move(*rows));
        }
        RankingOf ranking = [&](size_t i, int) { return predicted[i]; };
        all[selected].push_back(Score(evaluated, ranking, 0));
        long_only[selected].push_back(Score(evaluated, ranking, options.long_us));
        std::vector<double> rho = PerFusionSpearman(evaluated, ranking);
        for (size_t i = 0; i < rho.size(); ++i) fusion_rho[selected][i] += rho[i] / options.seeds;
      }
    }
    for (int selected = 0; selected < 2; ++selected) {
      std::string label = name + (selected ? " (selected)" : "");
      ranked.push_back({label, Average(all[selected]), Average(long_only[selected])});
      per_fusion.emplace_back(label, std::move(fusion_rho[selected]));
    }
  }

  // The features' ceiling (costmodel::FitWithinFusion): trees fitted to each judged fusion's
  // own other configs. Where the models trail it, transfer from other fusions fails; where it
  // trails the agreement, the features miss what decides the times.
  std::vector<std::vector<double>> within;
  for (const TimedFusion& f : evaluated) {
    auto predicted = costmodel::FitWithinFusion(
        f.rows, [&] { return std::make_unique<costmodel::HostModel>(model.calibration()); });
    if (!predicted) Fail(f.name + ": " + predicted.error().message);
    within.push_back(std::move(*predicted));
  }
  score(kWithinFusion, [&](size_t i, int) { return within[i]; });

  // Per judged fusion, then by pattern, element type, emitter and size: where models fail.
  std::vector<std::string> emitters;
  for (const TimedFusion& f : evaluated) emitters.push_back(DefaultEmitter(f));
  std::printf("\n%-20s %-20s %-5s %-13s %9s %7s %10s", "fusion", "pattern", "type", "emitter",
              "KiB", "configs", "best_us");
  for (const auto& [name, rho] : per_fusion) std::printf(" %9s", ShortName(name).c_str());
  std::printf("\n");
  nlohmann::json fusions_json = nlohmann::json::array();
  for (size_t i = 0; i < evaluated.size(); ++i) {
    const TimedFusion& f = evaluated[i];
    std::printf("%-20s %-20s %-5s %-13s %9.1f %7zu %10.1f", f.name.c_str(), f.pattern.c_str(),
                f.type.c_str(), emitters[i].c_str(), static_cast<double>(f.bytes) / 1024,
                f.rows.size(), f.best_us);
    nlohmann::json spearman = nlohmann::json::object();
    for (const auto& [name, rho] : per_fusion) {
      std::printf(" %9.3f", rho[i]);
      spearman[name] = rho[i];
    }
    std::printf("\n");
    fusions_json.push_back({{"fusion", f.name},
                            {"pattern", f.pattern},
                            {"type", f.type},
                            {"emitter", emitters[i]},
                            {"bytes", f.bytes},
                            {"configs", f.rows.size()},
                            {"best_us", f.best_us},
                            {"agreement_spearman", per_fusion[0].second[i]},
                            {"analytic_spearman", per_fusion[1].second[i]},
                            {"spearman", std::move(spearman)}});
  }
  PrintGroups("pattern", evaluated, per_fusion, [](const TimedFusion& f) { return f.pattern; });
  PrintGroups("type", evaluated, per_fusion, [](const TimedFusion& f) { return f.type; });
  PrintGroups("emitter", evaluated, per_fusion,
              [&](const TimedFusion& f) { return emitters[&f - evaluated.data()]; });
  PrintGroups("best time", evaluated, per_fusion, [](const TimedFusion& f) {
    return std::string(f.best_us < 10 ? "< 10 us" : f.best_us < 100 ? "10-100 us" : ">= 100 us");
  });

  std::printf(
      "\n%lld fusions of seed %llu judged (%zu skipped); learned models trained on %lld corpus "
      "fusions and %lld of seed(s) %s (%zu skipped, %lld the same as a judged one), %zu rows; "
      "timing took %.0f s\n",
      static_cast<long long>(evaluated.size()), static_cast<unsigned long long>(options.seed),
      skipped.size(), static_cast<long long>(corpus_fusions), static_cast<long long>(train_fusions),
      SeedList(options.train_seeds).c_str(), train_skipped.size(),
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
      "of the best, +fusions it stopped short on; learned: means over %d seeds; fitted within "
      "each fusion: the learned model's trees fitted to the fusion's own other configs, %d "
      "folds, the most its features tell, not a model)\n",
      options.seeds, costmodel::WithinFusionOptions{}.folds);
  std::printf("learned model (last trained): %s\n", learned_description.c_str());
  for (const std::string& selection : selections) {
    std::printf("selection (%d folds of the training fusions), %s\n", kSelectionFolds,
                selection.c_str());
  }

  if (!options.json_path.empty()) {
    nlohmann::json json = {{"seed", options.seed},
                           {"count", options.count},
                           {"train_seeds", options.train_seeds},
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
                           {"selections", selections},
                           {"fusions", fusions_json}};
    WriteOutput(options.json_path, json.dump(2) + "\n", "figures");
  }
  return 0;
}

}  // namespace tilesmith::bench
