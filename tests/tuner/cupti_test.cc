// CUPTI kernel timing without a GPU: the toolkit's libcupti is loaded and every function the
// recorder calls resolves; activity buffers built from cupti_activity.h's own record structs
// are read through CUPTI's own record walker; and where CUPTI cannot record (no driver
// here) the CUDA timing falls back to events and says why.
#include "tuner/cupti.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "tuner/cuda_driver.h"
#include "tuner/cuda_measure.h"

#if TILESMITH_HAVE_CUPTI_HEADERS
#include <cupti_activity.h>
#endif

namespace tilesmith::tuner {
namespace {

// Whether a libcupti file is where ProbeCupti looks for it on disk (the toolkit is here).
bool ToolkitHasLibcupti() {
  for (const std::string& candidate : CuptiCandidates()) {
    std::error_code error;
    if (candidate.starts_with('/') && std::filesystem::exists(candidate, error)) return true;
  }
  return false;
}

TEST(CuptiLoaderTest, FindsTheToolkitsLibcuptiAndResolvesEveryFunctionItCalls) {
  if (!ToolkitHasLibcupti()) GTEST_SKIP() << "no libcupti in the CUDA toolkit here";
  CuptiProbe probe = ProbeCupti();
  // RTLD_NOW: every symbol resolved at load, so a loaded probe has all of them.
  EXPECT_TRUE(probe.loaded) << probe.message;
  EXPECT_NE(probe.path.find("libcupti.so"), std::string::npos) << probe.path;
  EXPECT_NE(probe.message.find(probe.path), std::string::npos) << probe.message;
}

TEST(CuptiLoaderTest, AMissingLibraryIsNamedInTheMessage) {
  CuptiProbe probe = ProbeCuptiAmong({"/nonexistent/cuda/lib64/libcupti.so.13"});
  EXPECT_FALSE(probe.loaded);
  EXPECT_NE(probe.message.find("no libcupti here"), std::string::npos) << probe.message;
  EXPECT_NE(probe.message.find("/nonexistent/cuda/lib64/libcupti.so.13"), std::string::npos)
      << probe.message;
}

TEST(CuptiLoaderTest, ALibraryWithoutTheActivityApiIsRefusedNamingTheFunction) {
  CuptiProbe probe = ProbeCuptiAmong({"libm.so.6"});
  EXPECT_FALSE(probe.loaded);
  EXPECT_NE(probe.message.find("lacks cuptiActivityRegisterCallbacks"), std::string::npos)
      << probe.message;
}

TEST(CuptiLoaderTest, TheEnvironmentVariableIsTheOnlyPlaceLookedAtWhenSet) {
  setenv("TILESMITH_CUPTI", "/opt/elsewhere/libcupti.so", 1);
  std::vector<std::string> candidates = CuptiCandidates();
  unsetenv("TILESMITH_CUPTI");
  EXPECT_EQ(candidates, std::vector<std::string>{"/opt/elsewhere/libcupti.so"});
  EXPECT_NE(std::find(CuptiCandidates().begin(), CuptiCandidates().end(),
                      "/usr/local/cuda/lib64/libcupti.so.13"),
            CuptiCandidates().end());
}

// Where CUPTI cannot record kernels (no driver here), kernel timing falls back to events with
// the reason; asked for events, nothing is tried and nothing is said.
TEST(CudaTimingTest, WithoutADriverKernelTimingFallsBackToEventsSayingWhy) {
  if (ProbeCudaDriver().loaded) GTEST_SKIP() << "a CUDA driver is present here";
  CudaTiming timing = ChooseCudaTiming(true);
  EXPECT_EQ(timing.recorder, nullptr);
  EXPECT_FALSE(timing.fallback.empty());
  if (ProbeCupti().loaded) {
    // The library loads and takes the callbacks; enabling kernel activity is what fails.
    EXPECT_NE(timing.fallback.find("cuptiActivityEnable"), std::string::npos) << timing.fallback;
    auto recorder = KernelActivityRecorder::Create();
    ASSERT_TRUE(recorder) << recorder.error().message;
    auto began = (*recorder)->Begin();
    ASSERT_FALSE(began);
    EXPECT_NE(began.error().message.find("CUptiResult"), std::string::npos)
        << began.error().message;
    EXPECT_FALSE((*recorder)->End());  // nothing to end
  } else {
    EXPECT_NE(timing.fallback.find("no libcupti here"), std::string::npos) << timing.fallback;
  }
  CudaTiming events = ChooseCudaTiming(false);
  EXPECT_EQ(events.recorder, nullptr);
  EXPECT_TRUE(events.fallback.empty());
}

TEST(ActivityParserTest, WithoutLibcuptiABufferCannotBeReadAndTheErrorSaysSo) {
  if (ProbeCupti().loaded) GTEST_SKIP() << "libcupti is here";
  std::vector<uint8_t> buffer(64);
  ActivityTally tally;
  auto read = ReadActivityBuffer(buffer, 0, 0, tally);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("libcupti"), std::string::npos);
}

TEST(ActivityParserTest, DurationsNeedOneTimedRecordPerLaunchAndNoneDropped) {
  ActivityTally tally;
  tally.kernels = {{5, 1000, 3000, "k"}, {3, 100, 600, "k"}, {4, 700, 900, "other"}};
  auto durations = KernelDurationsUs(tally, "k", 2);
  ASSERT_TRUE(durations) << durations.error().message;
  EXPECT_EQ(*durations, (std::vector<double>{0.5, 2.0}));  // by correlation id: 3, then 5
  auto short_one = KernelDurationsUs(tally, "k", 3);
  ASSERT_FALSE(short_one);
  EXPECT_NE(short_one.error().message.find("CUPTI timed 2 of 3 launches of k"), std::string::npos)
      << short_one.error().message;
  tally.dropped = 4;
  auto dropped = KernelDurationsUs(tally, "k", 2);
  ASSERT_FALSE(dropped);
  EXPECT_NE(dropped.error().message.find("4 records dropped"), std::string::npos)
      << dropped.error().message;
  ActivityTally backwards;
  backwards.kernels = {{1, 900, 800, "k"}};
  EXPECT_FALSE(KernelDurationsUs(backwards, "k", 1));
}

#if TILESMITH_HAVE_CUPTI_HEADERS

// A buffer of CUPTI activity records, laid out as CUPTI lays them out: each record's struct
// (cupti_activity.h) one after another, 8-byte aligned.
class ActivityBuffer {
 public:
  template <typename Record>
  void Add(const Record& record) {
    static_assert(sizeof(Record) % 8 == 0);
    size_t at = bytes_.size();
    bytes_.resize(at + sizeof(Record));
    std::memcpy(bytes_.data() + at, &record, sizeof(Record));
  }
  std::span<const uint8_t> bytes() const { return {bytes_.data(), bytes_.size()}; }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
};

CUpti_ActivityKernel10 Kernel(CUpti_ActivityKind kind, uint32_t correlation, uint64_t start,
                              uint64_t end, const char* name) {
  CUpti_ActivityKernel10 kernel;
  std::memset(&kernel, 0, sizeof kernel);
  kernel.kind = kind;
  kernel.correlationId = correlation;
  kernel.start = start;
  kernel.end = end;
  kernel.name = name;
  kernel.gridX = 132;
  kernel.blockX = 256;
  kernel.registersPerThread = 32;
  return kernel;
}

class RealRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ProbeCupti().loaded) GTEST_SKIP() << "no libcupti here: " << ProbeCupti().message;
  }
};

