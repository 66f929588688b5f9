// The analytic GPU model: each term on known figures (occupancy, waves, caps, overlap),
// then whole predictions that must order configs as the hardware would.
#include "costmodel/gpu_model.h"

#include <gtest/gtest.h>

#include "tests/costmodel/kernel_test_util.h"

namespace tilesmith::costmodel {
namespace {

using testing::Emit;

const emitters::DeviceInfo& H100() {
  static const emitters::DeviceInfo device = testing::Device("cuda:sm_90");
  return device;
}

DeviceFigures H100Figures() { return {H100(), 50 << 20}; }

TEST(GpuModelTest, OccupancyLimits) {
  Occupancy plain = ComputeOccupancy(H100(), 256, 32, 0);
  EXPECT_EQ(plain.blocks_per_sm, 8);
  EXPECT_EQ(plain.limited_by, "threads");
  EXPECT_DOUBLE_EQ(plain.fraction, 1.0);

  Occupancy registers = ComputeOccupancy(H100(), 256, 64, 0);
  EXPECT_EQ(registers.blocks_per_sm, 4);
  EXPECT_EQ(registers.limited_by, "registers");
  EXPECT_EQ(registers.warps_per_sm, 32);

  // 255 registers round to 8192 per warp: two 4-warp blocks fill 64 K.
  EXPECT_EQ(ComputeOccupancy(H100(), 128, 255, 0).blocks_per_sm, 2);

  Occupancy shared = ComputeOccupancy(H100(), 128, 32, 100 * 1024);
  EXPECT_EQ(shared.blocks_per_sm, 2);
  EXPECT_EQ(shared.limited_by, "shared");

  Occupancy tiny = ComputeOccupancy(H100(), 32, 16, 0);
  EXPECT_EQ(tiny.blocks_per_sm, kMaxBlocksPerSm);
  EXPECT_EQ(tiny.limited_by, "blocks");
  EXPECT_DOUBLE_EQ(tiny.fraction, 0.5);

  EXPECT_EQ(ComputeOccupancy(H100(), 128, 32, 300 * 1024).blocks_per_sm, 0);
}

TEST(GpuModelTest, WavesQuantiseTheTail) {
  Waves full = ComputeWaves(264, 2, 132);
  EXPECT_EQ(full.waves, 1);
  EXPECT_DOUBLE_EQ(full.efficiency, 1.0);
  Waves tail = ComputeWaves(265, 2, 132);
  EXPECT_EQ(tail.waves, 2);
  EXPECT_DOUBLE_EQ(tail.efficiency, 265.0 / 528.0);
  EXPECT_EQ(ComputeWaves(10 * 264, 2, 132).waves, 10);
}

TEST(GpuModelTest, BandwidthTerms) {
  EXPECT_DOUBLE_EQ(ReadBoost(10 << 20, 50 << 20), kL2ReadBoost);
  EXPECT_DOUBLE_EQ(ReadBoost(100 << 20, 50 << 20), 1.0);
  // About 53 blocks saturate an H100's 3.35 TB/s (tuning-practice.md).
  EXPECT_NEAR(PerBlockBandwidthCap(53, 1.98) / 1e3, 3358, 1);
  EXPECT_DOUBLE_EQ(LatencyHiding(kWarpsToHideLatency / 2), 0.5);
  EXPECT_DOUBLE_EQ(LatencyHiding(64), 1.0);
}

TEST(GpuModelTest, ComputeAndOverlap) {
  // 132 SMs x 128 lanes x 2 x 1.98 GHz: 66.9 Tflop/s.
  EXPECT_NEAR(ComputeTimeUs(66.9e6, 1000, 256, 132, 1.98), 1.0, 0.01);
  // One block uses one SM.
  EXPECT_NEAR(ComputeTimeUs(66.9e6, 1, 256, 132, 1.98), 132.0, 1);
  EXPECT_DOUBLE_EQ(Overlapped(10, 4), 10 + 4 - 0.95 * 4);
  EXPECT_DOUBLE_EQ(SharedTimeUs(1e6, 32, 1, 1.0), 32 * SharedTimeUs(1e6, 1, 1, 1.0));
}

TEST(GpuModelTest, MemoryBoundKernelRunsAtBandwidth) {
  auto kernel = Emit(testing::kElementwise);
  auto prediction = GpuModel().Predict(kernel.kernel, {H100(), 0}, nullptr);
  ASSERT_TRUE(prediction.has_value()) << prediction.error().message;
  double bytes = 3.0 * 4194304 * 4;
  double at_bandwidth = bytes / (H100().memory_bandwidth_gbs * 1e3);
  EXPECT_GT(prediction->microseconds, at_bandwidth);
  EXPECT_LT(prediction->microseconds, 1.3 * at_bandwidth + kLaunchOverheadUs);
  EXPECT_EQ(prediction->breakdown["resources"]["source"], "estimate");
  // 8192 blocks of 128 threads, 16 resident per SM: 8192 / 2112 -> 4 waves.
  EXPECT_EQ(prediction->breakdown["waves"]["count"], 4);
  // The same bytes fitting in the L2 read faster.
  auto cached = GpuModel().Predict(kernel.kernel, H100Figures(), nullptr);
  EXPECT_LT(cached->microseconds, prediction->microseconds);
}

TEST(GpuModelTest, BlockDispatchCountsBlocksPerSm) {
  EXPECT_DOUBLE_EQ(BlockDispatchUs(10 * 132, 132), 10 * kBlockDispatchUs);
  EXPECT_DOUBLE_EQ(BlockDispatchUs(10 * 132 + 1, 132), 11 * kBlockDispatchUs);
  EXPECT_DOUBLE_EQ(BlockDispatchUs(0, 132), 0.0);
}

// On an H100 a grid of 32-thread, one-element blocks ran 3.5x slower than 128-thread blocks of
// two elements over the same bytes (GELU, docs/gpu.md): block dispatch, not bandwidth.
TEST(GpuModelTest, ManyTinyBlocksPayForTheirDispatch) {
  auto tiny = Emit(testing::kElementwise, {{"threads_per_block", 32}, {"vector", 1}});
  auto wide = Emit(testing::kElementwise, {{"threads_per_block", 128}, {"vector", 4}});
  auto slow = GpuModel().Predict(tiny.kernel, H100Figures(), nullptr);
  auto fast = GpuModel().Predict(wide.kernel, H100Figures(), nullptr);
  ASSERT_TRUE(slow.has_value() && fast.has_value());
  double slow_dispatch = slow->breakdown["dispatch_us"].get<double>();
  EXPECT_DOUBLE_EQ(slow_dispatch, BlockDispatchUs(tiny.kernel.launch.block_count(), 132));
  EXPECT_GT(slow_dispatch, slow->breakdown["memory_us"].get<double>());
  EXPECT_GT(slow->microseconds, 2 * fast->microseconds);
  // Each wave adds its round trip.
  EXPECT_DOUBLE_EQ(slow->breakdown["wave_latency_us"].get<double>(),
                   kWaveLatencyUs * slow->breakdown["waves"]["count"].get<double>());
}

// A grid that fills few of the resident slots is not charged for it: the memory time is the
// bytes over the bandwidth, and the waves' efficiency is only reported.
TEST(GpuModelTest, PartlyFilledWavesAreReportedNotCharged) {
  // 65536 elements in blocks of 256 threads x 4 x 4: 16 blocks, 8 resident per SM.
  auto kernel = Emit(R"(f {
  p0 = f32[65536] parameter(0)
  ROOT e = f32[65536] exponential(p0)
})",
                     {{"threads_per_block", 256}, {"vector", 4}, {"chunks", 4}});
  auto prediction = GpuModel().Predict(kernel.kernel, H100Figures(), nullptr);
  ASSERT_TRUE(prediction.has_value()) << prediction.error().message;
  const nlohmann::json& terms = prediction->breakdown;
  EXPECT_LT(terms["waves"]["efficiency"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(terms["memory_us"].get<double>(),
                   terms["read_us"].get<double>() + terms["write_us"].get<double>());
}

TEST(GpuModelTest, RealRegistersLowerOccupancyAndSlowDown) {
  auto kernel = Emit(testing::kElementwise, {{"threads_per_block", 128}});
  ResourceUsage lean{.registers = 24};
  ResourceUsage heavy{.registers = 255};
  auto fast = GpuModel().Predict(kernel.kernel, H100Figures(), &lean);
  auto slow = GpuModel().Predict(kernel.kernel, H100Figures(), &heavy);
  EXPECT_EQ(fast->breakdown["resources"]["source"], "cubin");
  EXPECT_EQ(slow->breakdown["occupancy"]["limited_by"], "registers");
  EXPECT_GT(slow->microseconds, 1.5 * fast->microseconds);
}

// Little's law on an H100 (400 ns x 3350 GB/s = 1.34 MB in flight keeps the memory busy).
TEST(GpuModelTest, LatencyCoverageIsBytesInFlightOverLatencyTimesBandwidth) {
  double needed = H100().memory_latency_ns * H100().memory_bandwidth_gbs;
  EXPECT_NEAR(needed, 1.34e6, 1e3);
  EXPECT_DOUBLE_EQ(LatencyCoverage(needed / 4, 1e9, H100()), 0.25);
  EXPECT_DOUBLE_EQ(LatencyCoverage(2 * needed, 1e9, H100()), 1.0);
  // A kernel reading less than that covers the latency once all its reads are in flight.
  EXPECT_DOUBLE_EQ(LatencyCoverage(1e5, 1e5, H100()), 1.0);
  emitters::DeviceInfo unknown = H100();
  unknown.memory_latency_ns = 0;
  EXPECT_DOUBLE_EQ(LatencyCoverage(needed, 1e9, unknown), 0.0);
}

// With registers for 8 resident warps per SM, a loop kernel of 16 elements per thread keeps
// 4 MB of reads in flight and streams at the full bandwidth; one element per thread keeps
// 0.26 MB and stays limited by its warps.
TEST(GpuModelTest, BytesInFlightCoveringTheLatencyEarnTheBandwidth) {
  ResourceUsage heavy{.registers = 255};
  auto wide =
      Emit(testing::kElementwise, {{"threads_per_block", 128}, {"vector", 4}, {"chunks", 4}});
  auto narrow = Emit(testing::kElementwise, {{"threads_per_block", 128}, {"vector", 1}});
  auto fast = GpuModel().Predict(wide.kernel, {H100(), 0}, &heavy);
  auto slow = GpuModel().Predict(narrow.kernel, {H100(), 0}, &heavy);
  ASSERT_TRUE(fast.has_value() && slow.has_value());
  EXPECT_EQ(fast->breakdown["occupancy"]["warps_per_sm"], 8);
  EXPECT_DOUBLE_EQ(fast->breakdown["latency_coverage"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(fast->breakdown["latency_hiding"].get<double>(), 1.0);
  EXPECT_LT(slow->breakdown["latency_coverage"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(slow->breakdown["latency_hiding"].get<double>(),
                   LatencyHiding(kWarpsToHideLatency / 2));
  EXPECT_LT(fast->breakdown["memory_us"].get<double>(),
            0.6 * slow->breakdown["memory_us"].get<double>());
  // Without a latency figure the warps alone decide, as before.
  emitters::DeviceInfo unknown = H100();
  unknown.memory_latency_ns = 0;
  auto warps_only = GpuModel().Predict(wide.kernel, {unknown, 0}, &heavy);
  EXPECT_DOUBLE_EQ(warps_only->breakdown["latency_hiding"].get<double>(), 0.5);
}

TEST(GpuModelTest, SpillsAddTraffic) {
  auto kernel = Emit(testing::kElementwise);
  ResourceUsage none{.registers = 32};
  ResourceUsage spills{.registers = 32, .spill_bytes = 64};
  auto a = GpuModel().Predict(kernel.kernel, H100Figures(), &none);
  auto b = GpuModel().Predict(kernel.kernel, H100Figures(), &spills);
  EXPECT_GT(b->microseconds, a->microseconds);
}

TEST(GpuModelTest, UncoalescedReadsCostMore) {
  constexpr char kColumnMajor[] = R"(f {
  p0 = f32[1024,1024]{0,1} parameter(0)
  ROOT n = f32[1024,1024]{1,0} negate(p0)
})";
  constexpr char kRowMajor[] = R"(f {
  p0 = f32[1024,1024]{1,0} parameter(0)
  ROOT n = f32[1024,1024]{1,0} negate(p0)
})";
  auto column =
      GpuModel().Predict(Emit(kColumnMajor, {{"vector", 1}}).kernel, {H100(), 0}, nullptr);
  auto row = GpuModel().Predict(Emit(kRowMajor, {{"vector", 1}}).kernel, {H100(), 0}, nullptr);
  EXPECT_DOUBLE_EQ(column->breakdown["coalescing"]["read_factor"], 8.0);
  EXPECT_GT(column->microseconds, 2 * row->microseconds);
}

TEST(GpuModelTest, BankConflictsSlowTheUnpaddedTranspose) {
  auto padded = Emit(testing::kTranspose, {{"shared_padding", 1}});
  auto unpadded = Emit(testing::kTranspose, {{"shared_padding", 0}});
  auto fast = GpuModel().Predict(padded.kernel, {H100(), 0}, nullptr);
  auto slow = GpuModel().Predict(unpadded.kernel, {H100(), 0}, nullptr);
  EXPECT_EQ(slow->breakdown["bank_conflict_degree"], 32);
  EXPECT_EQ(fast->breakdown["bank_conflict_degree"], 1);
  EXPECT_GT(slow->microseconds, fast->microseconds);
}

TEST(GpuModelTest, RejectsDevicesWithoutFiguresAndBlocksThatDoNotFit) {
  auto kernel = Emit(testing::kElementwise);
  emitters::DeviceInfo blank = H100();
  blank.memory_bandwidth_gbs = 0;
  EXPECT_FALSE(GpuModel().Predict(kernel.kernel, {blank, 0}, nullptr).has_value());
  ResourceUsage huge{.registers = 32, .shared_bytes = 400 * 1024};
  auto error = GpuModel().Predict(kernel.kernel, H100Figures(), &huge);
  ASSERT_FALSE(error.has_value());
  EXPECT_NE(error.error().message.find("does not fit"), std::string::npos);
}

// The split strategies rank a matmul's shards by this model, so a dot's compute must count
// its contraction: 2·512·512·1024 flops cannot beat the H100's peak of 132 SMs × 128 lanes ×
// 2 flops × 1.98 GHz (8.0 us), where counting one flop per output gave 1.8 us.
TEST(GpuModelTest, AMatmulIsNoFasterThanThePeakComputeAllows) {
  constexpr char kDot[] = R"(f {
  a = f32[512,1024] parameter(0)
  b = f32[1024,512] parameter(1)
  ROOT d = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  const emitters::DeviceInfo& h100 = H100();
  auto whole = GpuModel().Predict(Emit(kDot).kernel, {h100, 0}, nullptr);
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  double peak_us = 2.0 * 512 * 512 * 1024 /
                   (static_cast<double>(h100.sm_count) * 128 * 2 * h100.clock_ghz * 1e3);
  EXPECT_GE(whole->microseconds, peak_us);
}

}  // namespace
}  // namespace tilesmith::costmodel
