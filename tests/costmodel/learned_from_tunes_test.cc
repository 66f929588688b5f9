// The learned model on real measurements: small fusions from the tuner's test data and the
// shared XLA corpus tuned on the host through the real worker into a temp SQLite file, the
// training rows read back from it (fusions re-parsed, configs re-emitted), a held-out
// evaluation of both models, and the model stored in the database and loaded back with
// identical predictions, chosen by BestModelFor from then on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include "compiler/hlo/parser.h"
#include "costmodel/features.h"
#include "costmodel/model_eval.h"
#include "costmodel/model_selection.h"
#include "costmodel/training_data.h"
#include "db/sqlite_store.h"
#include "tuner/device.h"
#include "tuner/session.h"

namespace tilesmith::costmodel {
namespace {

constexpr char kCompilerVersion[] = "tilesmith-learned-test";

std::string CorpusDir() {
  const char* dir = std::getenv("TILESMITH_CORPUS_DIR");
  return std::string(dir && *dir ? dir : TILESMITH_DEFAULT_CORPUS_DIR) + "/xla/";
}

// Small fusions of four emitters; each tune is capped so the suite stays under a minute.
std::vector<std::string> FusionPaths() {
  std::vector<std::string> paths = {TILESMITH_TEST_DATA_DIR "/tuner/gelu_f32.hlo"};
  for (const char* name : {"transpose/transpose_021.hlo", "reduce_row/small_s32.hlo",
                           "reduce_column/small.hlo", "concatenate/concat_1d.hlo"}) {
    if (std::filesystem::exists(CorpusDir() + name)) paths.push_back(CorpusDir() + name);
  }
  return paths;
}

#define SKIP_WITHOUT_CORPUS() \
  if (!std::filesystem::exists(CorpusDir())) GTEST_SKIP() << "no corpus at " << CorpusDir()

LearnedModelOptions Small() {
  LearnedModelOptions options;
  options.min_rows = 30;
  options.min_fusions = 3;
  options.rounds = 80;
  return options;
}

class LearnedFromTunesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(CorpusDir())) return;
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("tilesmith_learned_" + std::to_string(getpid())));
    std::filesystem::create_directories(*dir_);
    store_ = db::SqliteStore::Open((*dir_ / "results.db").string())->release();
    host_ = new tuner::Device(*tuner::ResolveDevice("host", "", tuner::DefaultDevicesDir()));
    for (const std::string& path : FusionPaths()) {
      auto module = hlo::ParseHloModuleFile(path);
      ASSERT_TRUE(module.has_value()) << module.error().message;
      tuner::TuneOptions options;
      options.strategy = "random";
      options.seed = 1;
      options.budget = 12;
      options.batch_size = 8;
      options.measure.warmup_ms = 1;
      options.measure.budget_ms = 3;
      options.measure.flush_bytes = -1;
      options.worker_argv = {TILESMITH_CLI, "--log-level", "error", "worker", path};
      auto result = tuner::Tune(**module, *host_, store_, kCompilerVersion, options);
      ASSERT_TRUE(result.has_value()) << path << ": " << result.error().message;
      EXPECT_LT(result->failed, result->measured) << path << ": every trial failed";
    }
  }
  static void TearDownTestSuite() {
    if (dir_ == nullptr) return;
    delete store_;
    delete host_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static TrainingSet Load(const CostModel& analytic) {
    auto set = LoadTrainingSet(*store_, host_->record.Key(), kCompilerVersion, Figures(), analytic);
    EXPECT_TRUE(set.has_value()) << set.error().message;
    return set ? std::move(*set) : TrainingSet{};
  }
  static DeviceFigures Figures() { return {host_->info, host_->cache_bytes}; }
  static std::unique_ptr<CostModel> Analytic() {
    return AnalyticModelFor(host_->target, host_->cache_bytes);
  }

  static std::filesystem::path* dir_;
  static db::SqliteStore* store_;
  static tuner::Device* host_;
};

std::filesystem::path* LearnedFromTunesTest::dir_ = nullptr;
db::SqliteStore* LearnedFromTunesTest::store_ = nullptr;
tuner::Device* LearnedFromTunesTest::host_ = nullptr;

