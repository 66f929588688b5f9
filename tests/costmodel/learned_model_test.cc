// The learned model without a database: the analytic model answers (and says why) below
// the data thresholds; trees trained on rows whose times depend on what the analytic model
// misses rank held-out rows better than it; training is reproducible bit for bit; retrains
// add a bounded number of trees; cross-validation predicts each row by a model that never saw
// its fusion; a row of a compiled kernel carries its estimate (the kernel as seen before
// compiling), and training on those teaches the trees to rank configs nobody compiled;
// compiled rows get trees of their own; a bag of boosters averages their corrections.
#include "costmodel/learned_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "costmodel/features.h"
#include "costmodel/gpu_model.h"
#include "costmodel/host_model.h"
#include "costmodel/model_eval.h"
#include "costmodel/model_selection.h"
#include "tests/costmodel/kernel_test_util.h"

namespace tilesmith::costmodel {
namespace {

using testing::Emit;
using testing::kElementwise;

DeviceFigures H100() { return {testing::Device("cuda:sm_90"), 50 << 20}; }

// Every (threads, vector) config of the elementwise kernel as a row of `fusion`, its
// "measured" time the analytic one scaled by a factor of the block size the analytic model
// does not know about: 256 threads are a sweet spot.
std::vector<TrainingRow> Rows(const std::string& fusion, double scale = 1) {
  GpuModel analytic;
  std::vector<TrainingRow> rows;
  for (int threads : {64, 128, 256, 512, 1024}) {
    for (int vector : {1, 2, 4}) {
      auto kernel = Emit(kElementwise, {{"threads_per_block", threads}, {"vector", vector}});
      double factor = threads == 256 ? 0.4 : threads == 512 ? 0.7 : 1.6;
      auto analytic_us = analytic.Predict(kernel.kernel, H100(), nullptr);
      auto row = MakeTrainingRow(fusion, kernel.kernel, H100(), nullptr, analytic,
                                 analytic_us->microseconds * factor * scale);
      EXPECT_TRUE(row.has_value()) << row.error().message;
      rows.push_back(std::move(*row));
    }
  }
  return rows;
}

std::vector<TrainingRow> ManyFusions(int count) {
  std::vector<TrainingRow> rows;
  for (int f = 0; f < count; ++f) {
    std::vector<TrainingRow> more = Rows("fusion" + std::to_string(f), 1 + 0.1 * f);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  return rows;
}

LearnedModelOptions Small() {
  LearnedModelOptions options;
  options.min_rows = 40;
  options.min_fusions = 3;
  options.rounds = 60;
  options.retrain_rounds = 10;
  return options;
}

TEST(LearnedModelTest, BelowTheThresholdsTheAnalyticModelAnswersAndSaysWhy) {
  LearnedModel model(std::make_unique<GpuModel>());
  std::vector<TrainingRow> rows = Rows("only");
  ASSERT_TRUE(model.Retrain(rows).has_value());
  EXPECT_FALSE(model.trained());
  EXPECT_EQ(model.name(), "analytic-gpu");
  EXPECT_NE(model.Describe().find("fallback: 15 measurements < 200"), std::string::npos)
      << model.Describe();
  auto kernel = Emit(kElementwise);
  auto learned = model.Predict(kernel.kernel, H100(), nullptr);
  auto analytic = GpuModel().Predict(kernel.kernel, H100(), nullptr);
  ASSERT_TRUE(learned && analytic);
  EXPECT_EQ(learned->microseconds, analytic->microseconds);
  EXPECT_EQ(learned->breakdown["model"], "analytic-gpu");
  EXPECT_TRUE(learned->breakdown.contains("fallback"));
  EXPECT_FALSE(model.ToRecord("host", "v").has_value()) << "nothing to store";

  // Enough rows, too few fusions: the fusion threshold is the one named.
  LearnedModelOptions options;
  options.min_rows = 10;
  LearnedModel two_fusions(std::make_unique<GpuModel>(), options);
  std::vector<TrainingRow> more = ManyFusions(2);
  ASSERT_TRUE(two_fusions.Retrain(more).has_value());
  EXPECT_FALSE(two_fusions.trained());
  EXPECT_NE(two_fusions.Describe().find("2 fusions < 5"), std::string::npos)
      << two_fusions.Describe();
}

TEST(LearnedModelTest, TreesLearnWhatTheAnalyticModelMissesOnHeldOutFusions) {
  for (Objective objective : {Objective::kLogTime, Objective::kPairwise}) {
    LearnedModelOptions options = Small();
    options.objective = objective;
    auto evaluation = EvaluateHeldOut(ManyFusions(6), 0.34, std::make_unique<GpuModel>(), options);
    ASSERT_TRUE(evaluation.has_value()) << evaluation.error().message;
    EXPECT_TRUE(evaluation->learned_trained) << evaluation->learned_description;
    EXPECT_EQ(evaluation->heldout_fusions, 2);
    EXPECT_EQ(evaluation->train_fusions, 4);
    EXPECT_EQ(evaluation->learned.model, "learned-xgboost");
    EXPECT_EQ(evaluation->analytic.fusions.size(), 2u);
    EXPECT_GT(evaluation->learned.spearman, evaluation->analytic.spearman + 0.2)
        << ObjectiveName(objective) << ": analytic " << evaluation->analytic.spearman
        << ", learned " << evaluation->learned.spearman;
    EXPECT_GT(evaluation->learned.spearman, 0.8) << ObjectiveName(objective);
    EXPECT_LE(evaluation->learned.top1_regret, evaluation->analytic.top1_regret);
  }
}

TEST(LearnedModelTest, CrossValidationPredictsEveryRowByAModelThatNeverSawItsFusion) {
  // Rows of fusions 0-5 interleaved; in 3 folds, fold 2 holds out fusion2 and fusion5.
  std::vector<TrainingRow> grouped = ManyFusions(6), rows;
  for (size_t k = 0; k < 15; ++k) {
    for (size_t f = 0; f < 6; ++f) rows.push_back(grouped[f * 15 + k]);
  }
  auto evaluation = CrossValidate(
      rows, 3, [] { return std::make_unique<GpuModel>(); }, Small());
  ASSERT_TRUE(evaluation.has_value()) << evaluation.error().message;
  EXPECT_TRUE(evaluation->learned_trained) << evaluation->learned_description;
  EXPECT_EQ(evaluation->heldout_fusions, 6);
  ASSERT_EQ(evaluation->heldout_learned_us.size(), rows.size());
  // The same trees, trained here on the other folds' rows alone, predict fold 2's rows as
  // the cross-validation did, each at its row's input position.
  std::vector<TrainingRow> train, held;
  std::vector<size_t> positions;
  for (size_t i = 0; i < rows.size(); ++i) {
    bool in_fold = rows[i].fusion == "fusion2" || rows[i].fusion == "fusion5";
    (in_fold ? held : train).push_back(rows[i]);
    if (in_fold) positions.push_back(i);
  }
  LearnedModel model(std::make_unique<GpuModel>(), Small());
  ASSERT_TRUE(model.Retrain(train).has_value());
  auto predicted = model.PredictRows(held);
  ASSERT_TRUE(predicted.has_value());
  for (size_t k = 0; k < held.size(); ++k) {
    EXPECT_DOUBLE_EQ(evaluation->heldout_learned_us[positions[k]], (*predicted)[k]) << k;
  }
}

TEST(LearnedModelTest, TrainingIsReproducibleAndPredictsTimes) {
  std::vector<TrainingRow> rows = ManyFusions(4);
  LearnedModel a(std::make_unique<GpuModel>(), Small());
  LearnedModel b(std::make_unique<GpuModel>(), Small());
  ASSERT_TRUE(a.Retrain(rows) && b.Retrain(rows));
  ASSERT_TRUE(a.trained());
  EXPECT_EQ(a.name(), "learned-xgboost");
  auto ra = a.ToRecord("dev", "v1");
  auto rb = b.ToRecord("dev", "v1");
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ(ra->data, rb->data) << "same rows, same seed: the same trees";
  EXPECT_EQ(ra->training_rows, 60);
  EXPECT_EQ(ra->fusions, 4);
  EXPECT_EQ(ra->meta["objective"], "log-time");
  // The log-time objective predicts times: with the trees' whole correction, near the
  // "measured" ones it was fitted to; with the default half, halfway there from the
  // analytic time (in log).
  LearnedModelOptions whole_options = Small();
  whole_options.correction_share = 1;
  LearnedModel whole(std::make_unique<GpuModel>(), whole_options);
  ASSERT_TRUE(whole.Retrain(rows));
  auto fitted = whole.PredictRows(rows);
  auto halfway = a.PredictRows(rows);
  ASSERT_TRUE(fitted.has_value() && halfway.has_value());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NEAR(std::log((*fitted)[i]), std::log(rows[i].measured_us), 0.3) << i;
    EXPECT_NEAR(std::log((*halfway)[i]),
                (std::log((*fitted)[i]) + std::log(rows[i].analytic_us)) / 2, 1e-5)
        << i;
  }
  auto kernel = Emit(kElementwise, {{"threads_per_block", 256}, {"vector", 4}});
  auto prediction = a.Predict(kernel.kernel, H100(), nullptr);
  ASSERT_TRUE(prediction.has_value());
  EXPECT_EQ(prediction->breakdown["model"], "learned-xgboost");
  EXPECT_LT(prediction->breakdown["correction"].get<double>(), 0.8) << "256 threads are faster";
  EXPECT_EQ(prediction->breakdown["analytic"]["model"], "analytic-gpu");
}

TEST(LearnedModelTest, RetrainingAddsABoundedNumberOfTrees) {
  LearnedModelOptions options = Small();
  options.max_rounds = 85;
  LearnedModel model(std::make_unique<GpuModel>(), options);
  ASSERT_TRUE(model.Retrain(ManyFusions(4)).has_value());
  EXPECT_EQ(model.boosted_rounds(), 60);
  ASSERT_TRUE(model.Retrain(Rows("fresh")).has_value());
  EXPECT_EQ(model.boosted_rounds(), 70) << "retrain_rounds more";
  EXPECT_EQ(model.training_rows(), 75);
  EXPECT_EQ(model.fusions(), 5);
  ASSERT_TRUE(model.Retrain(Rows("fresher")).has_value());
  EXPECT_EQ(model.boosted_rounds(), 80);
  // Past max_rounds the model starts afresh on its (bounded) pool of rows.
  ASSERT_TRUE(model.Retrain(Rows("freshest")).has_value());
  EXPECT_EQ(model.boosted_rounds(), 60);
  EXPECT_EQ(model.training_rows(), 105);
}

TEST(LearnedModelTest, WithoutAStoredModelTheAnalyticModelIsChosen) {
  auto target = emitters::Target::Parse("cuda:sm_90");
  ASSERT_TRUE(target.has_value());
  ModelChoice none = BestModelFor(*target, 50 << 20, nullptr, "dev", "v1");
  ASSERT_NE(none.model, nullptr);
  EXPECT_EQ(none.model->name(), "analytic-gpu");
  EXPECT_FALSE(none.stored);
  ASSERT_NE(none.learned, nullptr) << "a tuner may still retrain it";
  EXPECT_FALSE(none.learned->trained());
  EXPECT_NE(none.description.find("no results database"), std::string::npos);
}

TEST(LearnedModelTest, ARowOfACompiledKernelCarriesItsEstimate) {
  HostModel analytic(testing::FixedHostCalibration());
  DeviceFigures host{testing::Device("host"), 32 << 20};
  auto emitted = Emit(kElementwise, {{"vector", 4}}, "host");
  ResourceUsage usage{.executed_instructions = 50000, .executed_divisions = 100};
  auto counted = MakeTrainingRow("f", emitted.kernel, host, &usage, analytic, 10);
  auto estimate = analytic.Predict(emitted.kernel, host, nullptr);
  ASSERT_TRUE(counted && estimate);
  EXPECT_EQ(counted->features[FeatureIndex("code.instructions")], 50000);
  ASSERT_EQ(counted->estimate_features.size(), FeatureNames().size());
  EXPECT_TRUE(std::isnan(counted->estimate_features[FeatureIndex("code.instructions")]));
  EXPECT_DOUBLE_EQ(counted->estimate_analytic_us, estimate->microseconds);
  EXPECT_NE(counted->estimate_analytic_us, counted->analytic_us) << "the counts priced apart";
  std::vector<float> expected = KernelFeatures(emitted.kernel, host, nullptr, *estimate);
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(counted->estimate_features[i])) << FeatureNames()[i];
    } else {
      EXPECT_EQ(counted->estimate_features[i], expected[i]) << FeatureNames()[i];
    }
  }

  // Made without usage, the row is its own estimate: nothing to carry.
  auto uncounted = MakeTrainingRow("f", emitted.kernel, host, nullptr, analytic, 10);
  ASSERT_TRUE(uncounted.has_value());
  EXPECT_TRUE(uncounted->estimate_features.empty());
}

