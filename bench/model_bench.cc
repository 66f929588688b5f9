// How well the analytic host model ranks real host timings: for each fusion, every config
// of its (capped) space is compiled, timed from memory (caches flushed) and predicted; the
// bench prints the Spearman rank correlation between predictions and timings, and the
// search efficiency of best-first by the model: the share of the space measured, in
// predicted order, before a config within 5% of the best is found (and what a random
// order needs on average, for comparison), and the same share for the `model` strategy
// (tune's default: batches of 8 in the model's order, re-ranked after each by its
// per-fusion correction) replayed on the timings. Then the learned model (costmodel/
// learned_model.h, both objectives) against the analytic one on the same timings, by 5-fold
// cross-validation over fusions: each fusion ranked by trees trained without it, scores
// averaged over `--seeds` seeds, and the `model` strategy replayed on that ranking too.
// `--save-timings FILE` writes every fusion's measured times per config (JSON);
// `--timings FILE` replays such a file instead of measuring (kernels are only emitted to
// Kernel IR, never compiled or run; configs the file did not time are skipped and counted),
// so model changes compare on the same timings. `--detail` prints every config's timing,
// prediction and terms on stderr, the default marked `*`.
// `--pool-spin-us N` has the pool's idle workers poll N µs before they sleep (default 0:
// they sleep at once), so a kernel timed right after the flush finds them awake.
// `--rounds N` times a fusion's configs in N interleaved rounds, each in a fresh order, and
// keeps each config's best round (default 6; 1 with --quick): one round's times agree with
// another's at a Spearman of only 0.78 on this machine, bursts of other work mostly, and
// two runs of 3 rounds at 0.90, where the learned model's held-out Spearman against one
// run's times is about 0.02 below its Spearman against the best of both.
// `--dump-rows FILE` writes every training row (fusion, config, time, features) as JSON
// (with --generated: the training rows and the judged configs' rows with both runs).
// `--flush buffers` (default) evicts each kernel's own buffers before a run, as the tuner's
// worker does; `--flush cache` overwrites 96 MiB instead, as both did before 0.4.0 (two full
// runs agreed at 0.81 that way, 0.90 evicting). `--only A,B` keeps the fusions whose path
// contains A or B; `--repetitions N` is a round's best-of count (default 5; 3 with --quick).
// `--generated N --seed S` judges the models on N generated fusions of seed S instead
// (model_bench_generated.h): each timed in two independent runs, whose agreement is printed
// beside every score; the learned model trained only on the corpus (its short list timed
// alike, or every fusion of a --timings file) and `--train-count M` (default N) fusions of
// `--train-seed T` (default S + 1; a list T1,T2,... trains on the fusions of each). Below the
// models, "fitted within each fusion" is their ceiling, not a model: the learned model's trees
// fitted to each judged fusion's own other configs (4 folds; costmodel/model_eval.h's
// FitWithinFusion), the most its features tell about that fusion.
// `--max-bytes B` caps a fusion's bytes (default 8M), `--configs N` its sampled configs
// (default 32); `--rounds` defaults to 4 (2 per run).
//   model_bench [--quick] [--detail] [--seeds N] [--rounds N] [--repetitions N] [--json OUT]
//               [--pool-spin-us N] [--flush buffers|cache] [--only A,B,...]
//               [--save-timings FILE | --timings FILE] [--dump-rows FILE]
//               [--generated N --seed S [--train-seed T[,T...]] [--train-count M]
//                [--max-bytes B] [--configs N]]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "bench/bench_output.h"
#include "bench/bench_util.h"
#include "bench/model_bench_generated.h"
#include "bench/model_bench_replay.h"
#include "bench/model_bench_timings.h"
#include "costmodel/features.h"
#include "costmodel/host_model.h"
#include "costmodel/model_eval.h"
#include "costmodel/ranking_metrics.h"
#include "tuner/builder.h"
#include "tuner/device.h"
#include "tuner/layouts.h"
#include "tuner/model_strategy.h"
#include "tuner/ranking.h"
#include "tuner/space.h"
#include "tuner/strategy.h"

