// Ranking strategies by kernel + communication time with the analytic GPU model (no GPU
// needed, deterministic): a bandwidth sweep moves the winner from "every device does all
// the work" to "split and communicate", and a dot's gathered operand gets a collective-
// matmul overlap estimate.
#include "split/rank.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "split/dim_labels.h"
#include "split/strategy.h"
#include "tuner/device.h"

namespace tilesmith::split {
namespace {

constexpr const char* kMatmul = R"(
  HloModule big_matmul
  matmul {
    a = f32[512,1024] parameter(0)
    b = f32[1024,512] parameter(1)
    ROOT d = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  }
  ENTRY main {
    a = f32[512,1024] parameter(0)
    b = f32[1024,512] parameter(1)
    ROOT f = f32[512,512] fusion(a, b), kind=kLoop, calls=matmul
  })";

// Memory-bound: each device's kernel moves 1/8 of the bytes when split 8 ways.
constexpr const char* kElementwise = R"(
  HloModule big_elementwise
  tanh_add {
    x = f32[4096,2048] parameter(0)
    y = f32[4096,2048] parameter(1)
    t = f32[4096,2048] tanh(x)
    ROOT s = f32[4096,2048] add(t, y)
  }
  ENTRY main {
    x = f32[4096,2048] parameter(0)
    y = f32[4096,2048] parameter(1)
    ROOT f = f32[4096,2048] fusion(x, y), kind=kLoop, calls=tanh_add
  })";

class SplitRankTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = tuner::ResolveDevice("cuda:sm_90", "", tuner::DefaultDevicesDir());
    ASSERT_TRUE(device.has_value()) << device.error().message;
    timer_ = std::make_unique<PredictedKernelTimer>(*device);
  }

  void Load(const char* text) {
    auto module = hlo::ParseHloModule(text);
    ASSERT_TRUE(module.has_value()) << module.error().message;
    module_ = std::move(*module);
    auto labels = LabelDims(*module_->fusion());
    ASSERT_TRUE(labels.has_value()) << labels.error().message;
    labels_ = std::move(*labels);
  }

  std::vector<Strategy> Rank(const Mesh& mesh, const SplitRequest& request) {
    auto strategies = EnumerateStrategies(*module_->fusion(), labels_, mesh, request);
    EXPECT_TRUE(strategies.has_value()) << strategies.error().message;
    if (!strategies) return {};
    Status ranked = RankStrategies(*module_, labels_, mesh, *timer_, *strategies);
    EXPECT_TRUE(ranked.has_value()) << ranked.error().message;
    return std::move(*strategies);
  }

  static PartitionSpec Spec(std::string_view text) { return ParseSpec(text).value(); }

  std::unique_ptr<hlo::HloModule> module_;
  DimLabels labels_;
  std::unique_ptr<PredictedKernelTimer> timer_;
};

// Inputs and output replicated on 8 devices: either each device computes the whole fusion
// (no communication), or each computes a block and the blocks are gathered. Slow links
// favour the first, fast links the second, and the switch happens once.
TEST_F(SplitRankTest, BandwidthSweepMovesTheWinner) {
  Load(kElementwise);
  SplitRequest request{{Spec("P()"), Spec("P()")}, {Spec("P()")}};
  std::vector<double> bandwidths = {0.01, 0.1, 1, 10, 100, 1000, 10000, 100000};
  std::vector<bool> split_wins;
  for (double bandwidth : bandwidths) {
    std::vector<Strategy> ranked =
        Rank(UniformMesh({8}, {"x"}, bandwidth, 0.5, "h100_sxm"), request);
    ASSERT_FALSE(ranked.empty());
    const Strategy& best = ranked.front();
    EXPECT_EQ(best.kernel_source, "predicted (analytic-gpu)");
    EXPECT_NEAR(best.total_us, best.kernel_us + best.comm_us, 1e-9);
    for (size_t r = 1; r < ranked.size(); ++r)
      EXPECT_LE(ranked[r - 1].total_us, ranked[r].total_us);
    split_wins.push_back(best.SplitAxisCount() > 0);
    if (!split_wins.back()) {
      EXPECT_EQ(best.comm_us, 0);
    }
  }
  EXPECT_FALSE(split_wins.front()) << "at 0.01 GB/s nothing should cross the link";
  EXPECT_TRUE(split_wins.back()) << "at 100000 GB/s the 8-way split should win";
  for (size_t i = 1; i < split_wins.size(); ++i) {
    EXPECT_TRUE(split_wins[i] || !split_wins[i - 1])
        << "split won at " << bandwidths[i - 1] << " GB/s but not at " << bandwidths[i];
  }
}

// The shard_map collective matmul: A split by rows, B replicated, C replicated. Gathering A
// before the dot can be rotated through ppermute behind 1/n of the dot each step.
TEST_F(SplitRankTest, CollectiveMatmulOverlapEstimate) {
  Load(kMatmul);
  SplitRequest request{{Spec("P('x', None)"), Spec("P()")}, {Spec("P()")}};
  std::vector<Strategy> ranked = Rank(UniformMesh({8}, {"x"}, 100, 2, "h100_sxm"), request);
  const Strategy* gather_a = nullptr;
  for (const Strategy& s : ranked) {
    if (s.SplitAxisCount() == 0) gather_a = &s;
  }
  ASSERT_NE(gather_a, nullptr);
  ASSERT_EQ(gather_a->collectives.size(), 1u);
  EXPECT_EQ(gather_a->collectives[0].kind, CollectiveKind::kAllGather);
  ASSERT_TRUE(gather_a->overlap.has_value());
  EXPECT_NE(gather_a->overlap->note.find("collective matmul: all_gather('x') of param 0 as 7 "
                                         "ppermute steps"),
            std::string::npos)
      << gather_a->overlap->note;
  EXPECT_LE(gather_a->overlap->total_us, gather_a->total_us);
  EXPECT_GE(gather_a->overlap->total_us, std::max(gather_a->kernel_us, gather_a->comm_us) - 1e-9);
  // Gathering the contracting dim would not overlap this way: B split by rows gets none.
  SplitRequest contracting{{Spec("P()"), Spec("P('x', None)")}, {Spec("P()")}};
  for (const Strategy& s : Rank(UniformMesh({8}, {"x"}, 100, 2, "h100_sxm"), contracting)) {
    if (s.SplitAxisCount() == 0) {
      EXPECT_FALSE(s.overlap.has_value());
    }
  }
}

}  // namespace
}  // namespace tilesmith::split