// Compiled rows whose analytic time is exact, and whose estimates (before compiling) miss a
// factor of the vector width: the only place the trees can learn that factor.
std::vector<TrainingRow> CompiledRows(int fusions, bool with_estimates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<TrainingRow> rows;
  for (int f = 0; f < fusions; ++f) {
    for (int threads : {64, 128, 256, 512, 1024}) {
      for (int vector : {1, 2, 4}) {
        double estimate_us = 100.0 * (1 + f) * (1 + threads / 2048.0);
        TrainingRow row;
        row.fusion = "fusion" + std::to_string(f);
        row.features.assign(FeatureNames().size(), nan);
        row.features[FeatureIndex("cfg.threads_per_block")] = static_cast<float>(threads);
        row.features[FeatureIndex("cfg.vector")] = static_cast<float>(vector);
        row.measured_us = estimate_us / vector;
        row.analytic_us = row.measured_us;
        row.compiled = true;
        if (with_estimates) {
          row.estimate_features = row.features;
          row.estimate_analytic_us = estimate_us;
        }
        row.features[FeatureIndex("code.instructions")] = 1000.0f * threads / vector;
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

TEST(LearnedModelTest, TrainedWithEstimatesItRanksConfigsNobodyCompiled) {
  for (Objective objective : {Objective::kLogTime, Objective::kPairwise}) {
    LearnedModelOptions options = Small();
    options.objective = objective;
    auto evaluation =
        EvaluateHeldOut(CompiledRows(8, true), 0.25, std::make_unique<GpuModel>(), options);
    ASSERT_TRUE(evaluation.has_value()) << evaluation.error().message;
    ASSERT_TRUE(evaluation->learned_trained);
    EXPECT_GT(evaluation->learned.spearman, 0.99) << "compiled rows: the analytic time is exact";
    ASSERT_TRUE(evaluation->analytic_estimated && evaluation->learned_estimated);
    EXPECT_LT(evaluation->analytic_estimated->spearman, 0.5) << "the estimates miss the vector";
    EXPECT_GT(evaluation->learned_estimated->spearman, 0.9) << ObjectiveName(objective);

    // Trained on the same rows without their estimates, log-time trees have nothing to
    // correct (the compiled times are exact), so they rank the held-out estimates no
    // better than the analytic model. (Pairwise trees push apart what they already order,
    // and may find the vector width on the compiled rows alone.)
    if (objective != Objective::kLogTime) continue;
    LearnedModel plain(std::make_unique<GpuModel>(), options);
    std::vector<TrainingRow> train, held;
    for (TrainingRow& row : CompiledRows(8, false)) {
      (row.fusion == "fusion0" || row.fusion == "fusion1" ? held : train).push_back(row);
    }
    ASSERT_TRUE(plain.Retrain(train).has_value());
    std::vector<TrainingRow> estimates;
    for (const TrainingRow& row : CompiledRows(8, true)) {
      if (row.fusion != "fusion0" && row.fusion != "fusion1") continue;
      estimates.push_back(EstimateRow(row));
    }
    auto predicted = plain.PredictRows(estimates);
    ASSERT_TRUE(predicted.has_value());
    EXPECT_LT(Score("plain", estimates, *predicted).spearman, 0.5) << ObjectiveName(objective);
  }
}

TEST(LearnedModelTest, CompiledRowsGetTreesOfTheirOwnOnceThereAreEnough) {
  auto kernel = Emit(kElementwise, {{"threads_per_block", 256}, {"vector", 4}});
  ResourceUsage usage{.registers = 32};

  // Rows made without the compiler's usage: only the estimates' trees, which answer for a
  // compiled kernel too, from what it looks like before compiling.
  LearnedModel uncompiled(std::make_unique<GpuModel>(), Small());
  ASSERT_TRUE(uncompiled.Retrain(ManyFusions(4)).has_value());
  ASSERT_TRUE(uncompiled.trained());
  EXPECT_FALSE(uncompiled.compiled_trained());
  auto as_estimated = uncompiled.Predict(kernel.kernel, H100(), &usage);
  auto estimated = uncompiled.Predict(kernel.kernel, H100(), nullptr);
  ASSERT_TRUE(as_estimated && estimated);
  EXPECT_EQ(as_estimated->breakdown["trees"], "estimated");
  EXPECT_DOUBLE_EQ(as_estimated->microseconds, estimated->microseconds);
  EXPECT_NE(uncompiled.Describe().find("trees for estimated rows"), std::string::npos)
      << uncompiled.Describe();

  // Fewer compiled rows than min_rows: still none; then enough of them, from a retrain.
  LearnedModel model(std::make_unique<GpuModel>(), Small());
  std::vector<TrainingRow> compiled = CompiledRows(8, true);
  ASSERT_TRUE(model.Retrain(ManyFusions(4)).has_value());
  ASSERT_TRUE(model.Retrain(std::span(compiled).first(30)).has_value());
  EXPECT_FALSE(model.compiled_trained()) << "30 compiled rows < 40";
  ASSERT_TRUE(model.Retrain(std::span(compiled).subspan(30)).has_value());
  EXPECT_TRUE(model.compiled_trained());
  auto counted = model.Predict(kernel.kernel, H100(), &usage);
  auto uncounted = model.Predict(kernel.kernel, H100(), nullptr);
  ASSERT_TRUE(counted && uncounted);
  EXPECT_EQ(counted->breakdown["trees"], "compiled");
  EXPECT_EQ(uncounted->breakdown["trees"], "estimated");
  EXPECT_NE(model.Describe().find("trees for compiled and estimated rows"), std::string::npos)
      << model.Describe();

  // Both bags survive the database's record.
  auto record = model.ToRecord("dev", "v1");
  ASSERT_TRUE(record.has_value()) << record.error().message;
  EXPECT_EQ(record->format, "xgboost-json-bags");
  EXPECT_EQ(record->meta["bag"], Small().bag);
  EXPECT_EQ(record->meta["compiled_trees"], true);
  auto loaded = LearnedModel::FromRecord(*record, std::make_unique<GpuModel>(), Small());
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_TRUE((*loaded)->compiled_trained());
  auto before = model.PredictRows(compiled);
  auto after = (*loaded)->PredictRows(compiled);
  ASSERT_TRUE(before && after);
  for (size_t i = 0; i < compiled.size(); ++i) EXPECT_DOUBLE_EQ((*before)[i], (*after)[i]) << i;
}

TEST(LearnedModelTest, ABagAveragesItsBoostersCorrections) {
  std::vector<TrainingRow> rows = ManyFusions(4);
  auto trained = [&](int bag, uint64_t seed) {
    LearnedModelOptions options = Small();
    options.bag = bag;
    options.seed = seed;
    auto model = std::make_unique<LearnedModel>(std::make_unique<GpuModel>(), options);
    EXPECT_TRUE(model->Retrain(rows).has_value());
    return model;
  };
  auto first = trained(1, 7)->PredictRows(rows);
  auto second = trained(1, 8)->PredictRows(rows);
  auto both = trained(2, 7)->PredictRows(rows);
  ASSERT_TRUE(first && second && both);
  bool seeds_differ = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    seeds_differ = seeds_differ || std::abs((*first)[i] - (*second)[i]) > 1e-6 * (*first)[i];
    // The correction share is applied in log time, so averaging the margins averages the
    // logs of what each booster alone predicts.
    EXPECT_NEAR(std::log((*both)[i]), (std::log((*first)[i]) + std::log((*second)[i])) / 2, 1e-5)
        << i;
  }
  EXPECT_TRUE(seeds_differ) << "the row and column samples follow the seed";
}

}  // namespace
}  // namespace tilesmith::costmodel
