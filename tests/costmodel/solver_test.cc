// The tiling solvers: tile ranges, the binary search of the public solver, and how close
// the greedy answer and the enumeration come to the exhaustive optimum on small graphs.
#include "costmodel/ascend/solver.h"

#include <gtest/gtest.h>

#include <iostream>

#include "tests/costmodel/test_graphs.h"

namespace tilesmith::costmodel::ascend {
namespace {

using hlo::PrimitiveType;
using testing::GraphBuilder;

TilingModel Model(ascgraph::Request& request, ascgraph::Platform platform) {
  auto bound = ascgraph::BindAndValidate(request);
  EXPECT_TRUE(bound) << bound.error().message;
  auto nest = BuildLoopNest(*bound);
  EXPECT_TRUE(nest) << nest.error().message;
  return TilingModel(std::move(*nest), std::move(platform));
}

TEST(TileRangeTest, AlignedStepsThenTheWholeAxis) {
  TileRange range{100, 8};  // 8, 16, …, 96, 100
  EXPECT_EQ(range.Count(), 13);
  EXPECT_EQ(range.At(0), 8);
  EXPECT_EQ(range.At(11), 96);
  EXPECT_EQ(range.At(12), 100);
  EXPECT_EQ(range.IndexOf(50), 5);  // 48
  EXPECT_EQ(range.IndexOf(7), 0);
  EXPECT_EQ(range.IndexOf(100), 12);
  EXPECT_EQ(range.IndexOf(1000), 12);
  TileRange exact{64, 8};  // 8 … 64: the last aligned step is the whole axis
  EXPECT_EQ(exact.Count(), 8);
  EXPECT_EQ(exact.At(7), 64);
  TileRange small{5, 8};  // shorter than one aligned step: only the whole axis
  EXPECT_EQ(small.Count(), 1);
  EXPECT_EQ(small.At(0), 5);
}

TEST(SolverTest, BinarySearchStopsAtTheLargestTileThatFits) {
  GraphBuilder b("reduce");
  int64_t a = b.Axis(3000), r = b.Axis(5000);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {a, r}));
  b.Result(b.Node("Sum", {x}, b.Tensor(PrimitiveType::kF32, {a, r}, {r})));
  TilingModel model = Model(b.request(), {"t", 40, 196352});
  for (const TilingCase& tiling_case : model.cases()) {
    auto point = LargestFittingTiles(model, tiling_case);
    ASSERT_TRUE(point) << tiling_case.key;
    EXPECT_LE(model.UbUsed(tiling_case, point->tiles), 196352);
    // Growing any tile by one step overflows, except where a tile is the whole axis.
    for (size_t g = 0; g < model.groups().size(); ++g) {
      TileRange range = model.Tiles(tiling_case, g);
      int64_t index = range.IndexOf(point->tiles[g]);
      if (tiling_case.split[g] < 0 || index + 1 >= range.Count()) continue;
      std::vector<int64_t> bigger = point->tiles;
      bigger[g] = range.At(index + 1);
      EXPECT_GT(model.UbUsed(tiling_case, bigger), 196352) << "case " << tiling_case.key;
    }
    EXPECT_EQ(point->block_dim, std::min<int64_t>(40, model.OuterTiles(tiling_case, point->tiles)));
  }
  // Keys number the cases in order: y split on z0 with r split on z1.
  ASSERT_EQ(model.cases().size(), 1u);
  EXPECT_EQ(model.cases()[0].key, 0);
}

// Every tile of every group and every core count: the model's true optimum.
Candidate Exhaustive(const TilingModel& model) {
  std::optional<Candidate> best;
  for (const TilingCase& tiling_case : model.cases()) {
    std::vector<size_t> groups;
    for (size_t g = 0; g < tiling_case.split.size(); ++g) {
      if (tiling_case.split[g] >= 0) groups.push_back(g);
    }
    std::vector<int64_t> index(groups.size(), 0);
    TilingPoint point = model.SmallestPoint(tiling_case);
    while (true) {
      for (size_t i = 0; i < groups.size(); ++i) {
        point.tiles[groups[i]] = model.Tiles(tiling_case, groups[i]).At(index[i]);
      }
      if (model.UbUsed(tiling_case, point.tiles) <= model.platform().ub_bytes) {
        for (int64_t cores = 1; cores <= model.platform().vector_cores; ++cores) {
          point.block_dim = cores;
          Evaluation evaluation = model.Evaluate(tiling_case, point);
          TilingPoint used = point;
          used.block_dim = evaluation.block_dim;
          Candidate candidate{tiling_case, used, evaluation};
          if (!best || CheaperThan(candidate, *best)) best = candidate;
        }
      }
      size_t i = groups.size();
      while (i > 0 && ++index[i - 1] == model.Tiles(tiling_case, groups[i - 1]).Count()) {
        index[--i] = 0;
      }
      if (i == 0) break;
    }
  }
  return *best;
}

