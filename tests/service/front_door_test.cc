// The front door against a real server: inputs that once took it down or stalled it. A
// zero-element fusion on every route, a job that kills its process, fusions over the
// instruction limit, heavy parsing beside /healthz, a stop in the middle of a measurement,
// validation that does not depend on what the database holds, HEAD, the bearer scheme's
// case, and error messages that keep the server's paths to themselves.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>

#include "db/sqlite_store.h"
#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string ZeroElementFusion() {
  return "HloModule zero\n\nfused {\n  p = f32[0] parameter(0)\n  ROOT r = f32[0] negate(p)\n}\n";
}

// A chain of `count` elementwise instructions.
std::string LongFusion(int count) {
  std::string text = "HloModule long\n\nfused {\n  v0 = f32[64] parameter(0)\n";
  for (int i = 1; i <= count; ++i) {
    text += "  v" + std::to_string(i) + " = f32[64] negate(v" + std::to_string(i - 1) + ")\n";
  }
  return text + "}\n";
}

// Sets a `tilesmith worker` fault for the test's lifetime (workers inherit the variable).
class WorkerFault {
 public:
  explicit WorkerFault(const char* faults) { setenv("TILESMITH_WORKER_FAULT", faults, 1); }
  ~WorkerFault() { unsetenv("TILESMITH_WORKER_FAULT"); }
};

TEST_F(ServiceTest, AZeroElementFusionGetsANormalAnswerOnEveryRoute) {
  StartServer();
  json query = {{"fusion", ZeroElementFusion()}, {"target", "host"}, {"predict", true}};
  Reply predicted = Post("/v1/query", query);
  EXPECT_EQ(predicted.status, 200) << predicted.body;
  Reply batch = Post("/v1/query:batch", {{"queries", {query, query}}, {"predict", true}});
  ASSERT_EQ(batch.status, 200) << batch.body;
  EXPECT_EQ(batch.Json()["results"][0]["status"], 200) << batch.body;
  Reply split = Post("/v1/split", {{"fusion", ZeroElementFusion()}, {"mesh", "host-4x2"}});
  EXPECT_EQ(split.status, 200) << split.body;
  Reply tuned = Post("/v1/tune", {{"fusion", ZeroElementFusion()},
                                  {"target", "host"},
                                  {"budget", 2},
                                  {"wait", true},
                                  {"timeout_s", 120}});
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  EXPECT_EQ(tuned.Json()["job"]["state"], "done") << tuned.body;
  Reply measured = Post("/v1/query", {{"fusion", ZeroElementFusion()}, {"target", "host"}});
  EXPECT_EQ(measured.status, 200) << measured.body;
  EXPECT_EQ(measured.Json()["source"], "measured") << measured.body;
  EXPECT_EQ(Get("/healthz").status, 200);
}

TEST_F(ServiceTest, QueryFlagsAreCheckedWhateverTheDatabaseHolds) {
  StartServer();
  json wrong_predict = {{"fusion", TinyFusion()}, {"target", "host"}, {"predict", "str"}};
  json wrong_tune = {{"fusion", TinyFusion()}, {"target", "host"}, {"tune_if_missing", "str"}};
  auto expect_refused = [&](const char* when) {
    EXPECT_EQ(Post("/v1/query", wrong_predict).status, 400) << when;
    EXPECT_EQ(Post("/v1/query", wrong_tune).status, 400) << when;
    Reply batch = Post("/v1/query:batch", {{"queries", {wrong_predict, wrong_tune}}});
    ASSERT_EQ(batch.status, 200) << batch.body;
    EXPECT_EQ(batch.Json()["results"][0]["status"], 400) << when << batch.body;
    EXPECT_EQ(batch.Json()["results"][1]["status"], 400) << when << batch.body;
    // A malformed field of the batch itself refuses the batch, once.
    json query = {{"fusion", TinyFusion()}};
    for (const json& bad : {json{{"predict", "str"}}, json{{"tune_if_missing", 3}},
                            json{{"target", 7}}, json{{"target", "no-such-target"}}}) {
      json body = bad;
      body["queries"] = {query, query};
      Reply refused = Post("/v1/query:batch", body);
      EXPECT_EQ(refused.status, 400) << when << " " << bad.dump() << refused.body;
      EXPECT_FALSE(refused.Json().contains("results")) << refused.body;
    }
  };
  expect_refused("nothing measured");
  Reply tuned = Post("/v1/tune", {{"fusion", TinyFusion()},
                                  {"target", "host"},
                                  {"budget", 1},
                                  {"wait", true},
                                  {"timeout_s", 120}});
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  ASSERT_EQ(Post("/v1/query", {{"fusion", TinyFusion()}, {"target", "host"}}).status, 200);
  expect_refused("a measured result");
}

