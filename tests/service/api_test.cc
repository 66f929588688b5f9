// The HTTP API end to end: a real server on loopback, a real SQLite file, a real client.
#include <gtest/gtest.h>

#include "db/sqlite_store.h"
#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

json Query(int variant) { return {{"fusion", TinyFusion(variant)}, {"target", "host"}}; }

TEST_F(ServiceTest, HealthAndDevices) {
  StartServer();
  Reply health = Get("/healthz");
  ASSERT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(health.Json()["status"], "ok");
  Reply devices = Get("/v1/devices");
  ASSERT_EQ(devices.status, 200);
  json list = devices.Json()["devices"];
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["target"], "host");
  EXPECT_EQ(list[0]["can_tune"], true);
  EXPECT_TRUE(list[0]["device"].get<std::string>().starts_with("host")) << list[0];
}

TEST_F(ServiceTest, ACudaTargetWithoutAGpuAnswersQueriesButDoesNotTune) {
  ServerOptions options = Options();
  options.targets = {"host", "cuda:sm_90"};
  StartServer(options);
  json devices = Get("/v1/devices").Json()["devices"];
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_TRUE(devices[1]["device"].get<std::string>().starts_with("cuda:sm_90")) << devices;
  if (devices[1]["can_tune"]) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(Post("/v1/query", {{"fusion", TinyFusion()}}).status, 400) << "two targets: name one";
  EXPECT_EQ(Post("/v1/query", {{"fusion", TinyFusion()}, {"target", "cuda:sm_90"}}).status, 404);
  Reply refused = Post("/v1/tune", {{"fusion", TinyFusion()}, {"target", "cuda:sm_90"}});
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_NE(refused.body.find("no GPU"), std::string::npos) << refused.body;
}

TEST(ServerStartTest, BadTargetsAddressesAndPortsAreClearErrors) {
  TempDir dir;
  ServerOptions options;
  options.port = 0;
  options.db_path = dir.File("t.db");
  auto expect_error = [&](const ServerOptions& bad, const std::string& fragment) {
    auto server = Server::Start(bad);
    ASSERT_FALSE(server.has_value());
    EXPECT_NE(server.error().message.find(fragment), std::string::npos) << server.error().message;
  };
  ServerOptions bad = options;
  bad.targets = {"tpu:v5"};
  expect_error(bad, "tpu:v5");
  bad.targets = {"cuda:1"};
  expect_error(bad, "cuda:1");
  bad.targets = {"host", "host"};
  expect_error(bad, "given twice");
  bad = options;
  bad.bind = "not-an-address";
  expect_error(bad, "not-an-address");
  auto first = Server::Start(options);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  bad = options;
  bad.port = (*first)->port();
  expect_error(bad, "cannot listen on 127.0.0.1:" + std::to_string(bad.port));
}

TEST_F(ServiceTest, QueryMissesThenTuneWaitsThenQueryAnswersFromTheDatabase) {
  StartServer();
  Reply miss = Post("/v1/query", Query(0));
  ASSERT_EQ(miss.status, 404) << miss.body;
  std::string fingerprint = miss.Json()["fingerprint"];
  EXPECT_EQ(fingerprint.size(), 64u);

  json tune = Query(0);
  tune["budget"] = 3;
  tune["wait"] = true;
  tune["timeout_s"] = 60;
  Reply tuned = Post("/v1/tune", tune);
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  json job = tuned.Json()["job"];
  EXPECT_EQ(job["state"], "done") << job;
  EXPECT_EQ(job["progress"]["measured"], 3);
  EXPECT_EQ(job["result"]["measured_now"], 3);
  EXPECT_EQ(tuned.headers["Location"], "/v1/jobs/" + job["id"].get<std::string>());

  Reply hit = Post("/v1/query", Query(0));
  ASSERT_EQ(hit.status, 200) << hit.body;
  json answer = hit.Json();
  EXPECT_EQ(answer["source"], "measured");
  EXPECT_EQ(answer["fingerprint"], fingerprint);
  EXPECT_EQ(answer["config"], job["result"]["best"]["config"]);
  EXPECT_EQ(answer["job_id"], job["id"]);
  EXPECT_GT(answer["median_us"].get<double>(), 0);

  // The same answer the database itself gives, read through the Store.
  auto store = db::SqliteStore::Open(Options().db_path);
  ASSERT_TRUE(store.has_value());
  auto best = (*store)->Best({fingerprint, answer["device"], answer["compiler_version"]});
  ASSERT_TRUE(best.has_value() && best->has_value());
  // The view names the search's winner; an answer the verdict changed keeps it beside.
  EXPECT_EQ((*best)->measurement.config, answer.contains("searched_best")
                                             ? answer["searched_best"]["config"]
                                             : answer["config"]);

  Reply job_reply = Get("/v1/jobs/" + job["id"].get<std::string>());
  ASSERT_EQ(job_reply.status, 200);
  EXPECT_EQ(job_reply.Json()["state"], "done");
}

