// Tuning jobs through the API: identical requests share a job, cancel (queued and
// running), and a restarted server on the same database resumes without re-measuring.
#include <gtest/gtest.h>

#include <future>
#include <set>

#include "db/sqlite_store.h"
#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

// A job that takes a while: the whole space (72 configs), timed longer.
ServerOptions SlowOptions(ServerOptions options) {
  options.measure.budget_ms = 15;
  options.batch_size = 1;
  return options;
}

json TuneRequest(int variant, int budget) {
  // Exhaustive: the counts below assume a search that never stops before its budget.
  return {{"fusion", TinyFusion(variant)},
          {"target", "host"},
          {"budget", budget},
          {"strategy", "exhaustive"}};
}

TEST_F(ServiceTest, IdenticalConcurrentRequestsShareOneJob) {
  StartServer(SlowOptions(Options()));
  std::vector<std::future<Reply>> replies;
  for (int i = 0; i < 4; ++i) {
    replies.push_back(std::async(std::launch::async, [&] {
      return Client(port()).Send("POST", "/v1/tune", TuneRequest(0, 0).dump());
    }));
  }
  std::set<std::string> ids;
  int shared = 0;
  for (auto& reply : replies) {
    Reply got = reply.get();
    ASSERT_EQ(got.status, 202) << got.body;
    ids.insert(got.Json()["job"]["id"].get<std::string>());
    shared += got.Json()["shared"].get<bool>();
  }
  EXPECT_EQ(ids.size(), 1u) << "one job for four identical requests";
  EXPECT_EQ(shared, 3);
  // Another budget is another job.
  Reply other = Post("/v1/tune", TuneRequest(0, 5));
  ASSERT_EQ(other.status, 202);
  EXPECT_EQ(ids.count(other.Json()["job"]["id"].get<std::string>()), 0u);
  EXPECT_FALSE(other.Json()["shared"].get<bool>());
  auto store = db::SqliteStore::Open(Options().db_path);
  ASSERT_TRUE(store.has_value());
  EXPECT_EQ((*store)->ListJobs({})->size(), 2u) << "the database holds both jobs";
  for (const std::string& id : {*ids.begin(), other.Json()["job"]["id"].get<std::string>()}) {
    int status = Delete("/v1/jobs/" + id).status;
    EXPECT_TRUE(status == 200 || status == 202) << status;
  }
}

TEST_F(ServiceTest, CancelAQueuedJobAtOnceAndARunningOneAfterItsBatch) {
  StartServer(SlowOptions(Options()));
  Reply first = Post("/v1/tune", TuneRequest(5, 0));
  ASSERT_EQ(first.status, 202) << first.body;
  std::string running = first.Json()["job"]["id"];
  Reply second = Post("/v1/tune", TuneRequest(6, 0));
  ASSERT_EQ(second.status, 202);
  std::string queued = second.Json()["job"]["id"];

  json job = WaitForJob(running, [](const json& j) { return j["progress"]["measured"] >= 2; });
  ASSERT_EQ(job["state"], "running") << job;
  EXPECT_EQ(Get("/v1/jobs/" + queued).Json()["state"], "queued");

  Reply cancel_queued = Delete("/v1/jobs/" + queued);
  ASSERT_EQ(cancel_queued.status, 200) << cancel_queued.body;
  EXPECT_EQ(cancel_queued.Json()["job"]["state"], "cancelled");
  EXPECT_EQ(Delete("/v1/jobs/" + queued).status, 409) << "already cancelled";

  Reply cancel_running = Delete("/v1/jobs/" + running);
  ASSERT_EQ(cancel_running.status, 202) << cancel_running.body;
  job = WaitForJob(
      running, [](const json& j) { return j["state"] != "running"; }, 30);
  EXPECT_EQ(job["state"], "cancelled") << job;
  int64_t measured = job["result"]["measured"];
  EXPECT_LT(measured, 72) << "it stopped early";
  EXPECT_GE(measured, 2);
  // Every trial it measured stays committed.
  Reply detail = Get("/v1/kernels/" + job["fingerprint"].get<std::string>());
  ASSERT_EQ(detail.status, 200);
  EXPECT_EQ(static_cast<int64_t>(detail.Json()["measurements"].size()), measured);
  // The queued job never ran.
  EXPECT_EQ(Get("/v1/jobs/" + queued).Json()["progress"]["measured"], 0);
}

TEST_F(ServiceTest, ARestartedServerResumesWithoutRemeasuring) {
  ServerOptions options = SlowOptions(Options());
  StartServer(options);
  const int budget = 24;
  Reply submitted = Post("/v1/tune", TuneRequest(7, budget));
  ASSERT_EQ(submitted.status, 202);
  std::string id = submitted.Json()["job"]["id"];
  Reply waiting = Post("/v1/tune", TuneRequest(8, 2));  // queued behind it
  std::string second = waiting.Json()["job"]["id"];
  json job = WaitForJob(id, [](const json& j) { return j["progress"]["measured"] >= 3; });
  ASSERT_EQ(job["state"], "running") << job;
  StopServer();

  {
    auto store = db::SqliteStore::Open(options.db_path);
    ASSERT_TRUE(store.has_value());
    auto stored = (*store)->GetJob(id);
    ASSERT_TRUE(stored.has_value() && stored->has_value());
    EXPECT_EQ((*stored)->state, db::JobState::kQueued) << "interrupted jobs are queued again";
    EXPECT_EQ((*(*store)->GetJob(second))->state, db::JobState::kQueued);
  }

  StartServer(options);  // a new server, the same database
  job = WaitForJob(id, [](const json& j) { return j["state"] == "done"; });
  ASSERT_EQ(job["state"], "done") << job;
  EXPECT_GE(job["result"]["resumed"].get<int64_t>(), 3);
  EXPECT_EQ(job["result"]["resumed"].get<int64_t>() + job["result"]["measured_now"].get<int64_t>(),
            budget);
  json detail = Get("/v1/kernels/" + job["fingerprint"].get<std::string>()).Json();
  std::set<std::string> configs;
  for (const json& trial : detail["measurements"]) configs.insert(trial["config_hash"]);
  EXPECT_EQ(detail["measurements"].size(), static_cast<size_t>(budget)) << "none measured twice";
  EXPECT_EQ(configs.size(), static_cast<size_t>(budget));
  for (const json& trial : detail["measurements"]) EXPECT_EQ(trial["job_id"], id);
  job = WaitForJob(second, [](const json& j) { return j["state"] == "done"; });
  EXPECT_EQ(job["state"], "done") << job;
}

TEST_F(ServiceTest, WaitAnswers202WhenTheDeadlinePasses) {
  StartServer(SlowOptions(Options()));
  json request = TuneRequest(9, 0);
  request["wait"] = true;
  request["timeout_s"] = 0.3;
  auto start = std::chrono::steady_clock::now();
  Reply reply = Post("/v1/tune", request);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(reply.status, 202) << reply.body;
  EXPECT_LT(seconds, 3);
  EXPECT_TRUE(reply.Json()["job"]["state"] == "running" ||
              reply.Json()["job"]["state"] == "queued");
  // Other requests are answered while the job runs.
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Delete("/v1/jobs/" + reply.Json()["job"]["id"].get<std::string>()).status / 100, 2);
}

}  // namespace
}  // namespace tilesmith::service::testing