TEST_F(ServiceTest, HeadOnAGetRouteAnswersTheHeadersOnly) {
  StartServer();
  Reply get = Get("/healthz");
  Reply head = Client(port()).Send("HEAD", "/healthz");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty()) << head.body;
  EXPECT_EQ(head.headers["Content-Length"], std::to_string(get.body.size()));
  EXPECT_EQ(Client(port()).Send("HEAD", "/v1/devices").status, 200);
  EXPECT_EQ(Client(port()).Send("HEAD", "/v1/kernels").status, 200);
  Reply not_allowed = Client(port()).Send("HEAD", "/v1/query");
  EXPECT_EQ(not_allowed.status, 405);
  EXPECT_EQ(Client(port()).Send("PUT", "/healthz").headers["Allow"], "GET, HEAD");
}

TEST_F(ServiceTest, TheBearerSchemeIsMatchedInAnyCase) {
  ServerOptions options = Options();
  options.token = "s3cret-token";
  StartServer(options);
  auto devices = [&](const std::string& authorization) {
    return Client(port()).Send("GET", "/v1/devices", "", {{"Authorization", authorization}});
  };
  EXPECT_EQ(devices("bearer s3cret-token").status, 200);
  EXPECT_EQ(devices("BEARER s3cret-token").status, 200);
  EXPECT_EQ(devices("Bearer   s3cret-token  ").status, 200);
  EXPECT_EQ(devices("bearers3cret-token").status, 401);
  EXPECT_EQ(devices("basic s3cret-token").status, 401);
  EXPECT_EQ(devices("bearer s3cret-tokem").status, 401);
}

TEST_F(ServiceTest, AFusionOverTheInstructionLimitIsRefusedNamingTheLimit) {
  ServerOptions options = Options();
  options.max_instructions = 50;
  StartServer(options);
  std::string large = LongFusion(60);
  for (const char* route : {"/v1/query", "/v1/tune", "/v1/split"}) {
    json body = {{"fusion", large}, {"target", "host"}, {"predict", true}};
    if (std::string(route) == "/v1/split") body = {{"fusion", large}, {"mesh", "host-4x2"}};
    Reply refused = Post(route, body);
    EXPECT_EQ(refused.status, 422) << route << refused.body;
    EXPECT_NE(refused.body.find("limit of 50"), std::string::npos) << route << refused.body;
  }
  Reply batch = Post("/v1/query:batch", {{"queries", {{{"fusion", large}}}}});
  EXPECT_EQ(batch.Json()["results"][0]["status"], 422) << batch.body;
  EXPECT_EQ(Post("/v1/query", {{"fusion", LongFusion(40)}, {"predict", true}}).status, 200);
}

TEST_F(ServiceTest, HealthStaysFastWhileLargeFusionsParse) {
  ServerOptions options = Options();
  options.body_limit = 64u << 20;
  StartServer(options);
  // Two fusions of 200,000 instructions each, far over the default limit: each request
  // parses for a while before it is refused.
  std::string huge = json{{"fusion", LongFusion(200000)}, {"predict", true}}.dump();
  std::vector<std::future<int>> heavy;
  for (int i = 0; i < 2; ++i) {
    heavy.push_back(std::async(
        std::launch::async, [&] { return Client(port()).Send("POST", "/v1/query", huge).status; }));
  }
  double slowest = 0;
  Client health(port());
  for (int i = 0; i < 20; ++i) {
    auto start = Clock::now();
    EXPECT_EQ(health.Send("GET", "/healthz").status, 200);
    slowest = std::max(slowest, SecondsSince(start));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& status : heavy) EXPECT_EQ(status.get(), 422);
  EXPECT_LT(slowest, 0.1) << "the slowest /healthz took " << slowest * 1000 << " ms";
}

