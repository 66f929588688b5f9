// Schedules of known graphs: the spec's numbers worked through by hand, TilingData names,
// reductions, transposes, and graphs that cannot fit.
#include "costmodel/ascend/schedule.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "compiler/ascgraph/reader.h"
#include "costmodel/ascend/platform.h"
#include "tests/costmodel/test_graphs.h"

namespace tilesmith::costmodel::ascend {
namespace {

using hlo::PrimitiveType;
using testing::GraphBuilder;

ascgraph::Platform Platform910(const std::string& name) {
  return *LoadPlatform(name, std::string(TILESMITH_SOURCE_DIR) + "/configs/devices");
}

std::string CorpusDir() {
  const char* dir = std::getenv("TILESMITH_CORPUS_DIR");
  return dir != nullptr ? dir : TILESMITH_DEFAULT_CORPUS_DIR;
}

std::map<std::string, int64_t> Fields(const Schedule& schedule) {
  std::map<std::string, int64_t> fields;
  for (const auto& [name, value] : schedule.model.TilingData(
           schedule.pick.tiling_case, schedule.pick.point, schedule.pick.evaluation)) {
    fields[name] = value;
  }
  return fields;
}

// The real AutoFuse graph of the corpus (six Abs over f32[1024, 1025, 10]) on a 910B1,
// worked by hand from the spec's numbers:
//   The three axes are contiguous everywhere, so they merge: z0z1z2 = 10,496,000 floats.
//   Buffers: q0 (the Load, x2), b0/b1 (the Abs results alternate), q1 (the stored Abs, x2):
//   six tiles of 4·t bytes; 6 · 4t ≤ 196,352 gives t ≤ 8181, so the binary search stops at
//   8176 (a multiple of 8 floats = 32 bytes).
//   Outer tiles ceil(10,496,000 / 8176) = 1284 on 48 cores: Tb = 27, 48 cores used.
//   Improvement: Tb stays 27 while ceil(10,496,000 / t) ≤ 48 · 27 = 1296, i.e. t ≥ 8098.8,
//   and each smaller tile moves fewer bytes, so the solver walks down to t = 8104.
//   Per tile S = 8104 · 4 = 32,416 bytes:
//   MTE2 = 27 · (32416 / (9.9074 + 15.896 / 48) + 27.01) + 1575 + 32.7 · 48
//        = 27 · (3166.07 + 27.01) + 3144.6 = 89,357.7
//   MTE3 = 27 · (32416 / (9.96 + 3.79 / 48) + 12.09) + 497 = 27 · 3241.11 + 497 = 88,007.0
//   VEC  = 27 · 6 · (0.0206 · 8104 + 23.2) + 37 = 30,840.1   (Abs costed like fp32 Add)
//   objective = 89,357.7 + 300 · 48 = 103,757.7
TEST(ScheduleTest, CorpusAbsChainMatchesTheHandWorkedExample) {
  std::string path = CorpusDir() + "/ascgraph/abs_chain_f32_1024x1025x10.ascgraph.txt";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no corpus at " << path;
  auto request = ascgraph::ReadRequestFile(path);
  ASSERT_TRUE(request) << request.error().message;
  auto schedule = ScheduleRequest(*request, Platform910("910b1"));
  ASSERT_TRUE(schedule) << schedule.error().message;
  const Candidate& pick = schedule->pick;
  ASSERT_EQ(schedule->model.nest().axes.size(), 1u);
  EXPECT_EQ(schedule->model.nest().axes[0].name, "z0z1z2");
  EXPECT_EQ(pick.point.tiles, (std::vector<int64_t>{8104}));
  EXPECT_EQ(pick.evaluation.outer_tiles, 1296);
  EXPECT_EQ(pick.evaluation.tb_size, 27);
  EXPECT_EQ(pick.evaluation.block_dim, 48);
  EXPECT_EQ(pick.evaluation.ub_used, 6 * 32416);
  EXPECT_NEAR(pick.evaluation.cycles.mte2, 89357.7, 0.1);
  EXPECT_NEAR(pick.evaluation.cycles.mte3, 88007.0, 0.1);
  EXPECT_NEAR(pick.evaluation.cycles.vec, 30840.1, 0.1);
  EXPECT_NEAR(pick.evaluation.objective, 103757.7, 0.1);
  EXPECT_EQ(pick.evaluation.cycles.Bottleneck(), Pipe::kMte2);
  std::map<std::string, int64_t> fields = Fields(*schedule);
  EXPECT_EQ(fields.at("block_dim"), 48);
  EXPECT_EQ(fields.at("ub_size"), 194496);
  EXPECT_EQ(fields.at("tiling_key"), 0);
  EXPECT_EQ(fields.at("z0z1z2t_size"), 8104);
  EXPECT_EQ(fields.at("z0z1z2Tb_size"), 27);
  EXPECT_EQ(fields.at("q0_size"), 32416);
  EXPECT_EQ(fields.at("q1_size"), 32416);
  EXPECT_EQ(schedule->pick_rank, 1u);  // the greedy answer is also the model's best here
}

TEST(ScheduleTest, FewerCoresOnA910B3) {
  std::string path = CorpusDir() + "/ascgraph/abs_chain_f32_1024x1025x10.ascgraph.txt";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no corpus at " << path;
  auto request = ascgraph::ReadRequestFile(path);
  ASSERT_TRUE(request) << request.error().message;
  auto schedule = ScheduleRequest(*request, Platform910("910b3"));
  ASSERT_TRUE(schedule) << schedule.error().message;
  // 40 cores: Tb = ceil(1284 / 40) = 33; Tb stays 33 down to ceil(10,496,000 / 1320) = 7952.
  EXPECT_EQ(schedule->pick.evaluation.block_dim, 40);
  EXPECT_EQ(schedule->pick.evaluation.tb_size, 33);
  EXPECT_EQ(schedule->pick.point.tiles, (std::vector<int64_t>{7952}));
}

TEST(ScheduleTest, TilingDataNamesFollowTheSplits) {
  // Broadcast-add of a row: z0 and z1 cannot merge. Splitting z0 keeps whole rows.
  GraphBuilder b("broadcast_add");
  int64_t z0 = b.Axis(1000), z1 = b.Axis(1000);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {z0, z1}));
  std::string row = b.Input(b.Tensor(PrimitiveType::kF32, {z0, z1}, {z0}));
  std::string wide = b.Node("Broadcast", {row}, b.Tensor(PrimitiveType::kF32, {z0, z1}));
  b.Result(b.Node("Add", {x, wide}, b.Tensor(PrimitiveType::kF32, {z0, z1})));
  auto schedule = ScheduleRequest(b.request(), Platform910("910b1"));
  ASSERT_TRUE(schedule) << schedule.error().message;
  ASSERT_EQ(schedule->model.cases().size(), 2u);  // split z0 (key 0) or z1 (key 1)
  EXPECT_EQ(schedule->model.BlockAxisName(schedule->model.cases()[0]), "z0T");
  EXPECT_EQ(schedule->model.BlockAxisName(schedule->model.cases()[1]), "z0z1T");
  std::map<std::string, int64_t> fields = Fields(*schedule);
  if (schedule->pick.tiling_case.key == 0) {
    EXPECT_TRUE(fields.contains("z0t_size") && fields.contains("z0Tb_size"));
  } else {
    EXPECT_TRUE(fields.contains("z1t_size") && fields.contains("z0z1Tb_size"));
  }
  EXPECT_EQ(fields.at("tiling_key"), schedule->pick.tiling_case.key);
  EXPECT_EQ(fields.at("ub_size"), schedule->pick.evaluation.ub_used);
  for (const char* buffer : {"q0_size", "q1_size", "b0_size", "q2_size"}) {
    EXPECT_TRUE(fields.contains(buffer)) << buffer;
  }
}

