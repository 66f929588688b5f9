// Where the learned model answers: a rule per emitter, decided on held-out fusions (trees
// that learned what the analytic model misses win their emitter; where there was nothing to
// learn, the analytic model keeps it), stored with the model and honoured by every
// prediction, loaded or not.
#include "costmodel/learned_selection.h"

#include <gtest/gtest.h>

#include <tuple>

#include "costmodel/features.h"
#include "costmodel/gpu_model.h"
#include "costmodel/learned_model.h"
#include "costmodel/model_eval.h"
#include "tests/costmodel/kernel_test_util.h"

namespace tilesmith::costmodel {
namespace {

using testing::Emit;

DeviceFigures H100() { return {testing::Device("cuda:sm_90"), 50 << 20}; }

LearnedModelOptions Small() {
  LearnedModelOptions options;
  options.min_rows = 40;
  options.min_fusions = 3;
  options.rounds = 60;
  return options;
}

// `count` fusions of the loop emitter whose measured times hide a block-size effect the
// analytic model misses (256 threads best), and `count` of the transpose emitter measured
// exactly as the analytic model predicts (nothing for the trees to learn).
std::vector<TrainingRow> MixedRows(int count) {
  GpuModel analytic;
  std::vector<TrainingRow> rows;
  for (int f = 0; f < count; ++f) {
    std::string loop = "loop" + std::to_string(f);
    for (int threads : {64, 128, 256, 512, 1024}) {
      for (int vector : {1, 2, 4}) {
        auto kernel =
            Emit(testing::kElementwise, {{"threads_per_block", threads}, {"vector", vector}});
        double factor = threads == 256 ? 0.4 : threads == 512 ? 0.7 : 1.6;
        auto predicted = analytic.Predict(kernel.kernel, H100(), nullptr);
        auto row = MakeTrainingRow(loop, kernel.kernel, H100(), nullptr, analytic,
                                   predicted->microseconds * factor * (1 + 0.1 * f));
        EXPECT_TRUE(row.has_value());
        rows.push_back(std::move(*row));
      }
    }
    std::string transpose = "transpose" + std::to_string(f);
    // Configs the transpose emitter accepts for this shape (tile, threads, rows per pass).
    for (auto [tile, threads, rows_per_pass] : {std::tuple{64, 128, 2},
                                                {64, 256, 4},
                                                {64, 512, 8},
                                                {32, 32, 1},
                                                {32, 64, 2},
                                                {32, 128, 4},
                                                {32, 256, 8}}) {
      for (int padding : {0, 1}) {
        auto kernel = Emit(testing::kTranspose, {{"tile_in", tile},
                                                 {"tile_out", tile},
                                                 {"threads", threads},
                                                 {"rows_per_pass", rows_per_pass},
                                                 {"vector", 1},
                                                 {"shared_padding", padding}});
        auto predicted = analytic.Predict(kernel.kernel, H100(), nullptr);
        auto row = MakeTrainingRow(transpose, kernel.kernel, H100(), nullptr, analytic,
                                   predicted->microseconds * (1 + 0.1 * f));
        EXPECT_TRUE(row.has_value());
        rows.push_back(std::move(*row));
      }
    }
  }
  return rows;
}

TEST(LearnedSelectionTest, UndecidedTheLearnedModelAnswersEverywhere) {
  LearnedSelection selection;
  EXPECT_TRUE(selection.UsesLearned("loop"));
  EXPECT_TRUE(selection.UsesLearned("anything"));
  EXPECT_NE(selection.Describe().find("learned everywhere"), std::string::npos);
}

TEST(LearnedSelectionTest, EmittersWithoutEvidenceFollowTheOverallVerdict) {
  LearnedSelection selection;
  selection.decided = true;
  selection.learned_for = {{"loop", true}, {"transpose", false}};
  selection.learned_elsewhere = false;
  EXPECT_TRUE(selection.UsesLearned("loop"));
  EXPECT_FALSE(selection.UsesLearned("transpose"));
  EXPECT_FALSE(selection.UsesLearned("scatter"));
  selection.learned_elsewhere = true;
  EXPECT_TRUE(selection.UsesLearned("scatter"));
  EXPECT_TRUE(selection.Describe().starts_with(
      "learned for loop; analytic for transpose; learned elsewhere"))
      << selection.Describe();
}

TEST(LearnedSelectionTest, RoundTripsThroughJsonAndRefusesBadOnes) {
  LearnedSelection selection;
  selection.decided = true;
  selection.learned_for = {{"loop", true}, {"transpose", false}};
  selection.learned_elsewhere = false;
  selection.evidence["loop"] = {5, 0.4, 0.9, 0.05};
  selection.evidence["transpose"] = {4, 0.7, 0.6};
  selection.evidence["scatter"] = {1, 0.5, 0.6};  // too few for a verdict of its own
  selection.overall = {10, 0.55, 0.75};
  auto back = LearnedSelection::FromJson(selection.ToJson());
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_TRUE(back->decided);
  EXPECT_EQ(back->learned_for, selection.learned_for);
  EXPECT_FALSE(back->learned_elsewhere);
  EXPECT_EQ(back->evidence.size(), 3u);
  EXPECT_DOUBLE_EQ(back->evidence["transpose"].analytic, 0.7);
  EXPECT_DOUBLE_EQ(back->evidence["loop"].difference_error, 0.05);
  EXPECT_EQ(back->overall.fusions, 10);
  EXPECT_FALSE(back->UsesLearned("scatter"));

  EXPECT_FALSE(LearnedSelection::FromJson(nlohmann::json::object()).has_value());
  nlohmann::json bad = selection.ToJson();
  bad["emitters"]["loop"]["learned_answers"] = "yes";
  EXPECT_FALSE(LearnedSelection::FromJson(bad).has_value());
  bad = selection.ToJson();
  bad["emitters"]["loop"].erase("fusions");
  EXPECT_FALSE(LearnedSelection::FromJson(bad).has_value());
}

TEST(LearnedSelectionTest, TheEmitterOfARowIsItsOneHotColumn) {
  auto kernel = Emit(testing::kTranspose, nullptr);
  GpuModel analytic;
  auto row = MakeTrainingRow("t", kernel.kernel, H100(), nullptr, analytic, 1.0);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(EmitterOfFeatures(row->features), "transpose");
  EXPECT_EQ(EmitterOfFeatures(std::vector<float>(FeatureNames().size(), 0)), "");
}

// Trees that learned the block-size effect win the loop emitter on held-out fusions, by far
// more than the fusions drawn could make up; on the transpose fusions, where the analytic
// model is exact, they can only do worse, and the analytic model keeps them.
TEST(LearnedSelectionTest, DecidedOnHeldOutFusionsPerEmitter) {
  std::vector<TrainingRow> rows = MixedRows(6);
  auto selection = DecideSelection(
      rows, 4, [] { return std::make_unique<GpuModel>(); }, Small());
  ASSERT_TRUE(selection.has_value()) << selection.error().message;
  EXPECT_TRUE(selection->decided);
  EXPECT_EQ(selection->evidence["loop"].fusions, 6);
  EXPECT_EQ(selection->evidence["transpose"].fusions, 6);
  EXPECT_EQ(selection->overall.fusions, 12);
  EXPECT_GT(selection->evidence["loop"].learned, selection->evidence["loop"].analytic + 0.2);
  EXPECT_TRUE(selection->learned_for.at("loop"));
  // Exact analytic times: whatever the trees change on transpose fusions, they change for
  // the worse, on every held-out one alike, so the analytic model keeps the emitter.
  EXPECT_LT(selection->evidence["transpose"].learned, selection->evidence["transpose"].analytic);
  EXPECT_FALSE(selection->learned_for.at("transpose")) << selection->Describe();
  // The learned gain on loop fusions stands clear of its spread over the held-out fusions.
  const auto& loop = selection->evidence["loop"];
  EXPECT_GE(loop.difference_error, 0);
  EXPECT_LT(loop.difference_error, loop.learned - loop.analytic);
  EXPECT_TRUE(selection->learned_elsewhere);  // the loop fusions carry the overall verdict

  // Too few fusions to train every fold: no rule, and the caller hears why.
  std::vector<TrainingRow> few(rows.begin(), rows.begin() + 30);
  EXPECT_FALSE(DecideSelection(
                   few, 2, [] { return std::make_unique<GpuModel>(); }, Small())
                   .has_value());
}

// The rule answers for the analytic model where it says so, in PredictRows and Predict
// alike, and a stored model keeps it.
TEST(LearnedSelectionTest, TheModelHonoursItsSelectionAndStoresIt) {
  std::vector<TrainingRow> rows = MixedRows(4);
  LearnedModel model(std::make_unique<GpuModel>(), Small());
  ASSERT_TRUE(model.Retrain(rows).has_value());
  ASSERT_TRUE(model.trained());
  LearnedSelection selection;
  selection.decided = true;
  selection.learned_for = {{"loop", false}};
  selection.learned_elsewhere = true;
  model.set_selection(selection);

  auto predicted = model.PredictRows(rows);
  ASSERT_TRUE(predicted.has_value());
  bool corrected_elsewhere = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (EmitterOfFeatures(rows[i].features) == "loop") {
      EXPECT_DOUBLE_EQ((*predicted)[i], rows[i].analytic_us);
    } else {
      corrected_elsewhere |= (*predicted)[i] != rows[i].analytic_us;
    }
  }
  EXPECT_TRUE(corrected_elsewhere);