TEST_F(LearnedFromTunesTest, EveryVerifiedConfigBecomesARowOfItsFusion) {
  SKIP_WITHOUT_CORPUS();
  auto analytic = Analytic();
  TrainingSet set = Load(*analytic);
  EXPECT_EQ(set.fusions, static_cast<int64_t>(FusionPaths().size()));
  EXPECT_GE(set.rows.size(), FusionPaths().size() * 3);
  EXPECT_EQ(set.skipped, 0) << (set.notes.empty() ? "" : set.notes.front());
  for (const TrainingRow& row : set.rows) {
    EXPECT_EQ(row.features.size(), FeatureNames().size());
    EXPECT_GT(row.measured_us, 0);
    EXPECT_GT(row.analytic_us, 0);
    EXPECT_EQ(row.fusion.size(), 64u);
    // The builder's count of the host code, kept in the trial's compile stats, is a feature.
    EXPECT_GT(row.features[FeatureIndex("code.instructions")], 0);
    // And the row carries the config as seen uncompiled, for the model to learn from too.
    ASSERT_EQ(row.estimate_features.size(), FeatureNames().size());
    EXPECT_TRUE(std::isnan(row.estimate_features[FeatureIndex("code.instructions")]));
    EXPECT_GT(row.estimate_analytic_us, 0);
  }
  // Another compiler version's rows are not this one's.
  auto other =
      LoadTrainingSet(*store_, host_->record.Key(), "tilesmith-other", Figures(), *analytic);
  ASSERT_TRUE(other.has_value());
  EXPECT_TRUE(other->rows.empty());
}

TEST_F(LearnedFromTunesTest, HeldOutFusionsAreScoredForBothModels) {
  SKIP_WITHOUT_CORPUS();
  auto analytic = Analytic();
  TrainingSet set = Load(*analytic);
  auto evaluation = EvaluateHeldOut(set.rows, 0.3, Analytic(), Small());
  ASSERT_TRUE(evaluation.has_value()) << evaluation.error().message;
  EXPECT_TRUE(evaluation->learned_trained) << evaluation->learned_description;
  EXPECT_EQ(evaluation->heldout_fusions, 2);
  EXPECT_EQ(evaluation->analytic.fusions.size(), evaluation->learned.fusions.size());
  ASSERT_FALSE(evaluation->learned.fusions.empty());
  for (const ModelScores* scores : {&evaluation->analytic, &evaluation->learned}) {
    EXPECT_TRUE(std::isfinite(scores->spearman));
    EXPECT_GE(scores->spearman, -1);
    EXPECT_LE(scores->spearman, 1);
    EXPECT_GE(scores->kendall, -1);
    EXPECT_LE(scores->kendall, 1);
    EXPECT_GE(scores->top1_regret, 0);
    EXPECT_LE(scores->top5_regret, scores->top1_regret);
  }
  std::cout << "held-out Spearman analytic " << evaluation->analytic.spearman << ", learned "
            << evaluation->learned.spearman << "; top-1 regret analytic "
            << evaluation->analytic.top1_regret << ", learned " << evaluation->learned.top1_regret
            << "\n";
  // The same split every time: held-out fusions are chosen by fingerprint.
  EXPECT_EQ(HeldOutFusions(set.rows, 0.3), HeldOutFusions(set.rows, 0.3));
}

TEST_F(LearnedFromTunesTest, TheModelRoundTripsThroughTheDatabase) {
  SKIP_WITHOUT_CORPUS();
  auto analytic = Analytic();
  TrainingSet set = Load(*analytic);
  LearnedModel model(Analytic(), Small());
  ASSERT_TRUE(model.Retrain(set.rows).has_value());
  ASSERT_TRUE(model.trained()) << model.Describe();
  auto record = model.ToRecord(host_->record.Key(), kCompilerVersion);
  ASSERT_TRUE(record.has_value()) << record.error().message;
  auto id = store_->PutModel(*record);
  ASSERT_TRUE(id.has_value()) << id.error().message;

  auto target = emitters::Target::Parse("host");
  ModelChoice choice = BestModelFor(*target, host_->cache_bytes, store_, host_->record.Key(),
                                    kCompilerVersion, Small());
  ASSERT_TRUE(choice.stored) << choice.description;
  ASSERT_NE(choice.learned, nullptr);
  EXPECT_EQ(choice.model->name(), "learned-xgboost");
  EXPECT_NE(choice.description.find("learned-xgboost ("), std::string::npos) << choice.description;
  EXPECT_EQ(choice.learned->training_rows(), static_cast<int64_t>(set.rows.size()));
  auto before = model.PredictRows(set.rows);
  auto after = choice.learned->PredictRows(set.rows);
  ASSERT_TRUE(before && after);
  EXPECT_EQ(*before, *after) << "save -> load gives identical predictions";
  auto again = choice.learned->ToRecord(host_->record.Key(), kCompilerVersion);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->data, record->data);

  // Another compiler version or device has no model: the analytic one answers.
  ModelChoice stale =
      BestModelFor(*target, host_->cache_bytes, store_, host_->record.Key(), "tilesmith-newer");
  EXPECT_FALSE(stale.stored);
  EXPECT_EQ(stale.model->name(), "analytic-host");
  EXPECT_NE(stale.description.find("no learned model stored"), std::string::npos);

  // A loaded model keeps learning: a retrain on new rows adds trees to the stored ones.
  int rounds = choice.learned->boosted_rounds();
  std::vector<TrainingRow> batch(set.rows.begin(), set.rows.begin() + 8);
  ASSERT_TRUE(choice.learned->Retrain(batch).has_value());
  EXPECT_EQ(choice.learned->boosted_rounds(), rounds + Small().retrain_rounds);
}