TEST(ScheduleTest, LargeReductionsSplitTheReduceAxes) {
  // Sum over r0, r1 of [a0, r0, a1, r1] with 4 MiB per a0: the r group must be tiled and
  // its outer loop runs inside each core.
  GraphBuilder b("arar");
  int64_t a0 = b.Axis(64), r0 = b.Axis(1024), a1 = b.Axis(8), r1 = b.Axis(128);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {a0, r0, a1, r1}));
  b.Result(b.Node("Sum", {x}, b.Tensor(PrimitiveType::kF32, {a0, r0, a1, r1}, {r0, r1})));
  auto schedule = ScheduleRequest(b.request(), Platform910("910b2"));
  ASSERT_TRUE(schedule) << schedule.error().message;
  const Candidate& pick = schedule->pick;
  EXPECT_GT(pick.evaluation.reduce_loops, 1);
  EXPECT_LE(pick.evaluation.block_dim, 48);
  EXPECT_TRUE(schedule->model.Violations(pick.tiling_case, pick.point, pick.evaluation).empty());
  // Every r-group split keeps r out of the block axis.
  for (const TilingCase& tiling_case : schedule->model.cases()) {
    std::string block = schedule->model.BlockAxisName(tiling_case);
    EXPECT_EQ(block.find("z1"), std::string::npos) << block;
    EXPECT_EQ(block.find("z3"), std::string::npos) << block;
  }
}