TEST_F(RealRecordsTest, KernelRecordsAreReadAndEveryOtherKindIsSkipped) {
  static_assert(CUPTI_ACTIVITY_KIND_KERNEL == kCuptiKindKernel);
  static_assert(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL == kCuptiKindConcurrentKernel);
  ActivityBuffer buffer;
  CUpti_ActivityAPI launch;
  std::memset(&launch, 0, sizeof launch);
  launch.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  launch.correlationId = 11;
  launch.start = 10;
  launch.end = 20;
  buffer.Add(launch);
  buffer.Add(Kernel(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 12, 1'000'000, 1'001'250, "fusion"));
  CUpti_ActivityMemset4 memset;
  std::memset(&memset, 0, sizeof memset);
  memset.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  memset.start = 1'001'300;
  memset.end = 1'050'000;
  buffer.Add(memset);
  CUpti_ActivityMemcpy6 copy;
  std::memset(&copy, 0, sizeof copy);
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.start = 5;
  copy.end = 6;
  buffer.Add(copy);
  buffer.Add(Kernel(CUPTI_ACTIVITY_KIND_KERNEL, 10, 2'000'000, 2'003'500, "fusion"));
  buffer.Add(Kernel(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 14, 3'000'000, 3'000'900, "foreign"));
  buffer.Add(Kernel(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 15, 0, 0, "fusion"));

  ActivityTally tally;
  auto read = ReadActivityBuffer(buffer.bytes(), buffer.size(), 0, tally);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(tally.skipped, 3);  // the driver call, the memset, the copy
  EXPECT_EQ(tally.untimed, 1);
  EXPECT_EQ(tally.dropped, 0);
  ASSERT_EQ(tally.kernels.size(), 3u);
  EXPECT_EQ(tally.kernels[0].correlation_id, 12u);
  EXPECT_EQ(tally.kernels[0].start_ns, 1'000'000u);
  EXPECT_EQ(tally.kernels[0].end_ns, 1'001'250u);
  EXPECT_EQ(tally.kernels[0].name, "fusion");
  EXPECT_EQ(tally.kernels[2].name, "foreign");

  auto durations = KernelDurationsUs(tally, "fusion", 2);
  ASSERT_TRUE(durations) << durations.error().message;
  EXPECT_EQ(*durations, (std::vector<double>{3.5, 1.25}));  // launch order: 10, then 12
}

