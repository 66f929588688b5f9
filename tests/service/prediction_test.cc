// `"predict": true` on /v1/query and /v1/query:batch: a fusion with no verified result on the
// target gets the cost model's best config, marked `source: "predicted"` with the model's
// name; once it is measured the same query answers `source: "measured"`. A real server on
// loopback over a real SQLite file.
#include <gtest/gtest.h>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/parser.h"
#include "service_test_util.h"
#include "tuner/device.h"
#include "tuner/session.h"

namespace tilesmith::service::testing {
namespace {

TEST_F(ServiceTest, PredictsWhereNothingWasMeasuredAndSaysSo) {
  StartServer();
  json query = {{"fusion", TinyFusion(3)}, {"target", "host"}};
  EXPECT_EQ(Post("/v1/query", query).status, 404) << "predictions are asked for";

  query["predict"] = true;
  Reply predicted = Post("/v1/query", query);
  ASSERT_EQ(predicted.status, 200) << predicted.body;
  json answer = predicted.Json();
  EXPECT_EQ(answer["source"], "predicted");
  EXPECT_EQ(answer["model"], "analytic-host");
  EXPECT_EQ(answer["target"], "host");
  EXPECT_GT(answer["predicted_us"].get<double>(), 0);
  EXPECT_GT(answer["configs_ranked"].get<int64_t>(), 1);
  ASSERT_TRUE(answer["config"].is_object());
  EXPECT_TRUE(answer["config"].contains("threads_per_block")) << answer["config"];
  EXPECT_FALSE(answer.contains("median_us")) << "a prediction is not a measurement";

  // The same config the model ranked is valid for the emitter: tune, then it is measured.
  json tune = {{"fusion", TinyFusion(3)},
               {"target", "host"},
               {"budget", 2},
               {"wait", true},
               {"timeout_s", 60}};
  Reply tuned = Post("/v1/tune", tune);
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  Reply measured = Post("/v1/query", query);
  ASSERT_EQ(measured.status, 200) << measured.body;
  EXPECT_EQ(measured.Json()["source"], "measured");

  EXPECT_EQ(Post("/v1/query", {{"fusion", TinyFusion(4)}, {"predict", "yes"}}).status, 400);
}

// A result measured on an H100 SXM answers for an H100 PCIe (same sm_90) when predictions are
// asked for, marked as measured elsewhere; an A100 (sm_80) falls through to the model.
TEST_F(ServiceTest, PredictionsFallBackToTheNearestTunedDeviceOfTheSameArchitecture) {
  ServerOptions options = Options();
  options.compiler_version = "tilesmith-test-1";
  options.targets = {"cuda:sm_90=h100_pcie", "cuda:sm_80=a100"};
  auto module = hlo::ParseHloModule(TinyFusion(9));
  ASSERT_TRUE(module.has_value()) << module.error().message;
  auto fingerprint = hlo::FusionFingerprint(**module);
  ASSERT_TRUE(fingerprint.has_value());
  auto sxm = tuner::ResolveDevice("cuda:sm_90", "h100_sxm", tuner::DefaultDevicesDir());
  ASSERT_TRUE(sxm.has_value()) << sxm.error().message;
  {
    std::filesystem::create_directories(std::filesystem::path(options.db_path).parent_path());
    auto store = db::testing::OpenStore(options.db_path);
    ASSERT_NE(store, nullptr);
    db::KernelRecord kernel{*fingerprint, "hlo", "tiny", hlo::CanonicalFusionText(**module)};
    ASSERT_TRUE(store->PutDevice(sxm->record).has_value());
    ASSERT_TRUE(store->PutKernel(kernel).has_value());
    db::MeasurementRecord trial =
        db::testing::Trial(kernel, sxm->record, {{"threads_per_block", 256}}, 3.5);
    ASSERT_TRUE(store->RecordBatch({&trial, 1}).has_value());
  }
  StartServer(options);

  json query = {{"fusion", TinyFusion(9)}, {"target", "cuda:sm_90"}};
  EXPECT_EQ(Post("/v1/query", query).status, 404) << "not measured on this device";
  query["predict"] = true;
  Reply near = Post("/v1/query", query);
  ASSERT_EQ(near.status, 200) << near.body;
  json answer = near.Json();
  EXPECT_EQ(answer["source"], "nearest-device");
  EXPECT_EQ(answer["measured_on"], sxm->record.Key());
  EXPECT_EQ(answer["config"]["threads_per_block"], 256);
  EXPECT_NE(answer["fallback"].get<std::string>().find("sm_90"), std::string::npos);

  query["target"] = "cuda:sm_80";
  Reply other = Post("/v1/query", query);
  ASSERT_EQ(other.status, 200) << other.body;
  EXPECT_EQ(other.Json()["source"], "predicted") << "an sm_80 device is not an sm_90 one";
  EXPECT_EQ(other.Json()["model"], "analytic-gpu");
}

// A compile-only tune (a CUDA target, no GPU) stored predictions made with real cubins: the
// query answers with the fastest of them, marked stored and predicted, never measured.
TEST_F(ServiceTest, StoredPredictionsOfACompileOnlyTuneAnswerQueries) {
  ServerOptions options = Options();
  options.compiler_version = "tilesmith-test-1";
  options.targets = {"cuda:sm_90"};
  auto module = hlo::ParseHloModule(TinyFusion(11));
  ASSERT_TRUE(module.has_value()) << module.error().message;
  auto h100 = tuner::ResolveDevice("cuda:sm_90", "", tuner::DefaultDevicesDir());
  ASSERT_TRUE(h100.has_value()) << h100.error().message;
  double fastest = 0;
  {
    std::filesystem::create_directories(std::filesystem::path(options.db_path).parent_path());
    auto store = db::testing::OpenStore(options.db_path);
    ASSERT_NE(store, nullptr);
    tuner::TuneOptions tune;
    tune.strategy = "exhaustive";
    tune.budget = 3;
    auto result = tuner::Tune(**module, *h100, store.get(), "tilesmith-test-1", tune);
    ASSERT_TRUE(result.has_value()) << result.error().message;
    ASSERT_FALSE(result->timed);
    ASSERT_TRUE(result->best.has_value());
    fastest = result->best->median_us;
  }
  StartServer(options);
  json query = {{"fusion", TinyFusion(11)}, {"target", "cuda:sm_90"}};
  EXPECT_EQ(Post("/v1/query", query).status, 404) << "a prediction is not a measured result";
  query["predict"] = true;
  Reply reply = Post("/v1/query", query);
  ASSERT_EQ(reply.status, 200) << reply.body;
  json answer = reply.Json();
  EXPECT_EQ(answer["source"], "predicted");
  EXPECT_EQ(answer["stored"], true);
  EXPECT_EQ(answer["resources"], "cubin");
  EXPECT_GT(answer["cubin"]["registers"].get<int64_t>(), 0);
  EXPECT_EQ(answer["configs_ranked"], 3);
  EXPECT_DOUBLE_EQ(answer["predicted_us"].get<double>(), fastest);
  EXPECT_FALSE(answer.contains("median_us"));
}

TEST_F(ServiceTest, BatchPredictsWhenTheBatchAsks) {
  StartServer();
  json batch = {
      {"target", "host"},
      {"predict", true},
      {"queries", {{{"fusion", TinyFusion(5)}}, {{"fusion", TinyFusion(6)}, {"predict", false}}}}};
  Reply reply = Post("/v1/query:batch", batch);
  ASSERT_EQ(reply.status, 200) << reply.body;
  json results = reply.Json()["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["status"], 200) << results[0];
  EXPECT_EQ(results[0]["source"], "predicted");
  EXPECT_EQ(results[1]["status"], 404) << "a query's own field wins over the batch's";
}

}  // namespace
}  // namespace tilesmith::service::testing
