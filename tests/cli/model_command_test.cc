// `tilesmith model train|eval`, run as a user would: real host tunes into a database,
// a model trained and stored there, a held-out evaluation of both models as JSON (compiled
// and uncompiled), and `predict` answering with the learned model afterwards; timings of a
// GPU host (another driver in the key) learned from where that driver is missing; bad command
// lines and missing data say why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "db/sqlite_store.h"
#include "tests/cli/cli_run.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;
using cli_testing::CommandRun;
using nlohmann::json;

std::string Corpus() {
  const char* dir = std::getenv("TILESMITH_CORPUS_DIR");
  return std::string(dir && *dir ? dir : TILESMITH_DEFAULT_CORPUS_DIR) + "/xla/";
}
std::string Gelu() { return TILESMITH_TEST_DATA_DIR "/tuner/gelu_f32.hlo"; }

class ModelCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tilesmith_model_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Db() const { return (dir_ / "m.db").string(); }
  CommandRun Tilesmith(const std::string& arguments) {
    return cli_testing::RunTilesmithIn(dir_, arguments);
  }

  fs::path dir_;
};

TEST_F(ModelCommandTest, TrainThenEvalThenPredictWithTheLearnedModel) {
  if (!fs::exists(Corpus())) GTEST_SKIP() << "no corpus at " << Corpus();
  for (const std::string& path :
       {Gelu(), Corpus() + "transpose/transpose_021.hlo", Corpus() + "reduce_row/small_s32.hlo",
        Corpus() + "reduce_column/small.hlo"}) {
    CommandRun tune = Tilesmith("tune " + path + " --target host --db " + Db() +
                                " --strategy random --budget 12 --rep-ms 3 --warmup-ms 1 "
                                "--no-flush --quiet");
    ASSERT_EQ(tune.exit_code, 0) << path << ": " << tune.err;
  }
  const std::string bar = " --min-rows 20 --min-fusions 3";
  // The learned model everywhere (no held-out selection), so predict answers with its trees.
  CommandRun train = Tilesmith("model train --db " + Db() + bar + " --select-folds 0 --json");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  json trained = json::parse(train.out);
  EXPECT_EQ(trained["model"], "learned-xgboost");
  EXPECT_EQ(trained["fusions"], 4);
  EXPECT_FALSE(trained["selection"]["decided"].get<bool>());
  EXPECT_GE(trained["rows"].get<int>(), 20);
  EXPECT_EQ(trained["objective"], "log-time");
  EXPECT_GT(trained["model_bytes"].get<int>(), 1000);

  CommandRun eval =
      Tilesmith("model eval --db " + Db() + bar + " --holdout 0.25 --within-fusion --json");
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  json scores = json::parse(eval.out);
  EXPECT_EQ(scores["heldout"]["fusions"], 1);
  // The features' ceiling, on the same held-out fusion.
  EXPECT_EQ(scores["within_fusion"]["model"], "within each fusion") << scores.dump(2);
  EXPECT_TRUE(scores["within_fusion"]["spearman"].is_number());
  ASSERT_EQ(scores["within_fusion"]["fusions"].size(), 1u);
  EXPECT_EQ(scores["within_fusion"]["fusions"][0]["fusion"],
            scores["analytic"]["fusions"][0]["fusion"]);
  EXPECT_EQ(scores["train"]["fusions"], 3);
  EXPECT_TRUE(scores["learned_trained"].get<bool>()) << scores["learned_model"];
  for (const char* model : {"analytic", "learned"}) {
    for (const char* figure : {"spearman", "kendall", "top1_regret", "top5_regret"}) {
      EXPECT_TRUE(scores[model][figure].is_number()) << model << " " << figure;
    }
    EXPECT_EQ(scores[model]["fusions"].size(), 1u);
  }
  EXPECT_EQ(scores["analytic"]["model"], "analytic-host");
  EXPECT_EQ(scores["learned"]["model"], "learned-xgboost");
  // Host tunes count their code, so both models are also scored on the configs uncompiled.
  ASSERT_TRUE(scores.contains("estimated")) << scores.dump(2);
  EXPECT_EQ(scores["estimated"]["learned"]["model"], "learned-xgboost");
  EXPECT_TRUE(scores["estimated"]["learned"]["spearman"].is_number());
  EXPECT_EQ(scores["estimated"]["analytic"]["fusions"].size(), 1u);

  CommandRun text = Tilesmith("model eval --db " + Db() + bar);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("spearman"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("within each fusion"), std::string::npos) << text.out;
  CommandRun ceiling = Tilesmith("model eval --db " + Db() + bar + " --within-fusion");
  ASSERT_EQ(ceiling.exit_code, 0) << ceiling.err;
  EXPECT_NE(ceiling.out.find("within each fusion  "), std::string::npos) << ceiling.out;
  EXPECT_NE(ceiling.out.find("not a model"), std::string::npos) << ceiling.out;
  EXPECT_NE(text.out.find("analytic-host"), std::string::npos);
  EXPECT_NE(text.out.find("uncompiled"), std::string::npos) << text.out;

  CommandRun predict = Tilesmith("predict " + Gelu() + " --target host --db " + Db() + " --json");
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  json answer = json::parse(predict.out);
  EXPECT_EQ(answer["model"], "learned-xgboost");
  EXPECT_NE(answer["model_description"].get<std::string>().find("4 fusions"), std::string::npos)
      << answer["model_description"];
  EXPECT_EQ(answer["top"][0]["breakdown"]["model"], "learned-xgboost");
}

