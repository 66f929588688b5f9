// Split strategies: the dims that split together, the collectives each strategy needs, their
// alpha-beta cost, the per-device fusion, and — for every strategy of a matmul, a
// reduction and an elementwise fusion — all devices simulated on the host, assembled and
// compared with the evaluator on the whole fusion.
#include "split/strategy.h"

#include <gtest/gtest.h>

#include <set>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "split/dim_labels.h"
#include "split/shard_module.h"
#include "split/simulate.h"

namespace tilesmith::split {
namespace {

const std::string kData = TILESMITH_TEST_DATA_DIR "/";

Mesh Mesh42(double bandwidth_gbps = 10, double latency_us = 1) {
  return UniformMesh({4, 2}, {"i", "j"}, bandwidth_gbps, latency_us);
}

std::unique_ptr<hlo::HloModule> Load(const std::string& name) {
  auto module = hlo::ParseHloModuleFile(kData + name);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

std::optional<PartitionSpec> Spec(std::string_view text) {
  auto spec = ParseSpec(text);
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  return spec.value_or(PartitionSpec{});
}

struct Split {
  std::unique_ptr<hlo::HloModule> module;
  DimLabels labels;
  std::vector<Strategy> strategies;
};

Split Enumerate(std::unique_ptr<hlo::HloModule> module, const Mesh& mesh,
                const SplitRequest& request = {}) {
  Split split{std::move(module), {}, {}};
  auto labels = LabelDims(*split.module->fusion());
  EXPECT_TRUE(labels.has_value()) << labels.error().message;
  split.labels = std::move(*labels);
  auto strategies = EnumerateStrategies(*split.module->fusion(), split.labels, mesh, request);
  EXPECT_TRUE(strategies.has_value()) << strategies.error().message;
  if (strategies) split.strategies = std::move(*strategies);
  return split;
}

std::string Describe(const Strategy& s) {
  std::string text;
  for (const auto& spec : s.param_specs) text += SpecToString(spec) + " ";
  text += "-> ";
  for (const auto& spec : s.out_specs) text += SpecToString(spec) + " ";
  for (const auto& c : s.collectives) text += "| " + CollectiveToString(c) + " ";
  return text;
}

std::vector<std::string> Ops(const Strategy& s) {
  std::vector<std::string> ops;
  for (const Collective& c : s.collectives) {
    if (c.kind != CollectiveKind::kSlice)
      ops.push_back(CollectiveName(c.kind) + "('" + c.axis + "')");
  }
  return ops;
}

// Every strategy, simulated on all 8 devices, must reproduce the evaluator.
void ExpectEveryStrategySimulates(const Split& split, const Mesh& mesh) {
  ASSERT_FALSE(split.strategies.empty());
  for (const Strategy& strategy : split.strategies) {
    auto result = Simulate(*split.module, split.labels, mesh, strategy, /*seed=*/7);
    ASSERT_TRUE(result.has_value()) << Describe(strategy) << ": " << result.error().message;
    EXPECT_TRUE(result->matches) << Describe(strategy) << ": " << result->mismatch;
    EXPECT_EQ(result->devices, 8);
  }
}

TEST(SplitDimLabelsTest, MatmulContractsTheSharedDim) {
  auto module = Load("split_matmul.hlo");
  auto labels = LabelDims(*module->fusion());
  ASSERT_TRUE(labels.has_value()) << labels.error().message;
  const hlo::HloComputation& fusion = *module->fusion();
  const auto& a = labels->Of(*fusion.parameter(0));
  const auto& b = labels->Of(*fusion.parameter(1));
  const auto& d = labels->Of(*fusion.root());
  EXPECT_EQ(a[1], b[0]);  // the contracting dim
  EXPECT_EQ(a[0], d[0]);
  EXPECT_EQ(b[1], d[1]);
  ASSERT_EQ(labels->contractions[a[1]].size(), 1u);
  EXPECT_TRUE(labels->contractions[a[1]][0].psum_ok);
  EXPECT_EQ(labels->outputs.size(), 1u);
}

TEST(SplitDimLabelsTest, PositionDependentDimsArePinned) {
  auto module = hlo::ParseHloModule(R"(
    ENTRY e {
      p = f32[8,6] parameter(0)
      i = f32[8,6] iota(), iota_dimension=1
      a = f32[8,6] add(p, i)
      s = f32[8,3] slice(a), slice={[0:8], [1:4]}
      ROOT r = f32[24] reshape(s)
    })");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  auto labels = LabelDims(*(*module)->fusion());
  ASSERT_TRUE(labels.has_value()) << labels.error().message;
  const auto& p = labels->Of(*(*module)->fusion()->parameter(0));
  EXPECT_TRUE(labels->pinned[p[1]]) << "the iota's dim";
  EXPECT_TRUE(labels->pinned[p[0]]) << "regrouped by the reshape";
}

// A narrowing bitcast-convert's new minor dim holds each element's bytes: never split.
TEST(SplitDimLabelsTest, TheBytesOfANarrowingBitcastConvertArePinned) {
  auto module = hlo::ParseHloModule(R"(
    ENTRY e {
      p = f32[8] parameter(0)
      ROOT b = u8[8,4] bitcast-convert(p)
    })");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  auto labels = LabelDims(fusion);
  ASSERT_TRUE(labels.has_value()) << labels.error().message;
  const auto& bytes = labels->Of(*fusion.root());
  EXPECT_TRUE(labels->pinned[bytes[1]]);
  EXPECT_FALSE(labels->pinned[bytes[0]]) << "the elements still split";
}

// The spec's example: A P('i','j') @ B P('j',None) sums partial products over 'j'.
TEST(SplitStrategyTest, SpecMatmulPsumOrPsumScatter) {
  auto module = hlo::ParseHloModule(R"(
    ENTRY e {
      a = f32[8,16] parameter(0)
      b = f32[16,32] parameter(1)
      ROOT c = f32[8,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    })");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const Mesh mesh = Mesh42();
  SplitRequest request{{Spec("P('i', 'j')"), Spec("P('j', None)")}, {Spec("P('i', None)")}};
  Split split = Enumerate(std::move(*module), mesh, request);
  const Strategy* direct = nullptr;
  for (const Strategy& s : split.strategies) {
    if (s.param_specs[0] == *Spec("P('i', 'j')") && s.param_specs[1] == *Spec("P('j')"))
      direct = &s;
  }
  ASSERT_NE(direct, nullptr);
  // a_block: f32[2,8], b_block: f32[8,32]; psum over 'j' leaves f32[2,32] blocks of c.
  EXPECT_EQ(direct->param_blocks[0], (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(direct->param_blocks[1], (std::vector<int64_t>{8, 32}));
  EXPECT_EQ(direct->kernel_blocks[0], (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(direct->partial_axes[0], (std::vector<std::string>{"j"}));
  EXPECT_EQ(Ops(*direct), (std::vector<std::string>{"psum('j')"}));
  EXPECT_EQ(SpecToString(direct->out_specs[0]), "P('i')");
  EXPECT_EQ(direct->collectives[0].bytes, 2 * 32 * 4);
  auto simulated = Simulate(*split.module, split.labels, mesh, *direct);
  ASSERT_TRUE(simulated.has_value()) << simulated.error().message;
  EXPECT_TRUE(simulated->matches) << simulated->mismatch;

  // out_specs P('i','j'): psum_scatter instead, f32[8/4, 32/2] blocks, half the traffic.
  request.out_specs = {Spec("P('i', 'j')")};
  Split scattered =
      Enumerate(hlo::ParseHloModule(hlo::PrintModule(*split.module)).value(), mesh, request);
  const Strategy* rs = nullptr;
  for (const Strategy& s : scattered.strategies) {
    if (s.param_specs == direct->param_specs) rs = &s;
  }
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(Ops(*rs), (std::vector<std::string>{"psum_scatter('j')"}));
  EXPECT_EQ(rs->collectives[0].dim, 1);
  EXPECT_EQ(BlockShape(rs->out_specs[0], std::vector<int64_t>{8, 32}, mesh),
            (std::vector<int64_t>{2, 16}));
  EXPECT_NEAR(rs->comm_us * 2, direct->comm_us, 1e-9) << "reduce-scatter moves half";
  auto checked = Simulate(*scattered.module, scattered.labels, mesh, *rs);
  ASSERT_TRUE(checked.has_value()) << checked.error().message;
  EXPECT_TRUE(checked->matches) << checked->mismatch;
}

TEST(SplitStrategyTest, EveryMatmulStrategyReproducesTheEvaluator) {
  const Mesh mesh = Mesh42();
  Split free = Enumerate(Load("split_matmul.hlo"), mesh);
  EXPECT_GT(free.strategies.size(), 20u);
  ExpectEveryStrategySimulates(free, mesh);
  // Inputs lying elsewhere and a fixed output: gathers, all_to_alls and psums appear.
  SplitRequest request{{Spec("P(None, 'i')"), Spec("P('j', None)")}, {Spec("P('i', None)")}};
  Split fixed = Enumerate(Load("split_matmul.hlo"), mesh, request);
  std::set<std::string> kinds;
  for (const Strategy& s : fixed.strategies) {
    for (const Collective& c : s.collectives) kinds.insert(CollectiveName(c.kind));
  }
  for (const char* kind : {"all_gather", "all_to_all", "psum", "psum_scatter", "slice"}) {
    EXPECT_TRUE(kinds.contains(kind)) << kind;
  }
  ExpectEveryStrategySimulates(fixed, mesh);
}

// The simulation is a real check: a strategy with a collective left out, or applied over the
// wrong axis, no longer reproduces the evaluator.
TEST(SplitStrategyTest, SimulationCatchesAMissingOrWrongCollective) {
  const Mesh mesh = Mesh42();
  Split split = Enumerate(Load("split_matmul.hlo"), mesh, {{}, {Spec("P()")}});
  int64_t broken = 0;
  for (const Strategy& s : split.strategies) {
    for (size_t c = 0; c < s.collectives.size(); ++c) {
      if (s.collectives[c].kind != CollectiveKind::kPsum) continue;
      Strategy dropped = s;
      dropped.collectives.erase(dropped.collectives.begin() + c);
      auto result = Simulate(*split.module, split.labels, mesh, dropped, 3);
      ASSERT_TRUE(result.has_value()) << result.error().message;
      EXPECT_FALSE(result->matches) << Describe(dropped);
      Strategy wrong_axis = s;
      wrong_axis.collectives[c].axis = s.collectives[c].axis == "i" ? "j" : "i";
      auto wrong = Simulate(*split.module, split.labels, mesh, wrong_axis, 3);
      ASSERT_TRUE(wrong.has_value()) << wrong.error().message;
      EXPECT_FALSE(wrong->matches) << Describe(wrong_axis);
      ++broken;
    }
  }
  EXPECT_GT(broken, 0);
}

TEST(SplitStrategyTest, EveryReductionStrategyReproducesTheEvaluator) {
  const Mesh mesh = Mesh42();
  Split free = Enumerate(Load("split_reduce.hlo"), mesh);
  ExpectEveryStrategySimulates(free, mesh);
  // Splitting the reduced dim over 'j' and asking for a result split by 'j' on dim 1 is a
  // reduce-scatter.
  SplitRequest request{{Spec("P(None, 'j')"), Spec("P(None, 'j')")}, {Spec("P(None, 'j')")}};
  Split fixed = Enumerate(Load("split_reduce.hlo"), mesh, request);
  bool reduce_scatter = false;
  for (const Strategy& s : fixed.strategies) {
    reduce_scatter |= s.param_specs[0] == *Spec("P(None, 'j')") &&
                      Ops(s) == std::vector<std::string>{"psum_scatter('j')"};
  }
  EXPECT_TRUE(reduce_scatter);
  ExpectEveryStrategySimulates(fixed, mesh);
}

TEST(SplitStrategyTest, ElementwiseInputsThatDisagreeAreMoved) {
  const Mesh mesh = Mesh42();
  SplitRequest request{{Spec("P('i', None)"), Spec("P(None, 'i')"), Spec("P()")},
                       {Spec("P('i', None)")}};
  Split split = Enumerate(Load("split_elementwise.hlo"), mesh, request);
  const Strategy* rows = nullptr;
  for (const Strategy& s : split.strategies) {
    if (s.param_specs[0] == *Spec("P('i')") && s.SplitAxisCount() == 1) rows = &s;
  }
  ASSERT_NE(rows, nullptr);
  // y's 'i' moves from dim 1 to dim 0 in one all_to_all; x is already right.
  EXPECT_EQ(Ops(*rows), (std::vector<std::string>{"all_to_all('i')"}));
  ExpectEveryStrategySimulates(split, mesh);
}

TEST(SplitStrategyTest, AlphaBetaRingCosts) {
  const MeshAxis axis{"x", 8, 100, 2};  // 100 GB/s = 1e5 bytes/us, 2 us per step
  const int64_t bytes = 8 << 20;
  const double beta = bytes / 1e5;
  EXPECT_NEAR(CollectiveUs(CollectiveKind::kPsum, bytes, axis), 2 * 7 * 2 + 2 * 7.0 / 8 * beta,
              1e-9);
  EXPECT_NEAR(CollectiveUs(CollectiveKind::kAllGather, bytes, axis), 7 * 2 + 7.0 / 8 * beta, 1e-9);
  EXPECT_NEAR(CollectiveUs(CollectiveKind::kPsumScatter, bytes, axis), 7 * 2 + 7.0 / 8 * beta,
              1e-9);
  EXPECT_NEAR(CollectiveUs(CollectiveKind::kAllToAll, bytes, axis), 7 * 2 + 7.0 / 8 * beta, 1e-9);
  EXPECT_NEAR(CollectiveUs(CollectiveKind::kPpermute, bytes, axis), 2 + beta, 1e-9);
  EXPECT_EQ(CollectiveUs(CollectiveKind::kSlice, bytes, axis), 0);
  EXPECT_EQ(CollectiveUs(CollectiveKind::kPsum, bytes, MeshAxis{"one", 1, 100, 2}), 0);
}

TEST(SplitStrategyTest, PerDeviceFusionRoundTrips) {
  const Mesh mesh = Mesh42();
  Split split = Enumerate(Load("split_reduce.hlo"), mesh);
  for (const Strategy& s : split.strategies) {
    auto shard = ShardModule(*split.module, split.labels, mesh, s);
    ASSERT_TRUE(shard.has_value()) << Describe(s) << ": " << shard.error().message;
    const std::string text = hlo::PrintModule(**shard);
    auto again = hlo::ParseHloModule(text);
    ASSERT_TRUE(again.has_value()) << again.error().message;
    EXPECT_EQ(hlo::PrintModule(**again), text);
    const hlo::HloComputation& fusion = *(*shard)->fusion();
    for (int64_t p = 0; p < fusion.parameter_count(); ++p) {
      const auto dims = fusion.parameter(p)->shape().dims();
      EXPECT_EQ(std::vector<int64_t>(dims.begin(), dims.end()), s.param_blocks[p]);
    }
    // The wrapper follows: the entry's parameters and fusion have the block shapes too.
    EXPECT_TRUE((*shard)->entry()->root()->shape() == fusion.root()->shape());
  }
}

TEST(SplitStrategyTest, PartialSumsMustNotFeedMoreOps) {
  auto module = hlo::ParseHloModule(R"(
    add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
    ENTRY e {
      p = f32[8,12] parameter(0)
      z = f32[] constant(0)
      r = f32[8] reduce(p, z), dimensions={1}, to_apply=add
      ROOT t = f32[8] tanh(r)
    })");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const Mesh mesh = Mesh42();
  Split split = Enumerate(std::move(*module), mesh);
  for (const Strategy& s : split.strategies) {
    EXPECT_EQ(BlockShape(s.param_specs[0], std::vector<int64_t>{8, 12}, mesh)[1], 12)
        << "tanh of a partial sum is not the sum of tanhs: " << Describe(s);
  }
  ExpectEveryStrategySimulates(split, mesh);
}

TEST(SplitStrategyTest, RequestErrors) {
  const Mesh mesh = Mesh42();
  auto module = Load("split_matmul.hlo");
  auto labels = LabelDims(*module->fusion());
  ASSERT_TRUE(labels.has_value());
  SplitRequest too_many{{Spec("P()"), Spec("P()"), Spec("P()")}, {}};
  auto a = EnumerateStrategies(*module->fusion(), *labels, mesh, too_many);
  ASSERT_FALSE(a.has_value());
  EXPECT_NE(a.error().message.find("3 input specs for a fusion with 2 parameters"),
            std::string::npos);
  SplitRequest indivisible{{}, {Spec("P(None, ('i', 'j'))")}};
  auto b = EnumerateStrategies(*module->fusion(), *labels, mesh, indivisible);
  ASSERT_FALSE(b.has_value());
  EXPECT_NE(b.error().message.find("output spec of output 0"), std::string::npos);
  EXPECT_NE(b.error().message.find("dim 1 of size 4 is not divisible"), std::string::npos);
}

}  // namespace
}  // namespace tilesmith::split
