// `"predict": true` on /v1/query and /v1/query:batch: a fusion with no verified result on the
// target gets the cost model's best config, marked `source: "predicted"` with the model's
// name; once it is measured the same query answers `source: "measured"`. A real server on
// loopback over a real SQLite file.
#include <gtest/gtest.h>

#include "service_test_util.h"

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