TEST(ScheduleTest, ATransposeTilesBothSidesAligned) {
  GraphBuilder b("transpose");
  int64_t z0 = b.Axis(4096), z1 = b.Axis(4096);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {z0, z1}));
  b.Result(b.Node("Transpose", {x}, b.Tensor(PrimitiveType::kF32, {z1, z0})));
  auto schedule = ScheduleRequest(b.request(), Platform910("910b4"));
  ASSERT_TRUE(schedule) << schedule.error().message;
  const Candidate& pick = schedule->pick;
  ASSERT_EQ(pick.point.tiles.size(), 2u);  // x and y groups
  for (int64_t tile : pick.point.tiles) {
    EXPECT_EQ(tile % 8, 0) << tile;  // both are some tensor's contiguous axis
    EXPECT_LT(tile, 4096);           // a whole row of either side would not fit
  }
  EXPECT_EQ(pick.evaluation.block_dim, 40);
  EXPECT_EQ(schedule->model.BlockAxisName(pick.tiling_case), "z0Tz1T");
}

TEST(ScheduleTest, ASoftmaxRowThatCannotFitIsAnError) {
  // 64K floats per row, the row needed whole by Sub and Div: far over 196,352 bytes.
  GraphBuilder b("softmax");
  int64_t z0 = b.Axis(8), z1 = b.Axis(65536);
  auto full = [&] { return b.Tensor(PrimitiveType::kF32, {z0, z1}); };
  auto reduced = [&] { return b.Tensor(PrimitiveType::kF32, {z0, z1}, {z1}); };
  std::string x = b.Input(full());
  std::string max = b.Node("Max", {x}, reduced());
  std::string shifted = b.Node("Sub", {x, b.Node("Broadcast", {max}, full())}, full());
  b.Result(shifted);
  auto schedule = ScheduleRequest(b.request(), Platform910("910b1"));
  ASSERT_FALSE(schedule);
  EXPECT_EQ(schedule.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(schedule.error().message.find("196352 usable"), std::string::npos)
      << schedule.error().message;
}

TEST(ScheduleTest, SmallWorkUsesFewCores) {
  // 300 cycles per core outweigh the saved transfer time of a small input.
  GraphBuilder b("small");
  int64_t z0 = b.Axis(4096);
  b.Result(b.Node("Abs", {b.Input(b.Tensor(PrimitiveType::kF32, {z0}))},
                  b.Tensor(PrimitiveType::kF32, {z0})));
  auto schedule = ScheduleRequest(b.request(), Platform910("910b1"));
  ASSERT_TRUE(schedule) << schedule.error().message;
  EXPECT_EQ(schedule->pick.evaluation.block_dim, 1);
  EXPECT_EQ(schedule->pick.point.tiles, (std::vector<int64_t>{4096}));
}

TEST(ScheduleTest, ScalarsAndSizeOneAxes) {
  GraphBuilder scalar("scalar");  // no axes at all
  scalar.Result(scalar.Node("Exp", {scalar.Input(scalar.Tensor(PrimitiveType::kF32, {}))},
                            scalar.Tensor(PrimitiveType::kF32, {})));
  auto schedule = ScheduleRequest(scalar.request(), Platform910("910b1"));
  ASSERT_TRUE(schedule) << schedule.error().message;
  EXPECT_EQ(schedule->pick.evaluation.block_dim, 1);
  EXPECT_EQ(schedule->pick.evaluation.ub_used, 4 * 32);  // two queues x 2, one element each
  EXPECT_EQ(schedule->model.BlockAxisName(schedule->pick.tiling_case), "");

  GraphBuilder ones("ones");
  std::vector<int64_t> axes = {ones.Axis(1), ones.Axis(1)};
  ones.Result(ones.Node("Abs", {ones.Input(ones.Tensor(PrimitiveType::kF16, axes))},
                        ones.Tensor(PrimitiveType::kF16, axes)));
  schedule = ScheduleRequest(ones.request(), Platform910("910b3"));
  ASSERT_TRUE(schedule) << schedule.error().message;
  EXPECT_EQ(schedule->model.nest().axes.size(), 1u);
  EXPECT_EQ(schedule->pick.point.tiles, (std::vector<int64_t>{1}));
}

TEST(ScheduleTest, AlternativesAreRankedAndBounded) {
  GraphBuilder b("broadcast_add");
  int64_t z0 = b.Axis(300), z1 = b.Axis(700);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF16, {z0, z1}));
  std::string row = b.Input(b.Tensor(PrimitiveType::kF16, {z0, z1}, {z0}));
  std::string wide = b.Node("Broadcast", {row}, b.Tensor(PrimitiveType::kF16, {z0, z1}));
  b.Result(b.Node("Add", {x, wide}, b.Tensor(PrimitiveType::kF16, {z0, z1})));
  auto three = ScheduleRequest(b.request(), Platform910("910b1"), {3});
  ASSERT_TRUE(three) << three.error().message;
  EXPECT_EQ(three->alternatives.size(), 3u);
  EXPECT_GT(three->alternatives_considered, 3u);
  auto none = ScheduleRequest(b.request(), Platform910("910b1"), {0});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->alternatives.empty());
  EXPECT_EQ(none->alternatives_considered, three->alternatives_considered);
  // Same input, same answer, byte for byte.
  EXPECT_EQ(ScheduleToJson(*three).dump(),
            ScheduleToJson(*ScheduleRequest(b.request(), Platform910("910b1"), {3})).dump());
}

