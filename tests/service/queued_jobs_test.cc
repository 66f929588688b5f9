// Fleet jobs: a server that queues POST /v1/tune as work units (--queue-jobs, the default on
// PostgreSQL) and a real agent (service/agent.h) that runs them, on SQLite and on a real
// PostgreSQL. The agent writes the job's progress and end; the server follows and answers.
#include <gtest/gtest.h>

#include <future>

#include "db/open_store.h"
#include "service/agent.h"
#include "service/targets.h"
#include "service_test_util.h"
#include "tests/db/store_factories.h"
#include "tuner/device.h"

namespace tilesmith::service::testing {
namespace {

using db::testing::StoreFactories;
using db::testing::StoreFactory;

json TuneRequest(int variant, int budget) {
  return {{"fusion", TinyFusion(variant)},
          {"target", "host"},
          {"budget", budget},
          {"strategy", "exhaustive"}};
}

class QueuedJobsTest : public ServiceTest, public ::testing::WithParamInterface<StoreFactory> {
 protected:
  void SetUp() override {
    if (std::string why = GetParam().unavailable(); !why.empty()) GTEST_SKIP() << why;
    location_ = GetParam().new_location(dir_);
    ASSERT_FALSE(location_.empty());
  }

  ServerOptions QueueOptions() const {
    ServerOptions options = Options();
    options.db_path = location_;
    options.data_dir = dir_.File("server-data");
    options.queue_jobs = true;
    options.run_agent = false;  // the tests run the agent themselves
    options.targets = {"host", "cuda:sm_90"};
    return options;
  }

  // Runs one agent for the host until the queue has nothing for it.
  AgentStats RunHostAgent() {
    AgentOptions options;
    options.name = "test-agent";
    auto targets = ResolveTargets({"host"}, tuner::DefaultDevicesDir());
    EXPECT_TRUE(targets.has_value());
    if (!targets) return {};
    options.targets = *targets;
    options.worker_binary = TILESMITH_CLI;
    options.data_dir = dir_.File("agent-data");
    options.compiler_version = TILESMITH_COMPILER_VERSION;
    options.compile_threads = 1;
    options.lease_ms = 20000;
    options.exit_when_idle = true;
    std::atomic<bool> stop = false;
    auto stats = RunAgent(location_, options, stop);
    EXPECT_TRUE(stats.has_value()) << stats.error().message;
    return stats ? *stats : AgentStats{};
  }

  std::vector<db::WorkUnit> UnitsOf(const std::string& job_id) {
    auto store = db::OpenStore(location_, db::StoreAccess::kReadWrite);
    EXPECT_TRUE(store.has_value());
    if (!store) return {};
    auto units = (*store)->ListUnits(job_id);
    EXPECT_TRUE(units.has_value());
    return units ? *units : std::vector<db::WorkUnit>{};
  }

  std::string location_;
};

TEST_P(QueuedJobsTest, TheServerQueuesTheJobAndAnAgentRunsItToTheEnd) {
  StartServer(QueueOptions());
  Reply accepted = Post("/v1/tune", TuneRequest(0, 4));
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  std::string id = accepted.Json()["job"]["id"];
  json job = Get("/v1/jobs/" + id).Json();
  EXPECT_EQ(job["state"], "queued");
  EXPECT_NE(job["progress"]["stage"].get<std::string>().find("no agent"), std::string::npos)
      << job.dump();
  std::vector<db::WorkUnit> units = UnitsOf(id);
  ASSERT_EQ(units.size(), 1u);
  EXPECT_FALSE(units[0].match_prefix) << "a device this server has is asked for exactly";
  EXPECT_EQ(units[0].device_key, job["device"]);
  EXPECT_TRUE(units[0].payload["service_job"].get<bool>());

  // A second identical request shares the job, even through the database.
  Reply again = Post("/v1/tune", TuneRequest(0, 4));
  ASSERT_EQ(again.status, 202);
  EXPECT_EQ(again.Json()["job"]["id"], id);
  EXPECT_TRUE(again.Json()["shared"].get<bool>());

  AgentStats stats = RunHostAgent();
  EXPECT_EQ(stats.claimed, 1);
  EXPECT_EQ(stats.done, 1);
  job = Get("/v1/jobs/" + id).Json();
  ASSERT_EQ(job["state"], "done") << job.dump();
  EXPECT_EQ(job["progress"]["measured"], 4);
  EXPECT_EQ(job["progress"]["agent"], "test-agent");
  EXPECT_FALSE(job["result"]["best"].is_null()) << job.dump();
  EXPECT_EQ(job["result"]["device"], units[0].device_key);
  Reply query = Post("/v1/query", {{"fusion", TinyFusion(0)}, {"target", "host"}});
  ASSERT_EQ(query.status, 200) << query.body;
  EXPECT_EQ(query.Json()["source"], "measured") << query.body;
  EXPECT_EQ(UnitsOf(id)[0].state, db::UnitState::kDone);
}

TEST_P(QueuedJobsTest, AWaitingRequestIsAnsweredWhenTheAgentFinishes) {
  StartServer(QueueOptions());
  json request = TuneRequest(1, 3);
  request["wait"] = true;
  request["timeout_s"] = 60;
  auto waiting = std::async(
      std::launch::async, [&] { return Client(port()).Send("POST", "/v1/tune", request.dump()); });
  ASSERT_TRUE(WaitFor(
      [&] {
        return Get("/metrics").body.find("tilesmith_units{state=\"queued\"} 1") !=
               std::string::npos;
      },
      30))
      << Get("/metrics").body;
  RunHostAgent();
  Reply answered = waiting.get();
  ASSERT_EQ(answered.status, 200) << answered.body;
  EXPECT_EQ(answered.Json()["job"]["state"], "done");
  EXPECT_EQ(answered.Json()["job"]["progress"]["measured"], 3);
}

TEST_P(QueuedJobsTest, ACancelledQueuedJobIsNeverRun) {
  StartServer(QueueOptions());
  Reply accepted = Post("/v1/tune", TuneRequest(2, 4));
  ASSERT_EQ(accepted.status, 202);
  std::string id = accepted.Json()["job"]["id"];
  Reply cancelled = Delete("/v1/jobs/" + id);
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  EXPECT_EQ(cancelled.Json()["job"]["state"], "cancelled");
  std::vector<db::WorkUnit> units = UnitsOf(id);
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0].state, db::UnitState::kFailed);
  EXPECT_EQ(units[0].error, "the job was cancelled");
  EXPECT_EQ(RunHostAgent().claimed, 0) << "an agent ran a cancelled job";
  EXPECT_EQ(Delete("/v1/jobs/" + id).status, 409) << "cancelled twice";
}