TEST_F(ServiceTest, CancellingAJobMidMeasurementTakesEffectWithinTwoSeconds) {
  WorkerFault fault(R"({"hang": {}})");  // every candidate hangs once it runs
  ServerOptions options = Options();
  options.measure.timeout_ms = 60000;
  StartServer(options);
  Reply submitted = Post(
      "/v1/tune",
      {{"fusion", TinyFusion(3)}, {"target", "host"}, {"budget", 4}, {"strategy", "exhaustive"}});
  ASSERT_EQ(submitted.status, 202) << submitted.body;
  std::string id = submitted.Json()["job"]["id"];
  WaitForJob(id, [](const json& job) { return job["state"] == "running"; });
  std::this_thread::sleep_for(std::chrono::seconds(2));  // compiled, now hanging in the worker
  auto start = Clock::now();
  Reply cancel = Delete("/v1/jobs/" + id);
  EXPECT_TRUE(cancel.status == 200 || cancel.status == 202) << cancel.body;
  json job = WaitForJob(
      id, [](const json& job) { return job["state"] == "cancelled"; }, 10);
  EXPECT_EQ(job["state"], "cancelled") << job.dump();
  EXPECT_LT(SecondsSince(start), 2.0);
}

TEST_F(ServiceTest, StoppingTheServerMidMeasurementTakesUnderTwoSeconds) {
  WorkerFault fault(R"({"hang": {}})");
  ServerOptions options = Options();
  options.measure.timeout_ms = 60000;
  StartServer(options);
  Reply submitted = Post("/v1/tune", {{"fusion", TinyFusion(4)}, {"target", "host"}});
  ASSERT_EQ(submitted.status, 202) << submitted.body;
  std::string id = submitted.Json()["job"]["id"];
  WaitForJob(id, [](const json& job) { return job["state"] == "running"; });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto start = Clock::now();
  StopServer();
  EXPECT_LT(SecondsSince(start), 2.0);
  // Queued again for the next server, and nothing stored for the interrupted candidate.
  auto store = db::SqliteStore::Open(Options().db_path);
  ASSERT_TRUE(store.has_value());
  auto stored = (*store)->GetJob(id);
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  EXPECT_EQ((**stored).state, db::JobState::kQueued);
  auto measured = (*store)->Measurements({});
  ASSERT_TRUE(measured.has_value());
  EXPECT_TRUE(measured->empty()) << measured->size() << " measurements stored";
}

// A job left `running` by a process that died is resumed once; left running a second time,
// it is failed with the reason and the server starts.
TEST_F(ServiceTest, AJobThatTakesItsProcessDownTwiceIsFailedAndTheServerStarts) {
  StartServer();
  Reply tuned = Post("/v1/tune", {{"fusion", TinyFusion(5)},
                                  {"target", "host"},
                                  {"budget", 1},
                                  {"wait", true},
                                  {"timeout_s", 120}});
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  std::string id = tuned.Json()["job"]["id"];
  StopServer();
  auto left_running = [&](int64_t unfinished_runs) {
    auto store = db::SqliteStore::Open(Options().db_path);
    ASSERT_TRUE(store.has_value());
    auto job = (*store)->GetJob(id);
    ASSERT_TRUE(job.has_value() && job->has_value());
    db::JobRecord record = **job;
    record.state = db::JobState::kRunning;  // as a process killed mid-job leaves it
    record.unfinished_runs = unfinished_runs;
    ASSERT_TRUE((*store)->PutJob(record).has_value());
  };
  left_running(0);
  StartServer();
  json resumed = WaitForJob(id, [](const json& job) { return job["state"] == "done"; });
  EXPECT_EQ(resumed["state"], "done") << resumed.dump();
  EXPECT_EQ(resumed["unfinished_runs"], 1) << resumed.dump();
  StopServer();
  left_running(1);
  StartServer();
  json failed = Get("/v1/jobs/" + id).Json();
  EXPECT_EQ(failed["state"], "failed") << failed.dump();
  EXPECT_NE(failed.value("error", "").find("2 times"), std::string::npos) << failed.dump();
  EXPECT_EQ(Get("/healthz").status, 200);
}

