// model_bench --generated: the cost models judged on fusions nobody tuned them to. N fusions
// of a seed (compiler/hlo/fusion_generator.h) are timed config by config in two independent
// runs, whose agreement is reported beside every model's score as the bound on it; the
// analytic model ranks them untrained, the learned model after training only on the corpus
// fusions and on the fusions of other seeds.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/model_bench_replay.h"
#include "compiler/hlo/fusion_generator.h"
#include "costmodel/host_model.h"
#include "costmodel/learned_model.h"
#include "tuner/device.h"

namespace tilesmith::bench {

struct GeneratedBenchOptions {
  int64_t count = 40;
  uint64_t seed = 0;
  int64_t train_count = 40;              // fusions of each training seed
  std::vector<uint64_t> train_seeds{1};  // never `seed`: the judged fusions stay unseen
  hlo::FusionGeneratorOptions generator{.max_bytes = int64_t{8} << 20};
  int64_t cap = 32;     // configs sampled from each space
  int rounds = 4;       // interleaved rounds, alternately for run A and run B
  int repetitions = 5;  // a round's best-of count
  int seeds = 3;        // learned models trained per objective, seeded apart
  bool evict_buffers = true;
  double long_us = 100;  // the subset of fusions whose best config takes at least this
  std::string json_path;
  // --timings: generated fusions replayed from a file instead of timed (those it lacks are
  // timed); --save-timings: where every generated fusion's two runs go, beside the corpus's.
  const SavedGenerated* replay = nullptr;
  std::string save_path;
  bool detail = false;  // --detail: every config's two times, prediction and terms on stderr
  // --dump-rows: the learned models' training rows and every judged config's rows with both
  // runs, as JSON, for analysing the models' inputs outside the bench.
  std::string rows_path;
};

// One generated fusion, every sampled config timed in two runs.
struct TimedFusion {
  std::string name, pattern, type;
  int64_t bytes = 0;
  std::array<std::vector<double>, 2> runs;  // µs by sampled config: run A, run B
  std::array<MeasuredSample, 2> samples;    // the same, as the `model` strategy replays them
  std::vector<double> analytic_us;
  std::vector<costmodel::TrainingRow> rows;  // measured: the best of both runs
  double best_us = 0;
  bool replayed = false;  // its runs came from a --timings file
};

// How well one ranking of every fusion's configs matches the timings: each figure is
// computed against run A and against run B and the two averaged.
struct GeneratedScores {
  int64_t fusions = 0;
  double spearman = 0;
  double top1_regret = 0;      // mean over fusions: the predicted best's time over the best, - 1
  double top5_regret = 0;      // the same for the best of the predicted five
  double top5_score = 0;       // TenSet's: sum of best times / sum of the predicted five's best
  double strategy_share = 0;   // median share the `model` strategy measures to get within 5%
  double strategy_missed = 0;  // fusions it stopped short on
  nlohmann::json ToJson() const;
};

// Generates, times (or replays) and scores; prints a table and writes `options.json_path`.
// `corpus_rows` (from `corpus_fusions` fusions) join the training set. With
// `options.save_path`, writes `corpus_timings` (TimingsToJson of the corpus fusions) with
// every generated fusion's runs added under "generated". `options.train_seeds` must not
// hold `options.seed` when `options.train_count` > 0 (model_bench refuses such options
// before it times anything). Returns the exit status.
int RunGeneratedBench(const GeneratedBenchOptions& options, const tuner::Device& device,
                      const costmodel::HostModel& model,
                      const std::vector<costmodel::TrainingRow>& corpus_rows,
                      int64_t corpus_fusions, nlohmann::json corpus_timings);

}  // namespace tilesmith::bench
