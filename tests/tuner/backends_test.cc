// The backends: each target kind's Build gives typed stats from a real compile (the host's
// executed code; the CUDA toolkit's cubin, which needs no GPU), the stats keep the stored
// JSON's field names both ways, and the worker's command line is built in one place and
// starts a worker that measures.
#include <gtest/gtest.h>

#include "compiler/emitters/emitter_registry.h"
#include "tests/tuner/tuner_test_util.h"
#include "tuner/backends/backend.h"
#include "tuner/layouts.h"
#include "tuner/space.h"

namespace tilesmith::tuner {
namespace {

TEST(BuildStatsTest, CubinStatsRoundTripUnderTheStoredNames) {
  BuildStats stats;
  stats.compile_ms = 12.5;
  stats.threads_per_block = 256;
  stats.blocks = 1024;
  stats.usage.registers = 32;
  stats.usage.shared_bytes = 4096;
  stats.usage.spill_bytes = 8;
  stats.worker_compile_ms = 3.25;
  nlohmann::json json = stats.ToJson();
  EXPECT_EQ(json, nlohmann::json::parse(R"({"compile_ms": 12.5, "threads_per_block": 256,
      "blocks": 1024, "registers": 32, "shared_bytes": 4096, "spill_bytes": 8,
      "worker_compile_ms": 3.25})"));
  BuildStats back = BuildStats::FromJson(json);
  EXPECT_EQ(back.ToJson(), json);
  EXPECT_EQ(back.usage.registers, 32);
  EXPECT_EQ(back.threads_per_block, 256);
  EXPECT_EQ(back.worker_compile_ms, 3.25);
}

TEST(BuildStatsTest, HostStatsRoundTripAndUnknownFieldsStayOut) {
  BuildStats stats;
  stats.compile_ms = 2;
  stats.threads_per_block = 128;
  stats.blocks = 4;
  stats.usage.executed_instructions = 100.5;
  stats.usage.executed_memory = 20;
  nlohmann::json json = stats.ToJson();
  EXPECT_FALSE(json.contains("registers"));
  EXPECT_FALSE(json.contains("worker_compile_ms"));
  EXPECT_EQ(json["executed_instructions"], 100.5);
  EXPECT_EQ(BuildStats::FromJson(json).ToJson(), json);
  // A failed build's stats (nothing known) store as an empty object, as they always have.
  EXPECT_EQ(BuildStats{}.ToJson(), nlohmann::json::object());
  // Stored rows from elsewhere: non-numbers count as unknown, never as an error.
  BuildStats odd = BuildStats::FromJson({{"registers", "many"}, {"blocks", 3}});
  EXPECT_EQ(odd.usage.registers, 0);
  EXPECT_EQ(odd.blocks, 3);
  EXPECT_EQ(BuildStats::FromJson(nullptr).ToJson(), nlohmann::json::object());
}

struct Built {
  BuildResult result;
  std::string kind;
};

Built BuildFirstCandidate(const std::string& target) {
  auto module = testing::LoadModule(testing::GeluPath());
  auto device = ResolveDevice(target, "", DefaultDevicesDir());
  EXPECT_TRUE(device.has_value());
  auto space = BuildSpace(*module, device->info, {});
  EXPECT_TRUE(space.has_value());
  std::unique_ptr<Backend> backend = MakeBackend(*device);
  const Candidate& candidate = space->candidates[space->default_index];
  return {backend->BuildCandidate(space->AnalysisOf(candidate), EmitterConfig(candidate.config)),
          std::string(backend->kind())};
}

TEST(BackendTest, TheHostBuildCountsWhatEachBlockExecutes) {
  Built built = BuildFirstCandidate("host");
  EXPECT_EQ(built.kind, "host");
  ASSERT_TRUE(built.result.ok) << built.result.message;
  const BuildStats& stats = built.result.stats;
  EXPECT_GT(stats.compile_ms, 0);
  EXPECT_GT(stats.threads_per_block, 0);
  EXPECT_GT(stats.blocks, 0);
  EXPECT_TRUE(stats.usage.has_host_code());
  EXPECT_FALSE(stats.usage.has_cubin());
  EXPECT_GT(stats.usage.executed_memory, 0);
}

TEST(BackendTest, TheCudaBuildReportsTheCubinsResources) {
  Built built = BuildFirstCandidate("cuda:sm_90");
  EXPECT_EQ(built.kind, "cuda");
  ASSERT_TRUE(built.result.ok) << built.result.message;
  const BuildStats& stats = built.result.stats;
  EXPECT_GT(stats.compile_ms, 0);
  EXPECT_GT(stats.threads_per_block, 0);
  EXPECT_GT(stats.usage.registers, 0);
  EXPECT_GE(stats.usage.spill_bytes, 0);
  EXPECT_FALSE(stats.usage.has_host_code());
  nlohmann::json json = stats.ToJson();
  EXPECT_EQ(json["registers"], stats.usage.registers);
  EXPECT_TRUE(json.contains("shared_bytes"));
}

TEST(BackendTest, OnlyTheHostIsTimedWithoutADeviceFoundAtRunTime) {
  auto host = MakeBackend(*ResolveDevice("host", "", DefaultDevicesDir()));
  auto gpu = MakeBackend(*ResolveDevice("cuda:sm_90", "", DefaultDevicesDir()));
  CudaDriverProbe none;
  CudaDriverProbe one_gpu;
  one_gpu.loaded = true;
  one_gpu.device_count = 1;
  EXPECT_TRUE(host->MeasuresWithoutDevice());
  EXPECT_TRUE(host->CanMeasure(none));
  EXPECT_FALSE(gpu->MeasuresWithoutDevice());
  EXPECT_FALSE(gpu->CanMeasure(none));
  EXPECT_TRUE(gpu->CanMeasure(one_gpu));
}

TEST(WorkerCommandTest, NamesTheFusionTargetDeviceAndInputFlags) {
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  std::vector<std::string> flags = {"--format", "hlo"};
  EXPECT_EQ(
      WorkerCommand("/bin/tilesmith", "/tmp/f.hlo", host, flags),
      (std::vector<std::string>{"/bin/tilesmith", "--log-level", "warning", "worker", "/tmp/f.hlo",
                                "--target", "host", "--device", host.id, "--format", "hlo"}));
}

TEST(WorkerCommandTest, StartsAWorkerTheWorkerRunnerMeasuresWith) {
  auto module = testing::LoadModule(testing::GeluPath());
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  auto space = BuildSpace(*module, host.info, {});
  ASSERT_TRUE(space.has_value());
  std::unique_ptr<Backend> backend = MakeBackend(host);
  MeasureOptions options;
  options.warmup_ms = 1;
  options.budget_ms = 3;
  std::unique_ptr<Runner> runner =
      backend->MakeWorkerRunner(WorkerCommand(TILESMITH_CLI, testing::GeluPath(), host), options);
  ASSERT_TRUE(runner->measures());
  const Candidate& candidate = space->candidates[space->default_index];
  nlohmann::json emitter_config = EmitterConfig(candidate.config);
  BuildResult build = backend->BuildCandidate(space->AnalysisOf(candidate), emitter_config);
  ASSERT_TRUE(build.ok) << build.message;
  RunResult run =
      runner->Run({candidate.config, space->AnalysisOf(candidate), emitter_config, build.stats});
  ASSERT_EQ(run.status, db::TrialStatus::kOk) << run.message;
  ASSERT_TRUE(run.timing.has_value());
  EXPECT_GT(run.timing->median_us, 0);
  EXPECT_FALSE(run.predicted_us.has_value());
  EXPECT_EQ(runner->worker_starts(), 1);
}

}  // namespace
}  // namespace tilesmith::tuner