TEST_F(ServiceTest, MeshErrorsNameTheConfigsFolderNotTheInstallPath) {
  StartServer();
  std::string fusion = ReadFile(TILESMITH_TEST_DATA_DIR "/split_matmul.hlo");
  for (const json& mesh :
       {json("no-such-mesh"),
        json{
            {"device", "no_such_device"},
            {"axes", {{{"name", "i"}, {"size", 2}, {"bandwidth_gbps", 10}, {"latency_us", 1}}}}}}) {
    Reply refused = Post("/v1/split", {{"fusion", fusion}, {"mesh", mesh}});
    EXPECT_EQ(refused.status, 400) << refused.body;
    EXPECT_EQ(refused.body.find(TILESMITH_SOURCE_DIR), std::string::npos) << refused.body;
    EXPECT_EQ(refused.body.find("/configs"), std::string::npos) << refused.body;
  }
  Reply missing = Post("/v1/split", {{"fusion", fusion}});
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.body.find(TILESMITH_SOURCE_DIR), std::string::npos) << missing.body;
}

// Found by the API fuzzer: each was a 500 (the server stayed up).
TEST_F(ServiceTest, FuzzedSplitsAndNumbersGetAnswersNot500s) {
  StartServer();
  // A multi-output fusion: the per-device module shrinks its root tuple too.
  Reply tuple =
      Post("/v1/split", {{"fusion", ReadFile(TILESMITH_TEST_DATA_DIR "/split_tuple_root.hlo")},
                         {"mesh", "host-4x2"}});
  EXPECT_EQ(tuple.status, 200) << tuple.body;
  // A per-device reduce whose kept dims include one of size 1.
  Reply reduce =
      Post("/v1/split", {{"fusion", ReadFile(TILESMITH_TEST_DATA_DIR "/split_reduce.hlo")},
                         {"mesh", "host-4x2"},
                         {"in_specs", {"P('i')"}}});
  EXPECT_EQ(reduce.status, 200) << reduce.body;
  // An entry that computes besides the fusion: not splittable, and the client's to fix.
  std::string copying =
      "HloModule m\n\nf {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)\n}\n\n"
      "ENTRY main {\n  p = f32[8] parameter(0)\n  c = f32[8] copy(p)\n"
      "  ROOT r = f32[8] fusion(c), kind=kLoop, calls=f\n}\n";
  Reply copy = Post("/v1/split", {{"fusion", copying}, {"mesh", "host-4x2"}});
  EXPECT_EQ(copy.status, 400) << copy.body;
  Reply mesh_name = Post(
      "/v1/split",
      {{"fusion", copying},
       {"mesh",
        {{"name", 1},
         {"device", "host"},
         {"axes", {{{"name", "i"}, {"size", 4}, {"bandwidth_gbps", 20}, {"latency_us", 1}}}}}}});
  EXPECT_EQ(mesh_name.status, 400) << mesh_name.body;
  for (const char* route : {"/v1/query", "/v1/query:batch", "/v1/tune", "/v1/split"}) {
    Reply overflow = Client(port()).Send("POST", route, R"({"fusion": 1e999})");
    EXPECT_EQ(overflow.status, 400) << route << overflow.body;
  }
  EXPECT_EQ(Get("/healthz").status, 200);
}

}  // namespace
}  // namespace tilesmith::service::testing