  auto loop = Emit(testing::kElementwise, {{"threads_per_block", 256}, {"vector", 1}});
  GpuModel analytic;
  auto direct = analytic.Predict(loop.kernel, H100(), nullptr);
  auto routed = model.Predict(loop.kernel, H100(), nullptr);
  ASSERT_TRUE(direct && routed);
  EXPECT_DOUBLE_EQ(routed->microseconds, direct->microseconds);
  EXPECT_TRUE(routed->breakdown.contains("selected"));
  EXPECT_NE(model.Describe().find("analytic for loop"), std::string::npos) << model.Describe();

  auto record = model.ToRecord("dev", "v1");
  ASSERT_TRUE(record.has_value());
  auto loaded = LearnedModel::FromRecord(*record, std::make_unique<GpuModel>(), Small());
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_FALSE((*loaded)->selection().UsesLearned("loop"));
  auto reloaded = (*loaded)->Predict(loop.kernel, H100(), nullptr);
  ASSERT_TRUE(reloaded.has_value());
  EXPECT_DOUBLE_EQ(reloaded->microseconds, direct->microseconds);

  // A record whose rule is malformed is refused, not half-honoured.
  record->meta["selection"]["emitters"] = "loop";
  EXPECT_FALSE(LearnedModel::FromRecord(*record, std::make_unique<GpuModel>(), Small()));
}

}  // namespace
}  // namespace tilesmith::costmodel