TEST(ScheduleTest, JsonKeysAreStable) {
  GraphBuilder b("chain");
  int64_t z0 = b.Axis(1 << 20);
  b.Result(b.Node("Exp", {b.Input(b.Tensor(PrimitiveType::kF32, {z0}))},
                  b.Tensor(PrimitiveType::kF32, {z0})));
  auto schedule = ScheduleRequest(b.request(), Platform910("910b2"), {2});
  ASSERT_TRUE(schedule) << schedule.error().message;
  nlohmann::json json = ScheduleToJson(*schedule);
  for (const char* key : {"target", "predicted", "graph", "platform", "axes", "groups", "block",
                          "buffers", "tiling_data", "cycles", "constraints", "pick", "pick_rank",
                          "model_best", "alternatives_considered", "alternatives", "assumptions"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["target"], "ascend:910b2");
  EXPECT_EQ(json["predicted"], true);
  EXPECT_EQ(json["constraints"]["ok"], true);
  EXPECT_EQ(json["tiling_data"]["block_dim"], json["block"]["block_dim"]);
  EXPECT_EQ(json["cycles"]["bottleneck"], "MTE2");
  EXPECT_TRUE(json["assumptions"].empty());  // fp32 Exp is a published coefficient
  std::string text = ScheduleToText(*schedule);
  EXPECT_NE(text.find("tiling data   block_dim="), std::string::npos) << text;
  EXPECT_NE(text.find("<- pick"), std::string::npos) << text;
}

}  // namespace
}  // namespace tilesmith::costmodel::ascend
