// The host measurer against a real `tilesmith worker` process: verified timings, and every
// failure class a candidate can cause — a crash, a hang, a write outside its buffers, a
// wrong output — recorded as such while the next candidate still runs.
#include "tuner/measurer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "tests/tuner/tuner_test_util.h"
#include "tuner/cuda_driver.h"
#include "tuner/session.h"
#include "tuner/worker.h"

namespace tilesmith::tuner {
namespace {

const nlohmann::json kConfig = {
    {"blocks_y", 1}, {"chunks", 1}, {"threads_per_block", 128}, {"vector", 8}};
const nlohmann::json kOtherConfig = {
    {"blocks_y", 1}, {"chunks", 2}, {"threads_per_block", 256}, {"vector", 4}};

MeasureOptions Quick() {
  MeasureOptions options;
  options.warmup_ms = 1;
  options.budget_ms = 3;
  options.timeout_ms = 1500;
  return options;
}

// Sets TILESMITH_WORKER_FAULT for the workers this test starts.
class FaultScope {
 public:
  explicit FaultScope(const std::string& faults) {
    setenv("TILESMITH_WORKER_FAULT", faults.c_str(), 1);
  }
  ~FaultScope() { unsetenv("TILESMITH_WORKER_FAULT"); }
};

TEST(SummarizeTest, QuantilesOfTheRawTimes) {
  db::Timing timing = Summarize({5, 1, 3, 2, 4});
  EXPECT_DOUBLE_EQ(timing.median_us, 3);
  EXPECT_DOUBLE_EQ(timing.min_us, 1);
  EXPECT_DOUBLE_EQ(timing.max_us, 5);
  EXPECT_DOUBLE_EQ(timing.p20_us, 1.8);
  EXPECT_DOUBLE_EQ(timing.p80_us, 4.2);
  EXPECT_EQ(timing.times_us, (std::vector<double>{5, 1, 3, 2, 4}));  // kept in order
}

// How a CUDA worker's answer names its timing, and how a trial stores it beside its times.
TEST(TimingFiguresTest, AnAnswersMethodAndMediansAreStoredWithTheTrial) {
  nlohmann::json answer = {{"status", "ok"},
                           {"times_us", {1.0, 3.0, 2.0}},
                           {"kernel_times_us", {1.0, 3.0, 2.0}},
                           {"event_times_us", {3.5, 4.0, 5.5, 3.0}},
                           {"timing_method", "cupti-kernel"}};
  TimingFigures figures = TimingFigures::FromAnswer(answer);
  EXPECT_EQ(figures.method, "cupti-kernel");
  EXPECT_EQ(figures.kernel_us, 2.0);
  EXPECT_EQ(figures.event_us, 3.75);
  EXPECT_TRUE(figures.fallback.empty());
  nlohmann::json stats = {{"compile_ms", 12.5}};
  figures.AddTo(stats);
  EXPECT_EQ(stats, (nlohmann::json{{"compile_ms", 12.5},
                                   {"timing_method", "cupti-kernel"},
                                   {"kernel_us", 2.0},
                                   {"event_us", 3.75}}));
  TimingFigures stored = TimingFigures::FromStats(stats);
  EXPECT_EQ(stored.method, figures.method);
  EXPECT_EQ(stored.kernel_us, figures.kernel_us);
  EXPECT_EQ(stored.event_us, figures.event_us);

  db::MeasurementRecord trial;
  trial.config = kConfig;
  trial.timing = Summarize({1.0, 3.0, 2.0});
  trial.compile_stats = stats;
  TrialSummary summary = SummaryOf(trial);
  EXPECT_EQ(summary.median_us, 2.0);
  EXPECT_EQ(summary.timing_method, "cupti-kernel");
  EXPECT_EQ(summary.event_us, 3.75);
}

TEST(TimingFiguresTest, AFallbackToEventsKeepsItsReasonAndHostTimesNameNoMethod) {
  nlohmann::json answer = {{"status", "ok"},
                           {"times_us", {4.0}},
                           {"event_times_us", {4.0}},
                           {"timing_method", "cuda-events"},
                           {"timing_fallback", "no libcupti here"}};
  TimingFigures figures = TimingFigures::FromAnswer(answer);
  EXPECT_EQ(figures.method, "cuda-events");
  EXPECT_FALSE(figures.kernel_us);
  EXPECT_EQ(figures.event_us, 4.0);
  EXPECT_EQ(figures.fallback, "no libcupti here");
  nlohmann::json stats = nlohmann::json::object();
  figures.AddTo(stats);
  EXPECT_EQ(stats, (nlohmann::json{{"timing_method", "cuda-events"}, {"event_us", 4.0}}));

  TimingFigures host = TimingFigures::FromAnswer({{"status", "ok"}, {"times_us", {4.0}}});
  EXPECT_EQ(host, TimingFigures{});
  nlohmann::json untouched = {{"compile_ms", 1.0}};
  host.AddTo(untouched);
  EXPECT_EQ(untouched, (nlohmann::json{{"compile_ms", 1.0}}));
  EXPECT_EQ(TimingFigures::FromStats(untouched), TimingFigures{});
}

TEST(BufferPlacementTest, BuffersStartOnDistinctCacheLinesOfAPage) {
  EXPECT_EQ(BufferPageOffset(0), 0);
  std::set<int64_t> offsets;
  for (int64_t position = 0; position < 64; ++position) {
    int64_t offset = BufferPageOffset(position);
    EXPECT_EQ(offset % 64, 0) << position;
    EXPECT_LT(offset, kBufferPageBytes) << position;
    offsets.insert(offset);
  }
  EXPECT_EQ(offsets.size(), 64u) << "no two of a kernel's first 64 buffers alias 4 KiB apart";
  EXPECT_EQ(kRedZoneBytes % kBufferPageBytes, 0);
  EXPECT_EQ(RoundUpToPages(1), kBufferPageBytes);
  EXPECT_EQ(RoundUpToPages(kBufferPageBytes), kBufferPageBytes);
  EXPECT_EQ(RoundUpToPages(kBufferPageBytes + 1), 2 * kBufferPageBytes);
}

TEST(HostMeasurerTest, AVerifiedCandidateHasTimesWithinItsBudget) {
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  MeasureOptions options = Quick();
  options.flush_bytes = 1 << 20;
  options.min_reps = 5;
  WorkerResult result = measurer.Measure(kConfig, options);
  ASSERT_EQ(result.status, db::TrialStatus::kOk) << result.message;
  EXPECT_GE(result.times_us.size(), 5u);
  for (double time : result.times_us) EXPECT_GT(time, 0);
  ASSERT_TRUE(result.verification_error.has_value());
  EXPECT_LT(*result.verification_error, 1e-3);
  EXPECT_GT(result.compile_ms, 0);
  EXPECT_EQ(result.figures, TimingFigures{});  // the host's own clock: no CUDA method
  // The same worker serves the next candidate.
  EXPECT_EQ(measurer.Measure(kOtherConfig, options).status, db::TrialStatus::kOk);
  EXPECT_EQ(measurer.starts(), 1);
}

// Evicting the config's own buffers (256 KiB of GELU in and out) costs far less than
// overwriting 256 MiB, so the same budget holds more repetitions; both start from memory.
// Three 256 MiB writes outlast the 20 ms budget on any machine writing under 38 GB/s, and
// even a repetition slowed to 3 ms by a busy second core leaves the evicted side 6 or more.
TEST(HostMeasurerTest, EvictingTheBuffersFitsMoreRepetitionsThanOverwritingTheCache) {
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  MeasureOptions options = Quick();
  options.budget_ms = 20;
  options.flush_bytes = int64_t{256} << 20;
  options.flush = "cache";
  WorkerResult overwritten = measurer.Measure(kConfig, options);
  ASSERT_EQ(overwritten.status, db::TrialStatus::kOk) << overwritten.message;
  options.flush = "buffers";
  WorkerResult evicted = measurer.Measure(kConfig, options);
  ASSERT_EQ(evicted.status, db::TrialStatus::kOk) << evicted.message;
  // At least the minimum of three; a fast machine overwrites 256 MiB in 5 ms and fits four.
  EXPECT_GE(overwritten.times_us.size(), 3u);
  EXPECT_GT(evicted.times_us.size(), 2 * overwritten.times_us.size());
}

TEST(HostMeasurerTest, ACrashIsClassifiedAndTheWorkerRestarted) {
  FaultScope fault(R"({"crash": {"threads_per_block": 128}})");
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  WorkerResult crashed = measurer.Measure(kConfig, Quick());
  EXPECT_EQ(crashed.status, db::TrialStatus::kCrash);
  EXPECT_NE(crashed.message.find("SEGV"), std::string::npos) << crashed.message;
  EXPECT_TRUE(crashed.restarted);
  WorkerResult next = measurer.Measure(kOtherConfig, Quick());
  EXPECT_EQ(next.status, db::TrialStatus::kOk) << next.message;
  EXPECT_EQ(measurer.starts(), 2);
}

// A worker killed from outside (an operator's SIGKILL, the OOM killer) says nothing about
// the candidate: it is run again, and never stored as a compile failure.
TEST(HostMeasurerTest, AWorkerKilledFromOutsideOnceIsRetriedAndMeasured) {
  std::string marker = ::testing::TempDir() + "/killed_once_" + std::to_string(getpid());
  std::remove(marker.c_str());
  setenv("TILESMITH_WORKER_FAULT_MARKER", marker.c_str(), 1);
  FaultScope fault(R"({"killed_once": {"threads_per_block": 128}})");
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  WorkerResult result = measurer.Measure(kConfig, Quick());
  unsetenv("TILESMITH_WORKER_FAULT_MARKER");
  EXPECT_EQ(result.status, db::TrialStatus::kOk) << result.message;
  EXPECT_TRUE(result.restarted);
  EXPECT_EQ(measurer.starts(), 2);
  std::remove(marker.c_str());
}

TEST(HostMeasurerTest, AWorkerKilledFromOutsideTwiceIsACrashNotACompileFailure) {
  FaultScope fault(R"({"killed": {"threads_per_block": 128}})");
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  WorkerResult result = measurer.Measure(kConfig, Quick());
  EXPECT_EQ(result.status, db::TrialStatus::kCrash) << result.message;
  EXPECT_NE(result.message.find("KILL"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("killed from outside twice"), std::string::npos) << result.message;
  EXPECT_EQ(measurer.starts(), 2);
  WorkerResult next = measurer.Measure(kOtherConfig, Quick());
  EXPECT_EQ(next.status, db::TrialStatus::kOk) << next.message;
}

TEST(HostMeasurerTest, AHangTimesOutOnExecutionTimeOnly) {
  FaultScope fault(R"({"hang": {"threads_per_block": 128}})");
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  MeasureOptions options = Quick();
  options.timeout_ms =
      1000;  // less than starting a worker and compiling may take on a busy machine
  auto start = std::chrono::steady_clock::now();
  WorkerResult hung = measurer.Measure(kConfig, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(hung.status, db::TrialStatus::kTimeout) << hung.message;
  EXPECT_NE(hung.message.find("after execution started"), std::string::npos) << hung.message;
  EXPECT_LT(seconds, 20);
  // The fresh worker compiles and runs the next one, its start-up not counted as execution.
  WorkerResult next = measurer.Measure(kOtherConfig, options);
  EXPECT_EQ(next.status, db::TrialStatus::kOk) << next.message;
}

TEST(HostMeasurerTest, AWriteOutsideTheOutputIsARedZoneFailure) {
  FaultScope fault(R"({"red_zone": {"vector": 8}})");
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  WorkerResult result = measurer.Measure(kConfig, Quick());
  EXPECT_EQ(result.status, db::TrialStatus::kRedZone) << result.message;
  EXPECT_TRUE(result.times_us.empty());
  EXPECT_EQ(measurer.Measure(kOtherConfig, Quick()).status, db::TrialStatus::kOk);
}

TEST(HostMeasurerTest, AWrongOutputIsStoredAsWrongNeverAsFast) {
  FaultScope fault(R"({"wrong_result": {"chunks": 1}})");
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  WorkerResult result = measurer.Measure(kConfig, Quick());
  EXPECT_EQ(result.status, db::TrialStatus::kWrongResult) << result.message;
  EXPECT_TRUE(result.times_us.empty());
  EXPECT_NE(result.message.find("differ from the reference"), std::string::npos);
}

TEST(HostMeasurerTest, LargeOutputsAreCheckedAgainstTheFirstVerifiedCandidate) {
  testing::TempDir dir;
  MeasureOptions options = Quick();
  options.reference = dir.path() + "/reference";
  {
    HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
    WorkerResult first = measurer.Measure(kConfig, options);
    ASSERT_EQ(first.status, db::TrialStatus::kOk) << first.message;
    EXPECT_TRUE(std::filesystem::exists(options.reference + "/out0.npy"));
    EXPECT_EQ(measurer.Measure(kOtherConfig, options).status, db::TrialStatus::kOk);
  }
  // A later worker compares with the stored reference, so a wrong candidate is caught.
  FaultScope fault(R"({"wrong_result": {"chunks": 2}})");
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  EXPECT_EQ(measurer.Measure(kOtherConfig, options).status, db::TrialStatus::kWrongResult);
}

TEST(HostMeasurerTest, AConfigTheEmitterRejectsIsACompileFailure) {
  HostMeasurer measurer(testing::WorkerArgv(testing::GeluPath()));
  WorkerResult result = measurer.Measure({{"threads_per_block", 33}}, Quick());
  EXPECT_EQ(result.status, db::TrialStatus::kCompile);
  EXPECT_NE(result.message.find("threads_per_block=33"), std::string::npos) << result.message;
}

}  // namespace
}  // namespace tilesmith::tuner

namespace tilesmith::tuner {
namespace {

TEST(CudaWorkerTest, WithoutADriverACandidateFailsToLaunchSayingSoAndTheWorkerEnds) {
  if (ProbeCudaDriver().loaded) GTEST_SKIP() << "a CUDA driver is present here";
  std::vector<std::string> argv = testing::WorkerArgv(testing::GeluPath());
  argv.insert(argv.end(), {"--target", "cuda:sm_90"});
  HostMeasurer measurer(argv);
  WorkerResult result = measurer.Measure(kConfig, Quick());
  EXPECT_EQ(result.status, db::TrialStatus::kLaunch);
  EXPECT_NE(result.message.find("no CUDA driver"), std::string::npos) << result.message;
  EXPECT_GT(result.compile_ms, 0);  // the cubin was built before the launch failed
  EXPECT_TRUE(result.restarted);    // a CUDA failure ends the worker
  EXPECT_EQ(measurer.Measure(kConfig, Quick()).status, db::TrialStatus::kLaunch);
  EXPECT_EQ(measurer.starts(), 2);
}

}  // namespace
}  // namespace tilesmith::tuner