TEST_F(RealRecordsTest, OnlyTheValidBytesAreReadAndBuffersAccumulate) {
  ActivityBuffer buffer;
  buffer.Add(Kernel(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 1, 100, 2100, "k"));
  size_t first = buffer.size();
  buffer.Add(Kernel(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 2, 5000, 6000, "k"));
  ActivityTally tally;
  ASSERT_TRUE(ReadActivityBuffer(buffer.bytes(), first, 0, tally));
  EXPECT_EQ(tally.kernels.size(), 1u);
  ASSERT_TRUE(ReadActivityBuffer(buffer.bytes(), buffer.size(), 0, tally));
  EXPECT_EQ(tally.kernels.size(), 3u);
  ActivityTally empty;
  ASSERT_TRUE(ReadActivityBuffer(buffer.bytes(), 0, 0, empty));
  EXPECT_TRUE(empty.kernels.empty());
  EXPECT_FALSE(ReadActivityBuffer(buffer.bytes(), buffer.size() + 8, 0, empty));
}

TEST_F(RealRecordsTest, DroppedRecordsAreCountedAndRefuseKernelTimes) {
  ActivityBuffer buffer;
  buffer.Add(Kernel(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 1, 100, 2100, "k"));
  ActivityTally tally;
  ASSERT_TRUE(ReadActivityBuffer(buffer.bytes(), buffer.size(), 3, tally));
  ASSERT_TRUE(ReadActivityBuffer(buffer.bytes(), 0, 2, tally));
  EXPECT_EQ(tally.dropped, 5);
  EXPECT_EQ(tally.kernels.size(), 1u);
  auto durations = KernelDurationsUs(tally, "k", 1);
  ASSERT_FALSE(durations);
  EXPECT_NE(durations.error().message.find("5 records dropped"), std::string::npos)
      << durations.error().message;
}

#endif  // TILESMITH_HAVE_CUPTI_HEADERS

}  // namespace
}  // namespace tilesmith::tuner