namespace {

using namespace tilesmith::bench;  // NOLINT: the replays and scores (model_bench_replay.h)

// `A,B,...` as its non-empty parts.
std::vector<std::string> CommaList(const char* text) {
  std::vector<std::string> parts;
  std::istringstream list(text);
  for (std::string part; std::getline(list, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

using namespace tilesmith;
using bench::ReadCalibration;
using bench::ReadTimings;
using bench::ReplayedSample;
using bench::Sample;
using bench::SavedTimings;
using bench::TimingsToJson;

std::string CorpusDir() {
  const char* dir = std::getenv("TILESMITH_CORPUS_DIR");
  return std::string(dir && *dir ? dir : TILESMITH_SOURCE_DIR "/../shared/corpus") + "/xla/";
}

bool evict_buffers = true;  // --flush: evict each kernel's buffers (true) or overwrite the cache
bool detail = false;        // --detail: every config's timing, prediction and terms on stderr

std::string FusionName(const std::string& path) {
  return path.substr(path.rfind('/', path.rfind('/') - 1) + 1);
}

// Times the `picked` configs of `fusion`'s space, each compiled once into `prepared`, in
// `rounds` interleaved rounds, each config keeping its best round (TimeInterleavedRuns). In
// µs, by `picked`.
std::vector<double> TimeInterleaved(const hlo::HloComputation& fusion, const tuner::Space& space,
                                    const std::vector<int64_t>& picked,
                                    const std::vector<hlo::Literal>& arguments, int repetitions,
                                    int rounds, std::vector<bench::PreparedKernel>& prepared) {
  for (int64_t index : picked) {
    const tuner::Candidate& candidate = space.candidates[index];
    prepared.push_back(bench::Prepare(fusion, space.AnalysisOf(candidate), arguments,
                                      tuner::EmitterConfig(candidate.config)));
    prepared.back().evict_buffers = evict_buffers;
  }
  return bench::TimeInterleavedRuns(prepared, repetitions, rounds, /*runs=*/1)[0];
}

// Every sampled config of `path`'s space timed (or its time looked up in `replay`) and
// predicted; the times go to `saved`. An error skips the fusion.
Expected<FusionResult> RunFusion(const std::string& path, const tuner::Device& device,
                                 const costmodel::HostModel& model, int64_t cap, int repetitions,
                                 int rounds, const SavedTimings* replay, SavedTimings& saved) {
  TS_ASSIGN_OR_RETURN(auto module, hlo::ParseHloModuleFile(path));
  const hlo::HloComputation& fusion = *module->fusion();
  TS_ASSIGN_OR_RETURN(tuner::Space space, tuner::BuildSpace(*module, device.info, {}));
  std::vector<hlo::Literal> arguments;  // only for kernels that run
  if (replay == nullptr) {
    TS_ASSIGN_OR_RETURN(arguments, hlo::MakeRandomArguments(fusion, /*seed=*/1));
  }
  costmodel::DeviceFigures figures{device.info, device.cache_bytes};
  std::vector<double> measured, predicted;
  std::vector<costmodel::TrainingRow> rows;
  std::vector<std::string> row_configs;
  std::string name = FusionName(path);
  const std::map<std::string, double>* replayed = nullptr;
  int64_t skipped = 0;
  std::vector<int64_t> picked;
  if (replay != nullptr) {
    auto it = replay->find(name);
    if (it == replay->end()) return MakeError(ErrorCode::kNotFound, "no saved timings for " + name);
    replayed = &it->second;
    picked = ReplayedSample(space, cap, *replayed, skipped);
    if (picked.size() < 2)
      return MakeError(ErrorCode::kNotFound, "too few saved timings for " + name);
  } else {
    picked = Sample(space, cap);
  }
  std::vector<bench::PreparedKernel> prepared;  // the measured path's compiled kernels
  if (replayed == nullptr) {
    measured = TimeInterleaved(fusion, space, picked, arguments, repetitions, rounds, prepared);
  }
  auto host = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  for (size_t k = 0; k < picked.size(); ++k) {
    int64_t index = picked[k];
    const tuner::Candidate& candidate = space.candidates[index];
    std::string key = candidate.config.dump();
    std::optional<emitters::KernelIR> emitted;
    if (replayed != nullptr) {
      auto it = replayed->find(key);
      if (it == replayed->end())
        return MakeError(ErrorCode::kNotFound, "no saved timing for " + name + " " + key);
      measured.push_back(it->second);
      TS_ASSIGN_OR_RETURN(emitted,
                          emitters::EmitKernel(space.AnalysisOf(candidate),
                                               tuner::EmitterConfig(candidate.config), host));
    }
    saved[name][key] = measured[k];
    const emitters::KernelIR& kernel = emitted ? *emitted : prepared[k].kernel->kernel();
    TS_ASSIGN_OR_RETURN(PredictedConfig config,
                        PredictConfig(path, kernel, model, figures, measured[k]));
    const costmodel::Prediction& prediction = config.prediction;
    predicted.push_back(prediction.microseconds);
    rows.push_back(std::move(config.row));
    row_configs.push_back(key);
    if (detail) {
      nlohmann::json terms = prediction.breakdown;
      terms.erase("calibration");
      std::fprintf(stderr, "%c %10.1f %10.1f  %s  %s\n", index == space.default_index ? '*' : ' ',
                   measured[k], predicted.back(), candidate.config.dump().c_str(),
                   terms.dump().c_str());
    }
  }
  FusionResult result;
  result.name = name;
  result.configs = static_cast<int64_t>(measured.size());
  result.skipped = skipped;
  result.spearman = costmodel::Spearman(predicted, measured);
  result.rows = std::move(rows);
  result.row_configs = std::move(row_configs);
  result.best_us = *std::min_element(measured.begin(), measured.end());
  std::vector<size_t> order(measured.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return predicted[a] < predicted[b]; });
  result.predicted_best_us = measured[order.front()];
  double good = 0;
  for (double t : measured) good += t <= 1.05 * result.best_us;
  for (size_t k = 0; k < order.size(); ++k) {
    if (measured[order[k]] <= 1.05 * result.best_us) {
      result.share = static_cast<double>(k + 1) / static_cast<double>(order.size());
      break;
    }
  }
  // A random order's first good config: position (n + 1) / (good + 1) on average.
  double n = static_cast<double>(measured.size());
  result.random_share = (n + 1) / (good + 1) / n;
  result.sample = MakeMeasuredSample(space, picked, measured);
  std::tie(result.model_share, result.model_found) =
      ReplayModelStrategy(*result.sample, predicted, {});
  std::tie(result.plain_share, result.plain_found) = ReplayModelStrategy(
      *result.sample, predicted, {.trust = std::numeric_limits<double>::infinity()});
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int seeds = 3;
  int rounds = 0;                 // 0: the default for --quick or not
  int repetitions = 0;            // 0: the default for --quick or not
  std::vector<std::string> only;  // keep only the fusions whose path contains one of these
  std::string json_path, save_path, replay_path, rows_path;
  // --generated N: judge the models on N generated fusions instead (model_bench_generated.h).
  std::optional<bench::GeneratedBenchOptions> generated;
  std::optional<uint64_t> generated_seed;
  std::vector<uint64_t> train_seeds;
  int64_t train_count = -1, configs = 0;
  std::string max_bytes;
  auto whole = [&](const char* flag, const char* text) {
    char* end = nullptr;
    long long value = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || value < 0) {
      bench::Fail(std::string(flag) + " takes a whole number, not '" + text + "'");
    }
    return static_cast<int64_t>(value);
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--generated" && i + 1 < argc) {
      generated.emplace();
      generated->count = whole("--generated", argv[++i]);
    } else if (arg == "--seed" && i + 1 < argc) {
      generated_seed = static_cast<uint64_t>(whole("--seed", argv[++i]));
    } else if (arg == "--train-seed" && i + 1 < argc) {
      for (const std::string& part : CommaList(argv[++i])) {
        train_seeds.push_back(static_cast<uint64_t>(whole("--train-seed", part.c_str())));
      }
    } else if (arg == "--train-count" && i + 1 < argc) {
      train_count = whole("--train-count", argv[++i]);
    } else if (arg == "--max-bytes" && i + 1 < argc) {
      max_bytes = argv[++i];
    } else if (arg == "--configs" && i + 1 < argc) {
      configs = std::max<int64_t>(2, whole("--configs", argv[++i]));
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--detail") {
      detail = true;
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--save-timings" && i + 1 < argc) {
      save_path = argv[++i];
    } else if (arg == "--timings" && i + 1 < argc) {
      replay_path = argv[++i];
    } else if (arg == "--dump-rows" && i + 1 < argc) {
      rows_path = argv[++i];
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--flush" && i + 1 < argc) {
      std::string how = argv[++i];
      if (how != "buffers" && how != "cache") bench::Fail("--flush takes buffers or cache");
      evict_buffers = how == "buffers";
    } else if (arg == "--repetitions" && i + 1 < argc) {
      repetitions = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--only" && i + 1 < argc) {
      std::ranges::move(CommaList(argv[++i]), std::back_inserter(only));
    } else if (arg == "--seeds" && i + 1 < argc) {
      seeds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--pool-spin-us" && i + 1 < argc) {
      // How long the pool's idle workers poll before they sleep (default 0).
      ThreadPool::Default().set_spin(std::chrono::microseconds(std::atoi(argv[++i])));
    } else {
      bench::Fail(
          "usage: model_bench [--quick] [--detail] [--seeds N] [--rounds N] [--repetitions N] "
          "[--only TEXT[,TEXT...]] [--flush buffers|cache] [--json OUT] "
          "[--pool-spin-us N] "
          "[--save-timings FILE | --timings FILE] [--dump-rows FILE] "
          "[--generated N --seed S [--train-seed T[,T...]] [--train-count M] [--max-bytes B] "
          "[--configs N]]");
    }
  }
  if (generated) {
    if (!generated_seed) bench::Fail("--generated N needs --seed S: the fusions to judge");
    generated->seed = *generated_seed;
    generated->train_seeds =
        train_seeds.empty() ? std::vector<uint64_t>{*generated_seed + 1} : train_seeds;
    generated->train_count = train_count >= 0 ? train_count : generated->count;
    if (std::ranges::count(generated->train_seeds, generated->seed) > 0 &&
        generated->train_count > 0) {
      bench::Fail(
          "--train-seed must differ from --seed: the models are judged on fusions "
          "they never saw");
    }
    if (!max_bytes.empty()) {
      auto bytes = hlo::ParseByteCount(max_bytes);
      if (!bytes) bench::Fail("--max-bytes: " + bytes.error().message);
      generated->generator.max_bytes = *bytes;
    }
    if (auto valid = hlo::ValidateGeneratorOptions(generated->generator); !valid) {
      bench::Fail("--max-bytes: " + valid.error().message);
    }
    if (configs > 0) generated->cap = configs;
    if (rounds > 0) generated->rounds = std::max(2, rounds);
    if (repetitions > 0) generated->repetitions = repetitions;
    generated->seeds = seeds;
    generated->evict_buffers = evict_buffers;
    generated->json_path = json_path;
    generated->detail = detail;
  } else if (generated_seed || !train_seeds.empty() || train_count >= 0 || !max_bytes.empty() ||
             configs > 0) {
    bench::Fail(
        "--seed, --train-seed, --train-count, --max-bytes and --configs go with "
        "--generated N");
  }
  std::optional<SavedTimings> replay;
  if (!replay_path.empty()) {
    auto read = ReadTimings(replay_path);
    if (!read) bench::Fail(read.error().message);
    replay = std::move(*read);
    std::fprintf(stderr, "replaying timings from %s\n", replay_path.c_str());
  }
  std::optional<bench::SavedGenerated> replay_generated;
  if (replay && generated) {
    auto read = bench::ReadGeneratedTimings(replay_path);
    if (!read) bench::Fail(read.error().message);
    replay_generated = std::move(*read);
    generated->replay = &*replay_generated;
  }
  if (generated) generated->save_path = save_path;
  SavedTimings saved;
  auto device = tuner::ResolveDevice("host", "", tuner::DefaultDevicesDir());
  if (!device) bench::Fail(device.error().message);
  costmodel::HostCalibration calibration;
  if (replay) {
    auto saved_calibration = ReadCalibration(replay_path);
    if (!saved_calibration) bench::Fail(saved_calibration.error().message);
    calibration = *saved_calibration;
  } else {
    calibration = costmodel::MeasureHostCalibration(device->cache_bytes);
  }
  costmodel::HostModel model(calibration);
  std::fprintf(stderr, "calibration: %s\n", model.calibration().ToJson().dump().c_str());
  std::vector<std::string> fusions = {
      TILESMITH_SOURCE_DIR "/configs/examples/gelu.hlo",
      TILESMITH_SOURCE_DIR "/tests/data/tuner/gelu_f32.hlo",
      CorpusDir() + "transpose/fused_transpose_021.hlo",
      CorpusDir() + "reduce_column/horizontal_fusion_two_groups.hlo",
      CorpusDir() + "concatenate/vectorization.hlo",
      CorpusDir() + "reduce_row/reduction_groups_two_in_same_group.hlo",
  };
  // Judging generated fusions, the corpus only trains the learned model: its short list,
  // timed as the generated fusions are, or every fusion a --timings file replays.
  if (!quick && (!generated || replay)) {
    for (const char* name :
         {"transpose/epilogue.hlo", "transpose/fused_transpose_210.hlo",
          "transpose/side_outputs_inplace.hlo", "transpose/packed_transpose_multiple_heroes.hlo",
          "transpose/transpose_021.hlo", "reduce_column/vectorize_x2_f32.hlo",
          "reduce_row/minor_and_major.hlo", "reduce_multirow/f16_v4.hlo",
          "reduce_multirow/pred_mof_x2_v4.hlo",
          // Smaller fusions (8 K - 500 K elements): timings of tens of microseconds.
          "transpose/multiple_roots_mixed_rank.hlo",
          "transpose/side_output_and_hero_indexing_match.hlo", "transpose/mixed_indexing.hlo",
          "transpose/transpose_102.hlo", "transpose/packed_transpose_s16.hlo",
          "reduce_row/epilogue.hlo", "reduce_row/side_output.hlo", "reduce_row/small_s32.hlo",
          "reduce_row/layout.hlo", "reduce_column/mof_heteorgeneous_input_shapes.hlo",
          "reduce_column/vectorize_x4_s16.hlo", "reduce_column/vectorize_x1_c64.hlo",
          "reduce_multirow/f32_x8.hlo", "reduce_multirow/maximum_vector_size.hlo",
          "concatenate/concat_1d.hlo"}) {
      fusions.push_back(CorpusDir() + name);
    }
  }
  int64_t cap = quick ? 16 : 48;
  if (repetitions == 0) repetitions = quick ? 3 : 5;
  if (generated) cap = generated->cap;  // a replay samples as the timing run sampled
  if (generated && !replay) {
    repetitions = generated->repetitions;
    rounds = generated->rounds;
  }
  // How the timings started from memory: this run's way, or the replayed file's.
  std::string flush = evict_buffers ? "buffers" : "cache";
  if (replay) flush = "replayed from " + replay_path;
  if (!only.empty()) {
    std::erase_if(fusions, [&](const std::string& path) {
      return std::none_of(only.begin(), only.end(), [&](const std::string& part) {
        return path.find(part) != std::string::npos;
      });
    });
  }
  if (generated && replay) {
    // Only the corpus fusions the file holds train: a generated run's file has its short list.
    std::erase_if(fusions,
                  [&](const std::string& path) { return !replay->contains(FusionName(path)); });
  }
  if (rounds == 0) rounds = quick ? 1 : 6;
  std::printf("%-48s %7s %9s %9s %9s %9s %9s %11s %11s\n", "fusion", "configs", "spearman", "share",
              "model", "plain", "random", "best_us", "top_pick_us");
  std::vector<FusionResult> results;
  for (const std::string& path : fusions) {
    auto run = RunFusion(path, *device, model, cap, repetitions, rounds,
                         replay ? &*replay : nullptr, saved);
    if (!run) {
      std::printf("%-48s skipped: %s\n", path.c_str(), run.error().message.c_str());
      continue;
    }
    const FusionResult& r = *run;
    char model_share[32] = "missed", plain_share[32] = "missed";
    if (r.model_found)
      std::snprintf(model_share, sizeof(model_share), "%.1f%%", 100 * r.model_share);
    if (r.plain_found) {
      std::snprintf(plain_share, sizeof(plain_share), "%.1f%%", 100 * r.plain_share);
    }
    std::printf("%-48s %7lld %9.3f %8.1f%% %9s %9s %8.1f%% %11.1f %11.1f\n", r.name.c_str(),
                static_cast<long long>(r.configs), r.spearman, 100 * r.share, model_share,
                plain_share, 100 * r.random_share, r.best_us, r.predicted_best_us);
    if (r.skipped > 0) {
      std::printf(
          "%-48s replay: %lld sampled configs have no saved timing (new since the file "
          "was measured): skipped\n",
          "", static_cast<long long>(r.skipped));
    }
    std::fflush(stdout);
    results.push_back(r);
  }
  std::vector<double> rho, share, random_share, model_share, plain_share;
  int64_t missed = 0, plain_missed = 0, skipped = 0, skipped_fusions = 0;
  for (const FusionResult& r : results) {
    skipped += r.skipped;
    skipped_fusions += r.skipped > 0;
    rho.push_back(r.spearman);
    share.push_back(r.share);
    random_share.push_back(r.random_share);
    model_share.push_back(r.model_share);  // a miss counts as the whole space
    missed += !r.model_found;
    plain_share.push_back(r.plain_share);
    plain_missed += !r.plain_found;
  }
  std::printf(
      "median over %zu fusions: spearman %.3f, best-first share %.1f%%, model strategy share "
      "%.1f%% (%lld stopped before a config within 5%% of the best; without its trust check "
      "%.1f%%, %lld), random %.1f%%\n",
      results.size(), Median(rho), 100 * Median(share), 100 * Median(model_share),
      static_cast<long long>(missed), 100 * Median(plain_share),
      static_cast<long long>(plain_missed), 100 * Median(random_share));
  if (generated) {
    std::vector<costmodel::TrainingRow> corpus_rows;
    for (const FusionResult& r : results) {
      corpus_rows.insert(corpus_rows.end(), r.rows.begin(), r.rows.end());
    }
    generated->rows_path = rows_path;
    return bench::RunGeneratedBench(*generated, *device, model, corpus_rows,
                                    static_cast<int64_t>(results.size()),
                                    TimingsToJson(saved, quick, model.calibration(), flush));
  }
  if (replay) {
    std::printf(
        "replay: %lld sampled configs in %lld fusions had no saved timing and were skipped\n",
        static_cast<long long>(skipped), static_cast<long long>(skipped_fusions));
  }
  if (!save_path.empty()) {
    bench::WriteOutput(save_path,
                       TimingsToJson(saved, quick, model.calibration(), flush).dump(1) + "\n",
                       "timings");
  }

  if (!rows_path.empty()) {
    bench::WriteOutput(rows_path, RowsToJson(results).dump() + "\n", "training rows");
  }

  // The learned model on the same timings: every fusion ranked by trees that never saw it.
  std::vector<costmodel::TrainingRow> all_rows;
  for (const FusionResult& r : results)
    all_rows.insert(all_rows.end(), r.rows.begin(), r.rows.end());
  int folds = std::min<int>(5, static_cast<int>(results.size()));
  nlohmann::json learned_json = {{"folds", folds}, {"seeds", seeds}};
  std::printf("\n%d-fold cross-validation over fusions, means over %d seeds:\n", folds, seeds);
  std::printf("%-28s %9s %13s %9s %13s %13s %13s %9s\n", "model", "spearman", "(seeds)", "kendall",
              "top1_regret", "median_top1", "top5_regret", "strategy");
  bool analytic_printed = false;
  AveragedScores uncompiled_analytic;
  std::vector<std::pair<std::string, AveragedScores>> uncompiled;  // learned, by objective
  for (costmodel::Objective objective :
       {costmodel::Objective::kLogTime, costmodel::Objective::kPairwise}) {
    auto scores =
        CrossValidateSeeds(results, all_rows, folds, seeds, objective, model.calibration());
    if (!scores) {
      std::printf("learned model: not evaluated: %s\n", scores.error().message.c_str());
      break;
    }
    if (!analytic_printed) {
      scores->analytic.strategy_share = Median(model_share);
      scores->analytic.strategy_missed = static_cast<double>(missed);
      PrintScores(scores->analytic, "");
      learned_json["analytic"] = scores->analytic.ToJson();
      analytic_printed = true;
    }
    PrintScores(scores->learned, std::string(costmodel::ObjectiveName(objective)));
    nlohmann::json& learned = learned_json[std::string(costmodel::ObjectiveName(objective))];
    learned = scores->learned.ToJson();
    learned["description"] = scores->description;
    if (scores->learned_estimated.runs > 0) {
      uncompiled_analytic = scores->analytic_estimated;
      uncompiled.emplace_back(std::string(costmodel::ObjectiveName(objective)),
                              scores->learned_estimated);
      learned["uncompiled"] = scores->learned_estimated.ToJson();
      learned_json["analytic_uncompiled"] = scores->analytic_estimated.ToJson();
    }
  }
  if (!uncompiled.empty()) {
    // What `/v1/query` ranks by: nothing compiled, so no counted code.
    std::printf("uncompiled (no counted code, as /v1/query ranks):\n");
    PrintScores(uncompiled_analytic, "", /*strategy=*/false);
    for (const auto& [objective, scores] : uncompiled) PrintScores(scores, objective, false);
  }
  std::printf(
      "(strategy: median share of the space the `model` strategy measures before a config "
      "within 5%% of the best, ranked by that model; stopped short: +N)\n");
  if (!json_path.empty()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const FusionResult& r : results) {
      rows.push_back({{"fusion", r.name},
                      {"configs", r.configs},
                      {"spearman", r.spearman},
                      {"share", r.share},
                      {"random_share", r.random_share},
                      {"model_share", r.model_found ? nlohmann::json(r.model_share) : nullptr},
                      {"plain_share", r.plain_found ? nlohmann::json(r.plain_share) : nullptr},
                      {"best_us", r.best_us},
                      {"top_pick_us", r.predicted_best_us}});
    }
    nlohmann::json figures{{"calibration", model.calibration().ToJson()},
                           {"flush", flush},
                           {"fusions", rows},
                           {"median_spearman", Median(rho)},
                           {"median_share", Median(share)},
                           {"median_random_share", Median(random_share)},
                           {"median_model_share", Median(model_share)},
                           {"model_strategy_missed", missed},
                           {"median_plain_share", Median(plain_share)},
                           {"plain_missed", plain_missed},
                           {"learned_vs_analytic", learned_json}};
    bench::WriteOutput(json_path, figures.dump(2) + "\n", "figures");
  }
  return 0;
}