TEST(SolverTest, SmallGraphsAgainstTheExhaustiveOptimum) {
  struct Graph {
    std::string name;
    ascgraph::Request request;
  };
  std::vector<Graph> graphs;
  for (int64_t size : {1000, 7777, 20000}) {
    GraphBuilder b("add");
    int64_t z0 = b.Axis(size);
    std::string x = b.Input(b.Tensor(PrimitiveType::kF16, {z0}));
    std::string y = b.Input(b.Tensor(PrimitiveType::kF16, {z0}));
    b.Result(b.Node("Add", {x, y}, b.Tensor(PrimitiveType::kF16, {z0})));
    graphs.push_back({"add f16 " + std::to_string(size), b.request()});
  }
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{96, 200}, {500, 64}, {33, 1000}}) {
    GraphBuilder b("broadcast");
    int64_t z0 = b.Axis(rows), z1 = b.Axis(cols);
    std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {z0, z1}));
    std::string row = b.Input(b.Tensor(PrimitiveType::kF32, {z0, z1}, {z0}));
    std::string wide = b.Node("Broadcast", {row}, b.Tensor(PrimitiveType::kF32, {z0, z1}));
    b.Result(b.Node("Mul", {x, wide}, b.Tensor(PrimitiveType::kF32, {z0, z1})));
    graphs.push_back(
        {"broadcast " + std::to_string(rows) + "x" + std::to_string(cols), b.request()});
  }
  {
    GraphBuilder b("transpose");
    int64_t z0 = b.Axis(256), z1 = b.Axis(320);
    std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {z0, z1}));
    b.Result(b.Node("Transpose", {x}, b.Tensor(PrimitiveType::kF32, {z1, z0})));
    graphs.push_back({"transpose 256x320", b.request()});
  }
  {
    GraphBuilder b("reduce");
    int64_t a = b.Axis(40), r = b.Axis(3000);
    std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {a, r}));
    b.Result(b.Node("Sum", {x}, b.Tensor(PrimitiveType::kF32, {a, r}, {r})));
    graphs.push_back({"reduce 40x3000", b.request()});
  }
  int best_found = 0, pick_optimal = 0, runs = 0;
  for (Graph& graph : graphs) {
    for (ascgraph::Platform platform :
         {ascgraph::Platform{"910b1", 48, 196352}, ascgraph::Platform{"small", 6, 24576}}) {
      TilingModel model = Model(graph.request, platform);
      Candidate optimum = Exhaustive(model);
      auto solved = SolveAllCases(model);
      ASSERT_TRUE(solved) << solved.error().message;
      std::vector<Candidate> ranked = EnumerateAlternatives(model, *solved);
      double best = optimum.evaluation.objective;
      EXPECT_GE(ranked.front().evaluation.objective, best - 1e-6) << graph.name;
      EXPECT_GE(solved->front().evaluation.objective, best - 1e-6) << graph.name;
      // The greedy answer stays within 2% of the optimum on these graphs.
      EXPECT_LE(solved->front().evaluation.objective, best * 1.02)
          << graph.name << " on " << platform.name;
      ++runs;
      best_found += ranked.front().evaluation.objective <= best + 1e-6;
      pick_optimal += solved->front().evaluation.objective <= best + 1e-6;
    }
  }
  std::cout << "of " << runs << " small schedules, the enumeration finds the optimum in "
            << best_found << ", the greedy solver in " << pick_optimal << "\n";
  EXPECT_EQ(best_found, runs);
}

}  // namespace
}  // namespace tilesmith::costmodel::ascend