TEST_F(LearnedFromTunesTest, ATuneRetrainsTheStoredModelOnItsBatchesAndStoresIt) {
  SKIP_WITHOUT_CORPUS();
  auto analytic = Analytic();
  TrainingSet set = Load(*analytic);
  LearnedModel model(Analytic(), Small());
  ASSERT_TRUE(model.Retrain(set.rows).has_value());
  auto record = model.ToRecord(host_->record.Key(), kCompilerVersion);
  ASSERT_TRUE(record.has_value()) << record.error().message;
  // The stored record carries a replay sample for later retrains.
  ASSERT_TRUE(record->meta["replay"].is_array());
  EXPECT_EQ(record->meta["replay"].size(), set.rows.size());
  // With each row's estimate, which a loaded model replays too.
  auto loaded = LearnedModel::FromRecord(*record, Analytic(), Small());
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_TRUE(record->meta["replay"][0].contains("estimate_x"));
  EXPECT_GT(record->meta["replay"][0]["estimate_analytic_us"].get<double>(), 0);
  auto again = (*loaded)->ToRecord(host_->record.Key(), kCompilerVersion);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->meta["replay"].dump(), record->meta["replay"].dump());
  auto id = store_->PutModel(*record);
  ASSERT_TRUE(id.has_value());
  int trees = record->meta["trees"];

  std::string path = FusionPaths().front();
  auto module = hlo::ParseHloModuleFile(path);
  ASSERT_TRUE(module.has_value());
  tuner::TuneOptions options;
  options.strategy = "random";
  options.seed = 2;
  options.budget = 24;  // beyond the 12 the suite measured, so new batches are measured
  options.batch_size = 8;
  options.measure.warmup_ms = 1;
  options.measure.budget_ms = 3;
  options.measure.flush_bytes = -1;
  options.worker_argv = {TILESMITH_CLI, "--log-level", "error", "worker", path};
  auto result = tuner::Tune(**module, *host_, store_, kCompilerVersion, options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_GT(result->measured_now, 0);
  EXPECT_TRUE(result->model_update.starts_with("retrained on ")) << result->model_update;

  auto latest = store_->LatestModel(kLearnedModelName, host_->record.Key(), kCompilerVersion,
                                    kFeatureSchemaVersion);
  ASSERT_TRUE(latest.has_value() && latest->has_value());
  EXPECT_GT((*latest)->id, *id);
  EXPECT_EQ((*latest)->meta["retrained_by_tune"]["fingerprint"], result->fingerprint);
  int64_t rows = (*latest)->meta["retrained_by_tune"]["rows"];
  EXPECT_GT(rows, 0);
  EXPECT_LE(rows, result->measured_now);
  EXPECT_GT((*latest)->meta["trees"].get<int>(), trees);
  EXPECT_EQ((*latest)->training_rows, record->training_rows + rows);
  // The retrained model loads and answers.
  auto target = emitters::Target::Parse("host");
  ModelChoice choice = BestModelFor(*target, host_->cache_bytes, store_, host_->record.Key(),
                                    kCompilerVersion, Small());
  ASSERT_TRUE(choice.stored) << choice.description;
  auto predicted = choice.learned->PredictRows(set.rows);
  ASSERT_TRUE(predicted.has_value());
  for (double us : *predicted) EXPECT_GT(us, 0);
}

}  // namespace
}  // namespace tilesmith::costmodel
