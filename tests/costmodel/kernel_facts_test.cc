// Facts the analytic models read off Kernel IR: bytes, flops, sectors per warp access,
// coalescing of real emitted kernels, bank conflicts of the transpose tile.
#include "costmodel/kernel_facts.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "tests/costmodel/kernel_test_util.h"

namespace tilesmith::costmodel {
namespace {

using testing::Emit;

std::vector<int64_t> Strided(int64_t stride, int64_t count = 32) {
  std::vector<int64_t> addresses;
  for (int64_t lane = 0; lane < count; ++lane) addresses.push_back(lane * stride);
  return addresses;
}

TEST(KernelFactsTest, SectorsOfContiguousAndStridedWarps) {
  EXPECT_EQ(DistinctSectors(Strided(4), 4), 4);                // 128 contiguous bytes
  EXPECT_EQ(DistinctSectors(Strided(128), 4), 32);             // one float per 128-byte row
  EXPECT_EQ(DistinctSectors(Strided(16), 16), 16);             // float4 per lane: 512 bytes
  EXPECT_EQ(DistinctSectors(std::vector<int64_t>{30}, 4), 2);  // straddles a boundary
}

TEST(KernelFactsTest, CoalescingFactorIsSectorsOverIdeal) {
  EXPECT_DOUBLE_EQ(CoalescingFactor(Strided(4), 4), 1.0);
  EXPECT_DOUBLE_EQ(CoalescingFactor(Strided(128), 4), 8.0);
  EXPECT_DOUBLE_EQ(CoalescingFactor(Strided(8), 4), 2.0);                   // every other float
  EXPECT_DOUBLE_EQ(CoalescingFactor(std::vector<int64_t>(32, 0), 4), 1.0);  // broadcast
}

TEST(KernelFactsTest, BankConflictsOfTileColumns) {
  EXPECT_EQ(BankConflictDegree(Strided(4)), 1);                    // a row of a float tile
  EXPECT_EQ(BankConflictDegree(Strided(32 * 4)), 32);              // a column of f32[32,32]
  EXPECT_EQ(BankConflictDegree(Strided(33 * 4)), 1);               // a column of f32[32,33]
  EXPECT_EQ(BankConflictDegree(Strided(2 * 4)), 2);                // every other word
  EXPECT_EQ(BankConflictDegree(std::vector<int64_t>(32, 64)), 1);  // one word: broadcast
}

TEST(KernelFactsTest, LaneDimsNumberThreadsXFastest) {
  emitters::LaunchGrid launch;
  launch.threads = {16, 4, 1};
  EXPECT_EQ(LaneDims(launch, 0, 17), (std::vector<int64_t>{1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(LaneDims(launch, 1, 0), (std::vector<int64_t>{0, 2, 0, 0, 0, 0}));
}

TEST(KernelFactsTest, TrafficCountsPhysicalBytesIncludingTilePadding) {
  auto plain = Emit(testing::kElementwise);
  Traffic traffic = KernelTraffic(plain.kernel);
  EXPECT_EQ(traffic.read_bytes, 2 * 4194304 * 4);
  EXPECT_EQ(traffic.write_bytes, 4194304 * 4);
  // f32[3,5] tiled by (2,2) holds 24 slots: 96 bytes, not 60.
  auto tiled = Emit(R"(f {
  p0 = f32[3,5]{1,0:T(2,2)} parameter(0)
  ROOT n = f32[3,5]{1,0:T(2,2)} negate(p0)
})");
  EXPECT_EQ(KernelTraffic(tiled.kernel).read_bytes, 96);
}

TEST(KernelFactsTest, FlopsWeighTranscendentals) {
  auto kernel = Emit(testing::kElementwise);
  EXPECT_DOUBLE_EQ(KernelFlops(kernel.kernel), 4194304.0 * (kTranscendentalFlops + 1));
  auto reduce = Emit(R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[64,1024] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[64] reduce(p0, c), dimensions={1}, to_apply=add
})");
  EXPECT_DOUBLE_EQ(KernelFlops(reduce.kernel), 64.0 * 1024);
}

// A dot does a multiply and an add per output element and contracted element, so a shard of
// a matmul (the split strategies' per-device kernel) costs its share of the compute.
TEST(KernelFactsTest, DotFlopsCountTheContraction) {
  constexpr char kDot[] = R"(f {
  a = f32[512,1024] parameter(0)
  b = f32[1024,512] parameter(1)
  ROOT d = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  constexpr char kShard[] = R"(f {
  a = f32[64,1024] parameter(0)
  b = f32[1024,512] parameter(1)
  ROOT d = f32[64,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  auto whole = Emit(kDot);
  auto shard = Emit(kShard);
  EXPECT_DOUBLE_EQ(KernelFlops(whole.kernel), 2.0 * 512 * 512 * 1024);
  EXPECT_DOUBLE_EQ(KernelFlops(shard.kernel), 2.0 * 64 * 512 * 1024);
}

TEST(KernelFactsTest, LoopKernelIsCoalescedAtAnyVectorWidth) {
  for (int64_t vector : {1, 2, 4}) {
    auto kernel = Emit(testing::kElementwise, {{"vector", vector}});
    Coalescing coalescing = KernelCoalescing(kernel.kernel);
    EXPECT_GE(coalescing.accesses, 3) << vector;  // p0, p1 and out0
    EXPECT_DOUBLE_EQ(coalescing.read_factor, 1.0) << vector;
    EXPECT_DOUBLE_EQ(coalescing.write_factor, 1.0) << vector;
    EXPECT_EQ(KernelVectorWidth(kernel.kernel), vector);
  }
}

TEST(KernelFactsTest, ColumnMajorReadsAreUncoalesced) {
  // The loop emitter walks the output in its physical order; the input's layout puts
  // consecutive output elements 4096 bytes apart.
  auto kernel = Emit(R"(f {
  p0 = f32[1024,1024]{0,1} parameter(0)
  ROOT n = f32[1024,1024]{1,0} negate(p0)
})",
                     {{"vector", 1}});
  Coalescing coalescing = KernelCoalescing(kernel.kernel);
  EXPECT_DOUBLE_EQ(coalescing.read_factor, 8.0);
  EXPECT_DOUBLE_EQ(coalescing.write_factor, 1.0);
}

TEST(KernelFactsTest, TransposePaddingRemovesBankConflicts) {
  auto padded = Emit(testing::kTranspose, {{"shared_padding", 1}});
  auto unpadded = Emit(testing::kTranspose, {{"shared_padding", 0}});
  ASSERT_EQ(padded.kernel.emitter, "transpose");
  SharedTraffic with_padding = KernelSharedTraffic(padded.kernel);
  SharedTraffic without = KernelSharedTraffic(unpadded.kernel);
  EXPECT_EQ(with_padding.conflict_degree, 1);
  EXPECT_EQ(without.conflict_degree, 32);
  // Every element goes through the tile twice (a store, then a load).
  EXPECT_DOUBLE_EQ(with_padding.bytes, 2.0 * 64 * 1024 * 1024 * 4);
  // The tiled transpose reads and writes whole rows.
  Coalescing coalescing = KernelCoalescing(padded.kernel);
  EXPECT_DOUBLE_EQ(coalescing.read_factor, 1.0);
  EXPECT_DOUBLE_EQ(coalescing.write_factor, 1.0);
}

TEST(KernelFactsTest, ThreadStepsCountVectorsOnce) {
  auto scalar = Emit(testing::kElementwise, {{"vector", 1}});
  auto vector = Emit(testing::kElementwise, {{"vector", 4}});
  EXPECT_DOUBLE_EQ(KernelThreadSteps(scalar.kernel), 4194304.0);
  EXPECT_DOUBLE_EQ(KernelThreadSteps(vector.kernel), 4194304.0 / 4);
}

TEST(KernelFactsTest, ThreadsVectoriseOnlyWithStraightLineBodies) {
  EXPECT_TRUE(ThreadsVectorize(Emit(testing::kElementwise, {{"vector", 1}, {"chunks", 1}}).kernel));
  EXPECT_FALSE(ThreadsVectorize(Emit(testing::kElementwise, {{"vector", 2}}).kernel));
  EXPECT_FALSE(
      ThreadsVectorize(Emit(testing::kElementwise, {{"vector", 1}, {"chunks", 2}}).kernel));
  EXPECT_FALSE(ThreadsVectorize(Emit(testing::kTranspose).kernel));  // rows per thread, tiles
}

TEST(KernelFactsTest, NarrowFloatsComputeInF32) {
  EXPECT_EQ(ComputeElementBytes(Emit(R"(f {
  p0 = bf16[1024] parameter(0)
  ROOT n = bf16[1024] negate(p0)
})")
                                    .kernel),
            4);
  EXPECT_EQ(ComputeElementBytes(Emit(R"(f {
  p0 = s8[1024] parameter(0)
  ROOT n = s8[1024] negate(p0)
})")
                                    .kernel),
            1);
  EXPECT_EQ(ComputeElementBytes(Emit(R"(f {
  p0 = f64[1024] parameter(0)
  ROOT n = f64[1024] negate(p0)
})")
                                    .kernel),
            8);
}

}  // namespace
}  // namespace tilesmith::costmodel
