// /v1/query:batch answers each query exactly as /v1/query answers it alone: a batch of new
// fusions, half with a stored result and half without, spread over two targets, with
// repeats and bad queries among them, several chunks long (the batch answers chunks side
// by side and reads each chunk's best results with one Store::BestMany).
#include <gtest/gtest.h>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/parser.h"
#include "db/sqlite_store.h"
#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

TEST_F(ServiceTest, ABatchAnswersEachQueryAsASingleQueryDoes) {
  ServerOptions options = Options();
  options.targets = {"host", "cuda:sm_90"};
  options.cache_ttl_s = 0;  // every answer read from the store: Best alone, BestMany in batch
  StartServer(options);
  json tune = {{"fusion", TinyFusion(0)}, {"target", "host"}, {"budget", 2}, {"wait", true}};
  Reply tuned = Post("/v1/tune", tune);
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  std::string model_fingerprint = tuned.Json()["job"]["fingerprint"];

  // Even variants get a stored result (a copy of the tuned fusion's trials, as the
  // benchmark does); odd ones have none.
  constexpr int kVariants = 240;
  {
    auto store = db::SqliteStore::Open(options.db_path);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    auto model = (*store)->Measurements({model_fingerprint});
    ASSERT_TRUE(model.has_value() && !model->empty());
    std::vector<db::MeasurementRecord> trials;
    for (int variant = 2; variant < kVariants; variant += 2) {
      auto module = hlo::ParseHloModule(TinyFusion(variant));
      ASSERT_TRUE(module.has_value()) << module.error().message;
      std::string fingerprint = *hlo::FusionFingerprint(**module);
      ASSERT_TRUE((*store)
                      ->PutKernel({fingerprint, "hlo", (*module)->fusion()->name(),
                                   hlo::CanonicalFusionText(**module)})
                      .has_value());
      for (db::MeasurementRecord trial : *model) {
        trial.uid.clear();
        trial.key.fingerprint = fingerprint;
        trials.push_back(std::move(trial));
      }
    }
    ASSERT_TRUE((*store)->RecordBatch(trials).has_value());
  }

  json queries = json::array();
  for (int variant = 0; variant < kVariants; ++variant) {
    json query = {{"fusion", TinyFusion(variant)}};
    if (variant % 5 == 4) query["target"] = "cuda:sm_90";  // another device: none stored
    queries.push_back(query);
    if (variant % 37 == 0) queries.push_back(query);  // a repeat
  }
  queries.push_back({{"fusion", "HloModule broken\nENTRY e {\n  ROOT x = f32[2] nope()\n}"}});
  queries.insert(queries.begin() + 120, json{{"fusion", TinyFusion(2)}, {"target", "tpu"}});
  queries.insert(queries.begin() + 150, json("not an object"));
  Reply batch = Post("/v1/query:batch", {{"target", "host"}, {"queries", queries}});
  ASSERT_EQ(batch.status, 200) << batch.body.substr(0, 400);
  json results = batch.Json()["results"];
  ASSERT_EQ(results.size(), queries.size());

  int64_t found = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    json single_query = queries[i];
    if (single_query.is_object() && !single_query.contains("target")) {
      single_query["target"] = "host";  // the batch's default
    }
    Reply single = Client(port()).Send("POST", "/v1/query", single_query.dump());
    json expected = single.Json();
    expected["status"] = single.status;
    if (single.status == 400 && !queries[i].is_object()) {
      // A body that is not an object is refused before routing; in a batch it is one item.
      EXPECT_EQ(results[i]["status"], 400) << i;
      continue;
    }
    EXPECT_EQ(results[i], expected) << "query " << i;
    found += single.status == 200;
  }
  EXPECT_GT(found, 80);
  EXPECT_EQ(batch.Json()["found"], found);
}

}  // namespace
}  // namespace tilesmith::service::testing