// Generated fusions (`tilesmith generate`) tuned into the database train the model like any
// others; `model train` decides per emitter on held-out folds where the trees answer, stores
// the rule with the model, and `predict` honours it.
TEST_F(ModelCommandTest, GeneratedFusionsTrainAModelThatAnswersWhereItWonHeldOut) {
  fs::path generated = dir_ / "generated";
  CommandRun generate =
      Tilesmith("generate --seed 11 --count 6 --max-bytes 64K --out " + generated.string());
  ASSERT_EQ(generate.exit_code, 0) << generate.err;
  int tuned = 0;
  for (const auto& entry : fs::directory_iterator(generated)) {
    CommandRun tune = Tilesmith("tune " + entry.path().string() + " --target host --db " + Db() +
                                " --strategy random --budget 10 --rep-ms 2 --warmup-ms 1 "
                                "--no-flush --quiet");
    if (tune.exit_code == 0) ++tuned;
  }
  ASSERT_GE(tuned, 4) << "generated fusions the tuner could not tune";
  CommandRun train = Tilesmith("model train --db " + Db() +
                               " --min-rows 20 --min-fusions 3 --select-folds 3 --json");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  json trained = json::parse(train.out);
  EXPECT_EQ(trained["fusions"], tuned);
  const json& selection = trained["selection"];
  ASSERT_TRUE(selection["decided"].get<bool>()) << selection.dump(2);
  EXPECT_EQ(selection["overall"]["fusions"], tuned);
  EXPECT_TRUE(selection["emitters"].is_object() && !selection["emitters"].empty());

  // GELU is a loop fusion: the stored rule says which model ranks it.
  bool learned_for_loop = selection["learned_elsewhere"].get<bool>();
  if (selection["emitters"].contains("loop") &&
      selection["emitters"]["loop"].contains("learned_answers")) {
    learned_for_loop = selection["emitters"]["loop"]["learned_answers"].get<bool>();
  }
  CommandRun predict = Tilesmith("predict " + Gelu() + " --target host --db " + Db() + " --json");
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  json answer = json::parse(predict.out);
  const json& breakdown = answer["top"][0]["breakdown"];
  if (learned_for_loop) {
    EXPECT_EQ(breakdown["model"], "learned-xgboost") << breakdown.dump();
  } else {
    EXPECT_TRUE(breakdown.contains("selected")) << breakdown.dump();
    EXPECT_EQ(breakdown["model"], "analytic-host");
  }
  CommandRun text = Tilesmith("model train --db " + Db() + " --min-rows 20 --min-fusions 3");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("selection "), std::string::npos) << text.out;
}