TEST_F(ServiceTest, BatchAnswersInRequestOrder) {
  StartServer();
  json tune = Query(1);
  tune["budget"] = 2;
  tune["wait"] = true;
  ASSERT_EQ(Post("/v1/tune", tune).status, 200);
  json queries = json::array();
  for (int i = 0; i < 10; ++i) queries.push_back({{"fusion", TinyFusion(i % 3)}});
  queries.push_back({{"fusion", "HloModule broken\nENTRY e {\n  ROOT x = f32[2] nope()\n}"}});
  queries.push_back({{"fusion", TinyFusion(1)}, {"target", "cuda:sm_00"}});
  Reply batch = Post("/v1/query:batch", {{"target", "host"}, {"queries", queries}});
  ASSERT_EQ(batch.status, 200) << batch.body;
  json results = batch.Json()["results"];
  ASSERT_EQ(results.size(), queries.size());
  std::string tuned_fingerprint;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(results[i]["status"], i % 3 == 1 ? 200 : 404) << i << ": " << results[i];
    if (i % 3 == 1) {
      EXPECT_EQ(results[i]["source"], "measured");
      tuned_fingerprint = results[i]["fingerprint"];
    }
  }
  // Each answer belongs to its own query: equal fusions, equal fingerprints.
  EXPECT_EQ(results[0]["fingerprint"], results[3]["fingerprint"]);
  EXPECT_NE(results[0]["fingerprint"], results[2]["fingerprint"]);
  EXPECT_EQ(results[4]["fingerprint"], tuned_fingerprint);
  EXPECT_EQ(results[10]["status"], 400);
  EXPECT_NE(results[10]["error"].get<std::string>().find("fusion:3:"), std::string::npos)
      << results[10];
  EXPECT_EQ(results[11]["status"], 400);
  EXPECT_EQ(batch.Json()["found"], 3);

  json too_many = json::array();
  for (int i = 0; i < 10001; ++i) too_many.push_back(json::object());
  EXPECT_EQ(Post("/v1/query:batch", {{"queries", too_many}}).status, 413);
}

TEST_F(ServiceTest, KernelsListAndEveryMeasurement) {
  StartServer();
  json tune = Query(2);
  tune["budget"] = 3;
  tune["wait"] = true;
  Reply tuned = Post("/v1/tune", tune);
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  std::string fingerprint = tuned.Json()["job"]["fingerprint"];

  Reply list = Get("/v1/kernels?target=host");
  ASSERT_EQ(list.status, 200) << list.body;
  json kernels = list.Json()["kernels"];
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]["fingerprint"], fingerprint);
  EXPECT_EQ(kernels[0]["measurements"], 3);
  EXPECT_EQ(kernels[0]["best"]["source"], "measured");
  EXPECT_EQ(Get("/v1/kernels").Json()["kernels"].size(), 1u);
  EXPECT_EQ(Get("/v1/kernels?target=nowhere").status, 400);

  Reply detail = Get("/v1/kernels/" + fingerprint);
  ASSERT_EQ(detail.status, 200) << detail.body;
  EXPECT_EQ(detail.Json()["measurements"].size(), 3u);
  EXPECT_EQ(detail.Json()["best"].size(), 1u);
  // A timed measurement carries the same summary as a query answer, and its repetitions.
  json measurements = detail.Json()["measurements"];
  ASSERT_FALSE(measurements.empty());
  for (const json& measurement : measurements) {
    if (!measurement.contains("median_us")) continue;
    for (const char* field : {"p20_us", "p80_us", "min_us", "max_us", "times_us"}) {
      EXPECT_TRUE(measurement.contains(field)) << field << " in " << measurement;
    }
  }
  EXPECT_NE(detail.Json()["canonical_text"].get<std::string>().find("exponential"),
            std::string::npos);
  EXPECT_EQ(Get("/v1/kernels/" + fingerprint.substr(0, 10)).status, 200) << "a unique prefix";
  EXPECT_EQ(Get("/v1/kernels/" + std::string(64, 'a')).status, 404);
  EXPECT_EQ(Get("/v1/kernels/zzzzzzzz").status, 400);
  EXPECT_EQ(Get("/v1/kernels/..%2F..%2Fetc%2Fpasswd").status, 404) << "no such route";
}

