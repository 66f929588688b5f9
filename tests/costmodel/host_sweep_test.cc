// The host model's terms for how a host runs GPU-shaped kernels: a block's threads one after
// another (each walking all its points before the next starts, so lines neighbours share
// must survive a whole walk in cache), and warp shuffles emulated by one thread loop per
// segment between shuffles.
#include <gtest/gtest.h>

#include "costmodel/host_model.h"
#include "costmodel/kernel_facts.h"
#include "costmodel/warp_accesses.h"
#include "tests/costmodel/kernel_test_util.h"

namespace tilesmith::costmodel {
namespace {

using testing::Emit;

HostCalibration Fixed() {
  HostCalibration c;
  c.threads = 2;
  c.memory_bytes_per_us = 8e3;
  c.thread_memory_bytes_per_us = 9e3;
  c.cache_bytes_per_us = 14e3;
  c.thread_flops_per_us = 15e3;
  c.dispatch_us = 13;
  return c;
}

DeviceFigures Host() { return {testing::Device("host"), 32 << 20}; }

// Corpus reduce_row/reduction_groups_two_in_same_group: two reductions of f32[128,288,32]
// over the middle dim, and a full-size side output.
constexpr char kTwoReductions[] = R"(
%add_f32 {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

fusion {
  p1 = f32[1,1,144,256,32]{4,3,2,1,0} parameter(1)
  c1 = f32[] constant(0.844827533)
  b1 = f32[1,1,144,256,32]{4,3,2,1,0} broadcast(c1), dimensions={}
  m1 = f32[1,1,144,256,32]{4,3,2,1,0} multiply(p1, b1)
  bc1 = f32[1,144,256,32]{3,2,1,0} bitcast(m1)
  p0 = f32[1,144,256,32]{3,2,1,0} parameter(0)
  a = f32[1,144,256,32]{3,2,1,0} add(bc1, p0)
  c2 = f32[] constant(0.393919319)
  b2 = f32[1,144,256,32]{3,2,1,0} broadcast(c2), dimensions={}
  side = f32[1,144,256,32]{3,2,1,0} multiply(a, b2)
  bc2 = f32[128,288,32]{2,1,0} bitcast(side)
  zero = f32[] constant(0)
  r1 = f32[128,32]{1,0} reduce(bc2, zero), dimensions={1}, to_apply=%add_f32
  c3 = f32[] constant(0.362068981)
  b3 = f32[1,1,144,256,32]{4,3,2,1,0} broadcast(c3), dimensions={}
  m3 = f32[1,1,144,256,32]{4,3,2,1,0} multiply(p1, b3)
  bc3 = f32[128,288,32]{2,1,0} bitcast(m3)
  r2 = f32[128,32]{1,0} reduce(bc3, zero), dimensions={1}, to_apply=%add_f32
  ROOT t = (f32[128,32]{1,0}, f32[1,144,256,32]{3,2,1,0}, f32[128,32]{1,0}) tuple(r1, side, r2)
})";

nlohmann::json Column(int64_t threads_y) {
  return {{"threads_x", 32},
          {"threads_y", threads_y},
          {"vector", 1},
          {"elements_per_thread", 1},
          {"split", 1}};
}

TEST(HostSweepTest, GridStrideWalkSharesLinesWithNeighbours) {
  // 128 threads x 8 chunks of f32[4M]: a thread's chunks lie 2 MiB apart, one line of each
  // of the 3 buffers per chunk, and 16 neighbours read each line.
  auto kernel = Emit(testing::kElementwise,
                     {{"threads_per_block", 128}, {"vector", 1}, {"chunks", 8}}, "host");
  std::vector<ThreadSweep> sweeps = KernelThreadSweeps(kernel.kernel);
  ASSERT_EQ(sweeps.size(), 1u);
  EXPECT_DOUBLE_EQ(sweeps[0].threads, 4194304.0 / 8);
  EXPECT_DOUBLE_EQ(sweeps[0].lines, 24);
  EXPECT_DOUBLE_EQ(sweeps[0].pages, 24);
  EXPECT_DOUBLE_EQ(sweeps[0].neighbour_touches, 4194304.0 / 8 * 24 * 15 / 16);
  // 24 lines 2 MiB apart share one L1 set of 8 ways; L2 holds 128 per page offset.
  EXPECT_DOUBLE_EQ(sweeps[0].l1_kept, 8.0 / 24);
  EXPECT_DOUBLE_EQ(sweeps[0].l2_kept, 1.0);
}

TEST(HostSweepTest, OnePointWalkFitsL1) {
  auto kernel = Emit(testing::kElementwise,
                     {{"threads_per_block", 128}, {"vector", 1}, {"chunks", 1}}, "host");
  std::vector<ThreadSweep> sweeps = KernelThreadSweeps(kernel.kernel);
  ASSERT_EQ(sweeps.size(), 1u);
  EXPECT_DOUBLE_EQ(sweeps[0].lines, 3);
  EXPECT_DOUBLE_EQ(sweeps[0].l1_kept, 1.0);
  SweepCost cost = HostSweepCost(sweeps[0]);
  EXPECT_DOUBLE_EQ(cost.l2_lines, 0);
  EXPECT_DOUBLE_EQ(cost.l3_lines, 0);
  EXPECT_DOUBLE_EQ(cost.page_walks, 0);
}

TEST(HostSweepTest, CostFollowsTheCacheLevelThatKeepsTheWalk) {
  ThreadSweep sweep;
  sweep.threads = 1000;
  sweep.lines = 100;
  sweep.pages = 100;
  sweep.neighbour_touches = 1000 * 100 * 0.75;
  sweep.l1_kept = 0.25;
  sweep.l2_kept = 1;
  SweepCost in_l2 = HostSweepCost(sweep);
  EXPECT_DOUBLE_EQ(in_l2.l2_lines, 75000 * 0.75);
  EXPECT_DOUBLE_EQ(in_l2.l3_lines, 0);
  sweep.l2_kept = 0.5;
  SweepCost half_l3 = HostSweepCost(sweep);
  EXPECT_DOUBLE_EQ(half_l3.l2_lines, 75000 * 0.25);
  EXPECT_DOUBLE_EQ(half_l3.l3_lines, 75000 * 0.5);
  EXPECT_DOUBLE_EQ(half_l3.page_walks, 0);
  // A walk over 4096 pages keeps half of them in a TLB of 2048.
  sweep.pages = 2 * kHostTlbPages;
  EXPECT_DOUBLE_EQ(HostSweepCost(sweep).page_walks, 1000 * 4096 * 0.5);
}

TEST(HostSweepTest, AWalkOverMorePagesThanTheFirstLevelTlbMapsMissesIt) {
  ThreadSweep sweep;
  sweep.threads = 1000;
  sweep.lines = 100;
  sweep.line_touches = 1000 * 100;
  sweep.pages = kHostL1TlbPages;
  EXPECT_DOUBLE_EQ(HostSweepCost(sweep).tlb_misses, 0) << "the walk's pages stay mapped";
  // Four times the pages it maps: each touch finds its page mapped a quarter of the time.
  sweep.pages = 4 * kHostL1TlbPages;
  EXPECT_DOUBLE_EQ(HostSweepCost(sweep).tlb_misses, 1000 * 100 * 0.75);
  EXPECT_EQ(HostSweepCost(sweep).page_walks, 0) << "the second level still maps them";
}

TEST(HostSweepTest, FewThreadsWalkTheSideOutputOverManyPages) {
  // The side output's grid-stride loop: 128 blocks of 64 threads stride 32 KiB, so each
  // thread's walk crosses hundreds of pages (measured: 11-17 ms); 1024 threads a block
  // stride 512 KiB over a few dozen (about 2 ms).
  HostModel model(Fixed());
  nlohmann::json few = {
      {"threads_x", 16}, {"threads_y", 4}, {"vector", 2}, {"elements_per_thread", 4}, {"split", 1}};
  nlohmann::json many = {{"threads_x", 16},
                         {"threads_y", 64},
                         {"vector", 4},
                         {"elements_per_thread", 1},
                         {"split", 1}};
  auto slow = model.Predict(Emit(kTwoReductions, few, "host").kernel, Host(), nullptr);
  auto fast = model.Predict(Emit(kTwoReductions, many, "host").kernel, Host(), nullptr);
  ASSERT_TRUE(slow.has_value() && fast.has_value());
  EXPECT_GT(slow->breakdown["sweep"]["tlb_misses"].get<double>(), 1e6);
  EXPECT_EQ(fast->breakdown["sweep"]["tlb_misses"].get<double>(), 0);
  EXPECT_GT(slow->microseconds, 1.5 * fast->microseconds);
}

TEST(HostSweepTest, ShufflesRunAThreadLoopPerSegment) {
  // A row reduction whose 32 lanes butterfly: 5 shuffles, 6 thread loops per point.
  constexpr char kRows[] = R"(
%add {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
f {
  p0 = f32[1024,512] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[1024] reduce(p0, zero), dimensions={1}, to_apply=%add
})";
  auto warp = Emit(kRows,
                   {{"threads_x", 32},
                    {"threads_y", 4},
                    {"vector", 1},
                    {"elements_per_thread", 1},
                    {"split", 1}},
                   "host");
  double threads = static_cast<double>(warp.kernel.launch.block_count()) *
                   static_cast<double>(warp.kernel.launch.threads_per_block());
  EXPECT_DOUBLE_EQ(HostSegmentSteps(warp.kernel), threads * 6);
  auto lone = Emit(kRows,
                   {{"threads_x", 1},
                    {"threads_y", 32},
                    {"vector", 1},
                    {"elements_per_thread", 1},
                    {"split", 1}},
                   "host");
  EXPECT_DOUBLE_EQ(HostSegmentSteps(lone.kernel), 0);
}

TEST(HostSweepTest, LongColumnWalksRankBehindShortOnes) {
  // Measured 3-8x apart: with threads_y = 1 every thread walks all 288 rows 128 bytes apart
  // (and the side output's chunks), overflowing L1's sets before its 15 column neighbours
  // read the same lines; with 16 rows a block a thread walks 18.
  HostModel model(Fixed());
  auto one = model.Predict(Emit(kTwoReductions, Column(1), "host").kernel, Host(), nullptr);
  auto sixteen = model.Predict(Emit(kTwoReductions, Column(16), "host").kernel, Host(), nullptr);
  ASSERT_TRUE(one.has_value() && sixteen.has_value());
  EXPECT_GT(one->microseconds, sixteen->microseconds);
  EXPECT_GT(one->breakdown["sweep_miss_us"].get<double>(),
            sixteen->breakdown["sweep_miss_us"].get<double>());
}

TEST(HostSweepTest, ATreeSplitsLastLevelReadsThePartialsNotTheOperand) {
  // The partials f32[4,1024] have the operand's rank, so reading them as the operand would
  // count addresses of p0 that the last level never touches.
  auto tree = Emit(R"(
%add {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
f {
  p0 = f32[1024,512] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[1024] reduce(p0, zero), dimensions={1}, to_apply=%add
})",
                   {{"split", 4}, {"second_pass", "tree"}}, "host");
  ASSERT_TRUE(tree.kernel.phases.back().arrival.has_value());
  facts_internal::WarpAccessCollector collector(tree.kernel);
  std::map<int64_t, std::vector<int64_t>> addresses =
      collector.Collect(tree.kernel.phases.back().loops.front());
  ASSERT_FALSE(addresses.empty());
  for (const auto& [buffer, touched] : addresses) {
    EXPECT_FALSE(tree.kernel.buffers[buffer].is_parameter()) << tree.kernel.buffers[buffer].name;
  }
  int64_t partials = -1;
  for (size_t b = 0; b < tree.kernel.buffers.size(); ++b) {
    if (tree.kernel.buffers[b].name.starts_with("partials")) partials = static_cast<int64_t>(b);
  }
  EXPECT_TRUE(addresses.contains(partials));
}

}  // namespace
}  // namespace tilesmith::costmodel
