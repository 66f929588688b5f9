// The analytic host model: its parallel, bandwidth and SIMD terms on known figures, the
// machine calibration, and predictions on a fixed calibration that must order configs.
#include "costmodel/host_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/costmodel/kernel_test_util.h"

namespace tilesmith::costmodel {
namespace {

using testing::Emit;

HostCalibration Fixed() { return testing::FixedHostCalibration(); }

DeviceFigures Host() { return {testing::Device("host"), 32 << 20}; }

// A term as the busy threads sharing the work evenly would take it (the model divides each
// by the load balance, which depends on the whole work).
double Even(const Prediction& p, const char* term) {
  return p.breakdown[term].get<double>() * p.breakdown["load_balance"].get<double>();
}

// The price of one block's counted code.
double BlockCode(const Prediction& p) {
  return Even(p, "code_us") * p.breakdown["busy_threads"].get<double>() /
         p.breakdown["blocks"].get<double>();
}

TEST(HostModelTest, ParallelEfficiencyFollowsThePoolsSchedule) {
  EXPECT_DOUBLE_EQ(HostParallelEfficiency(1, 8), 1.0 / 8);
  EXPECT_DOUBLE_EQ(HostParallelEfficiency(16, 8), 1.0);
  EXPECT_DOUBLE_EQ(HostParallelEfficiency(9, 8), 9.0 / 16);  // 9 tasks of 1: one thread runs 2
  // 9 blocks on 2 threads: tasks of 1,1,1,1,1,1,1,2; the threads finish at 4 and 5.
  EXPECT_DOUBLE_EQ(HostParallelEfficiency(9, 2), 0.9);
  // 100 blocks: 32 tasks, every eighth of 4 blocks, the rest of 3; the thread that takes
  // the fourth 4-block task ends last, at 16 blocks.
  EXPECT_DOUBLE_EQ(HostParallelEfficiency(100, 8), 100.0 / (16 * 8));
  EXPECT_DOUBLE_EQ(HostParallelEfficiency(3, 2), 0.75);
}

TEST(HostModelTest, LoadBalanceStartsTheWorkersLateAndSlower) {
  // Two blocks of 5 µs: the caller is done at 5, the worker at 1 + 5 / 0.7.
  double worker_done = kHostWorkerStartUs + 5 / kHostWorkerPace;
  EXPECT_DOUBLE_EQ(HostLoadBalance(2, 2, 10), 10 / (2 * worker_done));
  // Three blocks: the caller takes the first and, free before the worker, the third.
  EXPECT_DOUBLE_EQ(HostLoadBalance(3, 2, 30),
                   30 / (2 * std::max(20.0, kHostWorkerStartUs + 10 / kHostWorkerPace)));
  // So an uneven split beats an even one of the same work, as the timings do.
  EXPECT_GT(HostLoadBalance(3, 2, 30), HostLoadBalance(2, 2, 30));
  // A grid the calling thread runs alone, and one with no work to weigh.
  EXPECT_DOUBLE_EQ(HostLoadBalance(1, 2, 10), 0.5);
  EXPECT_DOUBLE_EQ(HostLoadBalance(9, 2, 0), HostParallelEfficiency(9, 2));
  // Many blocks make 8 tasks of 1250 µs: at 0.7 of the pace, the worker does 3 while the
  // caller does 5.
  EXPECT_DOUBLE_EQ(HostLoadBalance(4096, 2, 10000), 10000 / (2 * 5 * 1250.0));
}

TEST(HostModelTest, BandwidthScalesWithBusyThreadsUpToTheMachine) {
  HostCalibration c = Fixed();
  EXPECT_DOUBLE_EQ(HostBandwidth(c, 1, false), 10e3);
  EXPECT_DOUBLE_EQ(HostBandwidth(c, 2, false), 20e3);
  EXPECT_DOUBLE_EQ(HostBandwidth(c, 8, false), 40e3);
  EXPECT_DOUBLE_EQ(HostBandwidth(c, 8, true), 200e3);
  EXPECT_DOUBLE_EQ(HostBandwidth(c, 1, true), 25e3);
}

TEST(HostModelTest, SimdEfficiency) {
  EXPECT_DOUBLE_EQ(SimdEfficiency(1, 4, 32), 1.0 / 8);
  EXPECT_DOUBLE_EQ(SimdEfficiency(8, 4, 32), 1.0);
  EXPECT_DOUBLE_EQ(SimdEfficiency(2, 2, 32), 2.0 / 16);
  EXPECT_DOUBLE_EQ(SimdEfficiency(16, 4, 32), 1.0);
  EXPECT_DOUBLE_EQ(SimdEfficiency(1, 4, 0), 1.0);
}

TEST(HostModelTest, MemoryBoundKernelAtTheCalibratedBandwidth) {
  auto kernel = Emit(testing::kElementwise, nullptr, "host");
  HostModel model(Fixed());
  DeviceFigures host = Host();
  host.cache_bytes = 1 << 20;  // 48 MiB do not fit
  auto prediction = model.Predict(kernel.kernel, host, nullptr);
  ASSERT_TRUE(prediction.has_value()) << prediction.error().message;
  double memory_us = 3.0 * 4194304 * 4 / 40e3;
  EXPECT_DOUBLE_EQ(Even(*prediction, "memory_us"), memory_us);
  EXPECT_GT(prediction->microseconds, memory_us);
  EXPECT_EQ(prediction->breakdown["model"], "analytic-host");
  EXPECT_FALSE(prediction->breakdown["fits_cache"].get<bool>());
}

TEST(HostModelTest, OrdersOneBlockFarBehindManyBlocks) {
  // 1024 threads of 4 elements cover 4096 elements in one block: one thread works.
  constexpr char kSmall[] = R"(f {
  p0 = f32[262144] parameter(0)
  ROOT e = f32[262144] exponential(p0)
})";
  HostModel model(Fixed());
  auto one = model.Predict(
      Emit(kSmall, {{"threads_per_block", 1024}, {"vector", 4}, {"chunks", 64}}, "host").kernel,
      Host(), nullptr);
  auto many = model.Predict(
      Emit(kSmall, {{"threads_per_block", 128}, {"vector", 4}, {"chunks", 1}}, "host").kernel,
      Host(), nullptr);
  ASSERT_TRUE(one.has_value() && many.has_value());
  EXPECT_EQ(one->breakdown["busy_threads"], 1);
  EXPECT_GT(one->microseconds, 4 * many->microseconds);
  // Its one thread streams the bytes at one thread's rate, once: the seven idle threads
  // cost nothing on top (they used to be charged again through the pool's efficiency).
  EXPECT_DOUBLE_EQ(one->breakdown["parallel_efficiency"].get<double>(), 1.0 / 8);
  EXPECT_DOUBLE_EQ(one->breakdown["load_balance"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(one->breakdown["memory_us"].get<double>(),
                   2.0 * 262144 * 4 / HostBandwidth(Fixed(), 1, true));
}

TEST(HostModelTest, WiderVectorsComputeFaster) {
  HostModel model(Fixed());
  auto narrow =
      model.Predict(Emit(testing::kElementwise, {{"vector", 2}}, "host").kernel, Host(), nullptr);
  auto wide =
      model.Predict(Emit(testing::kElementwise, {{"vector", 8}}, "host").kernel, Host(), nullptr);
  EXPECT_DOUBLE_EQ(narrow->breakdown["simd_efficiency"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(wide->breakdown["simd_efficiency"].get<double>(), 1.0);
  EXPECT_GT(narrow->breakdown["compute_us"].get<double>(),
            3 * wide->breakdown["compute_us"].get<double>());
  EXPECT_GT(narrow->microseconds, wide->microseconds);
}

TEST(HostModelTest, StraightLineThreadsVectoriseAcrossThreads) {
  HostModel model(Fixed());
  auto across = model.Predict(
      Emit(testing::kElementwise, {{"vector", 1}, {"chunks", 1}}, "host").kernel, Host(), nullptr);
  auto chunked = model.Predict(
      Emit(testing::kElementwise, {{"vector", 1}, {"chunks", 2}}, "host").kernel, Host(), nullptr);
  EXPECT_TRUE(across->breakdown["vectorised_across_threads"].get<bool>());
  EXPECT_FALSE(chunked->breakdown["vectorised_across_threads"].get<bool>());
  // The vectoriser fills a share of the lanes across threads; the chunked body runs scalar.
  EXPECT_DOUBLE_EQ(across->breakdown["simd_efficiency"].get<double>(), kHostAcrossThreadsSimdShare);
  EXPECT_DOUBLE_EQ(Even(*chunked, "compute_us"),
                   8 * kHostAcrossThreadsSimdShare * Even(*across, "compute_us"));
  // 48 MiB at 40 GB/s bound the vectorised one; the scalar one is compute bound.
  EXPECT_GT(chunked->microseconds, 1.5 * across->microseconds);
}

TEST(HostModelTest, ExplicitFullVectorsComputeFasterThanVectorisingAcrossThreads) {
  HostModel model(Fixed());
  auto across = model.Predict(
      Emit(testing::kElementwise, {{"vector", 1}, {"chunks", 1}}, "host").kernel, Host(), nullptr);
  auto explicit_vector = model.Predict(
      Emit(testing::kElementwise, {{"vector", 8}, {"chunks", 1}}, "host").kernel, Host(), nullptr);
  ASSERT_TRUE(across.has_value() && explicit_vector.has_value());
  EXPECT_FALSE(explicit_vector->breakdown["vectorised_across_threads"].get<bool>());
  EXPECT_DOUBLE_EQ(explicit_vector->breakdown["simd_efficiency"].get<double>(), 1.0);
  EXPECT_LT(explicit_vector->breakdown["compute_us"].get<double>(),
            0.6 * across->breakdown["compute_us"].get<double>());
  EXPECT_NEAR(Even(*explicit_vector, "compute_us"),
              kHostAcrossThreadsSimdShare * Even(*across, "compute_us"),
              1e-9 * Even(*across, "compute_us"));
}

// A compiled kernel's executed code replaces the estimate from flops and thread steps:
// each counted instruction and division costs its price on every block, spread over the
// busy threads.
TEST(HostModelTest, CountedCodeReplacesTheEstimatedWork) {
  HostModel model(Fixed());
  auto emitted = Emit(testing::kElementwise, {{"vector", 8}}, "host");
  const emitters::KernelIR& kernel = emitted.kernel;
  auto estimated = model.Predict(kernel, Host(), nullptr);
  ResourceUsage usage{.executed_instructions = 50000, .executed_divisions = 0};
  auto counted = model.Predict(kernel, Host(), &usage);
  usage.executed_divisions = 1000;
  auto dividing = model.Predict(kernel, Host(), &usage);
  ASSERT_TRUE(estimated && counted && dividing);
  EXPECT_EQ(estimated->breakdown["work"], "estimated");
  EXPECT_DOUBLE_EQ(estimated->breakdown["code_us"].get<double>(), 0);
  EXPECT_EQ(counted->breakdown["work"], "executed code");
  EXPECT_NEAR(BlockCode(*counted), 50000 * kHostInstructionUs, 1e-9);
  EXPECT_NEAR(BlockCode(*dividing) - BlockCode(*counted), 1000 * kHostDivisionUs, 1e-9);
  EXPECT_GT(dividing->microseconds, counted->microseconds);
}

// A division by a constant is a multiply-high and shifts, not a divider's wait: of 1000
// divisions, those by a constant cost kHostConstantDivisionUs each (far below a division by
// a variable), and each lane of a gather costs a load of its own.
TEST(HostModelTest, ConstantDivisionsAndGatherLanesHaveTheirOwnPrices) {
  HostModel model(Fixed());
  auto emitted = Emit(testing::kElementwise, {{"vector", 8}}, "host");
  ResourceUsage usage{.executed_instructions = 50000, .executed_divisions = 1000};
  auto variable = model.Predict(emitted.kernel, Host(), &usage);
  usage.executed_constant_divisions = 1000;
  auto constant = model.Predict(emitted.kernel, Host(), &usage);
  usage.executed_gather_lanes = 4000;
  auto gathering = model.Predict(emitted.kernel, Host(), &usage);
  // More constant divisions than divisions (a hand-made record) count as all constant.
  usage.executed_constant_divisions = 5000;
  auto clamped = model.Predict(emitted.kernel, Host(), &usage);
  ASSERT_TRUE(variable && constant && gathering && clamped);
  auto code = BlockCode;
  EXPECT_NEAR(code(*variable) - code(*constant), 1000 * (kHostDivisionUs - kHostConstantDivisionUs),
              1e-9);
  EXPECT_LT(kHostConstantDivisionUs, kHostDivisionUs / 5);
  EXPECT_LT(constant->microseconds, variable->microseconds);
  EXPECT_NEAR(code(*gathering) - code(*constant), 4000 * kHostGatherLaneUs, 1e-9);
  EXPECT_DOUBLE_EQ(code(*clamped), code(*gathering));

  // Float divisions are the divider's throughput, not an index path's wait.
  ResourceUsage floats{.executed_instructions = 50000, .executed_divisions = 1000};
  auto integer = model.Predict(emitted.kernel, Host(), &floats);
  floats.executed_float_divisions = 1000;
  auto real = model.Predict(emitted.kernel, Host(), &floats);
  ASSERT_TRUE(integer && real);
  EXPECT_NEAR(code(*integer) - code(*real), 1000 * (kHostDivisionUs - kHostFloatDivisionUs), 1e-9);
  EXPECT_LT(kHostFloatDivisionUs, kHostDivisionUs / 5);
}

// Where the machine code was counted, its instructions are priced and the IR's are priced
// less beside them: the same IR that became more machine code (an f16 lane promoted to f32
// and back) is predicted slower. Stats without a machine count keep the IR's price.
TEST(HostModelTest, MachineInstructionsArePricedWhereCounted) {
  HostModel model(Fixed());
  auto emitted = Emit(testing::kElementwise, {{"vector", 8}}, "host");
  ResourceUsage ir_only{.executed_instructions = 50000};
  ResourceUsage lean = ir_only;
  lean.executed_machine_instructions = 60000;
  ResourceUsage promoted = ir_only;
  promoted.executed_machine_instructions = 240000;
  auto old_stats = model.Predict(emitted.kernel, Host(), &ir_only);
  auto few = model.Predict(emitted.kernel, Host(), &lean);
  auto many = model.Predict(emitted.kernel, Host(), &promoted);
  ASSERT_TRUE(old_stats && few && many);
  auto code = BlockCode;
  EXPECT_NEAR(code(*old_stats), 50000 * kHostInstructionUs, 1e-9);
  EXPECT_NEAR(code(*few),
              60000 * kHostMachineInstructionUs + 50000 * kHostIrInstructionBesideMachineUs, 1e-9);
  EXPECT_NEAR(code(*many) - code(*few), 180000 * kHostMachineInstructionUs, 1e-9);
  EXPECT_GT(many->microseconds, few->microseconds);
  EXPECT_DOUBLE_EQ(many->breakdown["machine_instructions"].get<double>(), 240000);
}

// A lane moved between register files pays beside its price as a machine instruction: the
// same machine count with more lane moves is predicted slower, by their price.
TEST(HostModelTest, LaneMovesArePricedBesideTheirInstructions) {
  HostModel model(Fixed());
  auto emitted = Emit(testing::kElementwise, {{"vector", 2}}, "host");
  ResourceUsage packed{.executed_instructions = 50000, .executed_machine_instructions = 60000};
  ResourceUsage moved = packed;
  moved.executed_lane_moves = 20000;
  auto few = model.Predict(emitted.kernel, Host(), &packed);
  auto many = model.Predict(emitted.kernel, Host(), &moved);
  ASSERT_TRUE(few && many);
  EXPECT_NEAR(BlockCode(*many) - BlockCode(*few), 20000 * kHostLaneMoveUs, 1e-9);
  EXPECT_GT(many->microseconds, few->microseconds);
}

TEST(HostModelTest, ExecutedCodeRoundTripsThroughCompileStats) {
  ResourceUsage usage{.executed_instructions = 1234.5,
                      .executed_divisions = 6,
                      .executed_memory = 78,
                      .executed_vector = 9,
                      .executed_branches = 10,
                      .executed_constant_divisions = 4,
                      .executed_float_divisions = 1,
                      .executed_gather_lanes = 16,
                      .executed_half_lanes = 32,
                      .executed_machine_instructions = 4321,
                      .executed_lane_moves = 55};
  nlohmann::json stats = {{"compile_ms", 3.5}};
  AddResourceUsageToStats(usage, stats);
  EXPECT_FALSE(stats.contains("registers"));  // no cubin figures were known
  ResourceUsage back = ResourceUsageFromStats(stats);
  EXPECT_TRUE(back.has_host_code());
  EXPECT_FALSE(back.has_cubin());
  EXPECT_DOUBLE_EQ(back.executed_instructions, 1234.5);
  EXPECT_DOUBLE_EQ(back.executed_divisions, 6);
  EXPECT_DOUBLE_EQ(back.executed_memory, 78);
  EXPECT_DOUBLE_EQ(back.executed_vector, 9);
  EXPECT_DOUBLE_EQ(back.executed_branches, 10);
  EXPECT_DOUBLE_EQ(back.executed_constant_divisions, 4);
  EXPECT_DOUBLE_EQ(back.executed_float_divisions, 1);
  EXPECT_DOUBLE_EQ(back.executed_gather_lanes, 16);
  EXPECT_DOUBLE_EQ(back.executed_half_lanes, 32);
  EXPECT_DOUBLE_EQ(back.executed_machine_instructions, 4321);
  EXPECT_DOUBLE_EQ(back.executed_lane_moves, 55);
  EXPECT_FALSE(ResourceUsageFromStats(nlohmann::json::object()).known());
}

TEST(HostModelTest, ShuffleSegmentStepsCostLessThanPlainSteps) {
  // A row reduction whose warps shuffle: the host runs a thread loop per segment.
  constexpr char kRowReduce[] = R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[256,4096] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[256] reduce(p0, z), dimensions={1}, to_apply=add
})";
  HostModel model(Fixed());
  auto prediction = model.Predict(Emit(kRowReduce,
                                       {{"threads_x", 32},
                                        {"threads_y", 4},
                                        {"vector", 1},
                                        {"elements_per_thread", 1},
                                        {"split", 1}},
                                       "host")
                                      .kernel,
                                  Host(), nullptr);
  ASSERT_TRUE(prediction.has_value()) << prediction.error().message;
  const nlohmann::json& terms = prediction->breakdown;
  double steps = terms["thread_steps"].get<double>();
  double segments = terms["segment_steps"].get<double>();
  ASSERT_GT(segments, 0) << "the warps' shuffles split the loop";
  double per_thread =
      1.0 / terms["busy_threads"].get<double>() / terms["load_balance"].get<double>();
  EXPECT_DOUBLE_EQ(terms["thread_steps_us"].get<double>(),
                   (steps * kHostThreadStepUs + segments * kHostSegmentStepUs) * per_thread);
  EXPECT_LT(kHostSegmentStepUs, kHostThreadStepUs);
}

TEST(HostModelTest, RefusesAnUncalibratedMachine) {
  HostModel model(HostCalibration{});
  EXPECT_FALSE(model.Predict(Emit(testing::kElementwise).kernel, Host(), nullptr).has_value());
}

TEST(HostModelTest, CalibrationMeasuresThisMachineOnce) {
  const HostCalibration& first = CachedHostCalibration(8 << 20);
  EXPECT_GE(first.threads, 1);
  EXPECT_GT(first.memory_bytes_per_us, 100);  // > 0.1 GB/s
  EXPECT_GT(first.thread_memory_bytes_per_us, 100);
  EXPECT_GT(first.cache_bytes_per_us, 100);
  EXPECT_GT(first.thread_flops_per_us, 100);  // > 0.1 Gflop/s
  EXPECT_GT(first.dispatch_us, 0);
  EXPECT_LT(first.measure_ms, 5000);
  EXPECT_EQ(&CachedHostCalibration(8 << 20), &first);
  EXPECT_TRUE(first.ToJson().contains("memory_gbs"));
}

}  // namespace
}  // namespace tilesmith::costmodel