// Timings brought back from a GPU host carry its driver in the device key, which this
// machine (no driver) cannot name: train and eval learn from them and say so. The trials are
// real host tunes re-keyed to such a device, as a GPU host's export would bring them.
TEST_F(ModelCommandTest, AGpuWithoutMeasurementsLearnsFromTheSameCardUnderAnotherDriver) {
  if (!fs::exists(Corpus())) GTEST_SKIP() << "no corpus at " << Corpus();
  for (const std::string& path : {Gelu(), Corpus() + "reduce_row/small_s32.hlo"}) {
    CommandRun tune = Tilesmith("tune " + path + " --target host --db " + Db() +
                                " --strategy random --budget 8 --rep-ms 3 --warmup-ms 1 "
                                "--no-flush --quiet");
    ASSERT_EQ(tune.exit_code, 0) << path << ": " << tune.err;
  }
  db::DeviceRecord gpu_host{.target = "cuda",
                            .compute_capability = "sm_90",
                            .name = "NVIDIA H100 SXM5 80GB",
                            .cores = 132,
                            .clock_mhz = 1980,
                            .memory_bandwidth_gbps = 3352,
                            .cache_bytes = 52428800,
                            .driver_version = "999.99",
                            .toolkit_version = "CUDA 13.0"};
  {
    auto store = db::SqliteStore::Open(Db());
    ASSERT_TRUE(store.has_value()) << store.error().message;
    auto trials = (*store)->Measurements({});
    ASSERT_TRUE(trials.has_value() && trials->size() == 16u);
    ASSERT_TRUE((*store)->PutDevice(gpu_host).has_value());
    for (db::MeasurementRecord& trial : *trials) {
      trial.uid.clear();
      trial.key.device_key = gpu_host.Key();
      trial.compile_stats = {{"registers", 32}, {"shared_bytes", 0}, {"spill_bytes", 0}};
    }
    ASSERT_TRUE((*store)->RecordBatch(*trials).has_value());
  }
  const std::string bar = " --target cuda:sm_90 --min-rows 10 --min-fusions 2";
  CommandRun eval = Tilesmith("model eval --db " + Db() + bar + " --holdout 0.5 --json");
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_NE(eval.err.find("learning from the nearest measured device of the same "
                          "architecture, '" +
                          gpu_host.Key() + "'"),
            std::string::npos)
      << eval.err;
  json scores = json::parse(eval.out);
  EXPECT_EQ(scores["device"], gpu_host.Key());
  EXPECT_NE(scores["requested_device"].get<std::string>().find("driver none"), std::string::npos)
      << scores["requested_device"];
  EXPECT_EQ(scores["analytic"]["model"], "analytic-gpu");
  EXPECT_EQ(scores["heldout"]["fusions"], 1);

  CommandRun train = Tilesmith("model train --db " + Db() + bar + " --json");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_EQ(json::parse(train.out)["device"], gpu_host.Key()) << "the measured device's model";

  // Predictions for this machine's sm_90 come from that model too, and say whose it is.
  CommandRun predict =
      Tilesmith("predict " + Gelu() + " --target cuda:sm_90 --compile 0 --db " + Db() + " --json");
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  json predicted = json::parse(predict.out);
  EXPECT_EQ(predicted["model"], "learned-xgboost");
  EXPECT_NE(predicted["model_description"].get<std::string>().find(
                "trained on '" + gpu_host.Key() + "', the nearest device of this architecture"),
            std::string::npos)
      << predicted["model_description"];
}

TEST_F(ModelCommandTest, TooLittleDataTrainsNothingAndSaysSo) {
  CommandRun tune = Tilesmith("tune " + Gelu() + " --target host --db " + Db() +
                              " --budget 4 --rep-ms 3 --warmup-ms 1 --no-flush --quiet");
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  CommandRun train = Tilesmith("model train --db " + Db());
  EXPECT_EQ(train.exit_code, 1);
  EXPECT_NE(train.err.find("too little data to train: analytic-host (fallback: 4 measurements "
                           "< 200) answers"),
            std::string::npos)
      << train.err;
  CommandRun eval = Tilesmith("model eval --db " + Db());
  EXPECT_EQ(eval.exit_code, 1);
  EXPECT_NE(eval.err.find("at least 2 fusions"), std::string::npos) << eval.err;
  CommandRun predict = Tilesmith("predict " + Gelu() + " --target host --db " + Db() + " --json");
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_EQ(json::parse(predict.out)["model"], "analytic-host");
}

TEST_F(ModelCommandTest, BadCommandLinesAndMissingDataAreExplained) {
  CommandRun none = Tilesmith("model");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("needs an action"), std::string::npos) << none.err;
  EXPECT_EQ(Tilesmith("model fit").exit_code, 2);
  CommandRun missing = Tilesmith("model train --db " + (dir_ / "missing.db").string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no results database at"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir_ / "missing.db")) << "not created";

  CommandRun tune = Tilesmith("tune " + Gelu() + " --target host --db " + Db() +
                              " --budget 2 --rep-ms 3 --warmup-ms 1 --no-flush --quiet");
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  CommandRun gpu = Tilesmith("model train --db " + Db() + " --target cuda:sm_90");
  EXPECT_EQ(gpu.exit_code, 1);
  EXPECT_NE(gpu.err.find("no verified measurements for device 'cuda:sm_90"), std::string::npos)
      << gpu.err;
  EXPECT_NE(gpu.err.find("host, "), std::string::npos) << "lists the devices it holds";
  CommandRun unknown = Tilesmith("model eval --db " + Db() + " --target tpu:v5");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_FALSE(unknown.err.empty());
  EXPECT_EQ(Tilesmith("model eval --db " + Db() + " --holdout 2").exit_code, 2);
  EXPECT_EQ(Tilesmith("model train --db " + Db() + " --objective lambdamart").exit_code, 2);
  CommandRun help = Tilesmith("model --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("top-1 / top-5 regret"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace tilesmith