TEST_P(QueuedJobsTest, ARunningJobCancelledStopsItsAgentAndKeepsWhatItMeasured) {
  ServerOptions options = QueueOptions();
  options.measure.budget_ms = 15;
  options.batch_size = 1;
  StartServer(options);
  Reply accepted = Post("/v1/tune", TuneRequest(3, 0));  // the whole space: dozens of configs
  ASSERT_EQ(accepted.status, 202);
  std::string id = accepted.Json()["job"]["id"];
  auto agent = std::async(std::launch::async, [&] { return RunHostAgent(); });
  json job = WaitForJob(id, [](const json& job) { return job["progress"]["measured"] >= 2; });
  ASSERT_EQ(job["state"], "running") << job.dump();
  Reply cancelling = Delete("/v1/jobs/" + id);
  ASSERT_EQ(cancelling.status, 202) << cancelling.body;
  AgentStats stats = agent.get();
  EXPECT_EQ(stats.done, 1);
  job = Get("/v1/jobs/" + id).Json();
  EXPECT_EQ(job["state"], "cancelled") << job.dump();
  std::vector<db::WorkUnit> units = UnitsOf(id);
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0].state, db::UnitState::kDone);
  EXPECT_TRUE(units[0].result.value("cancelled", false));
  int64_t measured = units[0].result.value("measured", int64_t{0});
  EXPECT_GE(measured, 2) << "what the cancelled job measured was dropped";
  EXPECT_LT(measured, units[0].result["space"]["size"].get<int64_t>()) << "it was not stopped";
}

TEST_P(QueuedJobsTest, AJobForADeviceTheServerLacksWaitsForAnyAgentOfItsArchitecture) {
  StartServer(QueueOptions());
  json request = TuneRequest(4, 4);
  request["target"] = "cuda:sm_90";
  Reply accepted = Post("/v1/tune", request);
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  std::string id = accepted.Json()["job"]["id"];
  std::vector<db::WorkUnit> units = UnitsOf(id);
  ASSERT_EQ(units.size(), 1u);
  EXPECT_TRUE(units[0].match_prefix);
  EXPECT_EQ(units[0].device_key, "cuda:sm_90, ");
  EXPECT_EQ(RunHostAgent().claimed, 0) << "a host agent took a GPU job";
  json any_host = TuneRequest(4, 4);
  any_host["any_device"] = true;
  Reply host_job = Post("/v1/tune", any_host);
  ASSERT_EQ(host_job.status, 202) << host_job.body;
  std::vector<db::WorkUnit> host_units = UnitsOf(host_job.Json()["job"]["id"]);
  ASSERT_EQ(host_units.size(), 1u);
  EXPECT_TRUE(host_units[0].match_prefix) << "\"any_device\" was not honoured";
  EXPECT_EQ(Post("/v1/tune", json{{"fusion", TinyFusion(4)}, {"any_device", 1}}).status, 400);
  json job = Get("/v1/jobs/" + id).Json();
  EXPECT_EQ(job["state"], "queued");
  EXPECT_NE(job["progress"]["stage"].get<std::string>().find("cuda:sm_90"), std::string::npos)
      << job.dump();
}

INSTANTIATE_TEST_SUITE_P(Stores, QueuedJobsTest, ::testing::ValuesIn(StoreFactories()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tilesmith::service::testing