TEST_F(ServiceTest, AscGraphRequestsAreTunedAndAnswered) {
  StartServer();
  json graph = json::parse(
      ReadFile(TILESMITH_SOURCE_DIR "/configs/examples/ascgraph/leaky_relu_axpy.ascgraph.json"));
  json query = {{"ascgraph", graph}, {"sizes", {{"s0", 4}, {"s1", 8}}}, {"target", "host"}};
  Reply miss = Post("/v1/query", query);
  ASSERT_EQ(miss.status, 404) << miss.body;
  json tune = query;
  tune["budget"] = 2;
  tune["wait"] = true;
  Reply tuned = Post("/v1/tune", tune);
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  EXPECT_EQ(tuned.Json()["job"]["state"], "done") << tuned.body;
  EXPECT_EQ(tuned.Json()["job"]["source_format"], "ascgraph");
  Reply hit = Post("/v1/query", query);
  ASSERT_EQ(hit.status, 200) << hit.body;
  EXPECT_EQ(hit.Json()["fingerprint"], miss.Json()["fingerprint"]);
  // Other sizes are another fusion.
  query["sizes"]["s0"] = 8;
  EXPECT_EQ(Post("/v1/query", query).status, 404);
  json unbound = {{"ascgraph", graph}, {"target", "host"}};
  unbound["ascgraph"].erase("sizes");
  Reply refused = Post("/v1/query", unbound);
  EXPECT_EQ(refused.status, 400) << refused.body;
}

TEST_F(ServiceTest, TuneIfMissingQueuesAJobWithoutWaiting) {
  StartServer();
  json query = Query(3);
  query["tune_if_missing"] = {{"budget", 2}};
  auto start = std::chrono::steady_clock::now();
  Reply miss = Post("/v1/query", query);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(miss.status, 404) << miss.body;
  EXPECT_LT(seconds, 1.0) << "a query never waits on tuning";
  std::string id = miss.Json()["job"]["id"];
  json job = WaitForJob(id, [](const json& j) { return j["state"] == "done"; });
  ASSERT_EQ(job["state"], "done") << job;
  EXPECT_EQ(Post("/v1/query", Query(3)).status, 200);
}

TEST_F(ServiceTest, MetricsCountRequestsJobsAndCandidates) {
  StartServer();
  json tune = Query(4);
  tune["budget"] = 2;
  tune["wait"] = true;
  ASSERT_EQ(Post("/v1/tune", tune).status, 200);
  ASSERT_EQ(Post("/v1/query", Query(4)).status, 200);
  ASSERT_EQ(Get("/nowhere").status, 404);
  Reply metrics = Get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_TRUE(metrics.headers["Content-Type"].starts_with("text/plain"));
  const std::string& text = metrics.body;
  for (const char* line :
       {"tilesmith_http_requests_total{route=\"/v1/query\",status=\"200\"} 1",
        "tilesmith_http_requests_total{route=\"/v1/tune\",status=\"200\"} 1",
        "tilesmith_http_requests_total{route=\"other\",status=\"404\"} 1",
        "tilesmith_http_request_duration_seconds_count{route=\"/v1/query\"} 1",
        "tilesmith_jobs{state=\"done\"} 1", "tilesmith_candidates_total{outcome=\"measured\"} 2",
        "tilesmith_candidates_total{outcome=\"compiled\"} 2"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  size_t size = text.find("\ntilesmith_database_bytes ");
  ASSERT_NE(size, std::string::npos);
  EXPECT_GT(std::stoll(text.substr(size + 26)), 4096);
}

TEST_F(ServiceTest, MetricsShowTheFleetsQueueAndAgents) {
  StartServer();
  {
    auto store = db::SqliteStore::Open(Options().db_path);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    std::vector<db::WorkUnit> units(3);
    for (int i = 0; i < 3; ++i) {
      units[i].job_id = "sweep-metrics";
      units[i].sequence = i;
      units[i].device_key = "host, test";
      units[i].fingerprint = "f" + std::to_string(i);
      units[i].fusion_text = "HloModule m";
    }
    ASSERT_TRUE((*store)->EnqueueUnits(units).has_value());
    db::AgentRecord agent;
    agent.name = "agent-1";
    agent.host = "here";
    agent.device_keys = {"host, test"};
    ASSERT_TRUE((*store)->PutAgent(agent).has_value());
    std::vector<std::string> keys = {"host, test"};
    auto claimed = (*store)->ClaimUnit("agent-1", keys, 60000);
    ASSERT_TRUE(claimed.has_value() && claimed->has_value());
  }
  Reply metrics = Get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const char* line :
       {"tilesmith_units{state=\"queued\"} 2", "tilesmith_units{state=\"leased\"} 1",
        "tilesmith_units{state=\"done\"} 0", "tilesmith_units_reclaimed 0", "tilesmith_agents 1"}) {
    EXPECT_NE(metrics.body.find(line), std::string::npos) << line << "\n" << metrics.body;
  }
}

}  // namespace
}  // namespace tilesmith::service::testing
