// Every answer keeps the constraints (unified buffer with 32-byte rounding and buffer
// counts, block_dim within the cores, aligned tiles of contiguous axes), for random graphs
// (elementwise chains, broadcasts, reductions, transposes, casts, softmax) and the shipped
// examples, on every platform and many sizes. The ranking is consistent, and the greedy
// solver's pick is never cheaper than the model's best (how often it is the best, and how
// far off otherwise, is printed).
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <random>

#include "compiler/ascgraph/reader.h"
#include "costmodel/ascend/platform.h"
#include "costmodel/ascend/schedule.h"
#include "tests/costmodel/test_graphs.h"

namespace tilesmith::costmodel::ascend {
namespace {

using hlo::PrimitiveType;
using testing::GraphBuilder;

std::vector<ascgraph::Platform> Platforms() {
  std::vector<ascgraph::Platform> platforms;
  for (const std::string& name : KnownPlatformNames()) {
    platforms.push_back(
        *LoadPlatform(name, std::string(TILESMITH_SOURCE_DIR) + "/configs/devices"));
  }
  platforms.push_back({"tiny", 3, 16384});  // a custom platform: few cores, small buffer
  return platforms;
}

struct Stats {
  int schedules = 0;
  int too_big = 0;
  int pick_is_best = 0;
  double worst_gap = 0;  // (pick - best) / best
};

std::string Violations(const TilingModel& model, const Candidate& candidate) {
  std::string text;
  for (const std::string& violation :
       model.Violations(candidate.tiling_case, candidate.point, candidate.evaluation)) {
    text += violation + "; ";
  }
  return text;
}

// Checks one candidate without trusting Violations(): the same facts, computed again.
void CheckCandidate(const TilingModel& model, const Candidate& candidate, const std::string& what) {
  const ascgraph::Platform& platform = model.platform();
  const Evaluation& e = candidate.evaluation;
  EXPECT_EQ(Violations(model, candidate), "") << what;
  EXPECT_TRUE(e.fits) << what;
  EXPECT_LE(e.ub_used, platform.ub_bytes) << what;
  EXPECT_GE(e.block_dim, 1) << what;
  EXPECT_LE(e.block_dim, platform.vector_cores) << what;
  EXPECT_GE(e.block_dim * e.tb_size, e.outer_tiles) << what;
  EXPECT_LT((e.block_dim - 1) * e.tb_size, e.outer_tiles) << what;
  int64_t sum = 0;
  for (size_t b = 0; b < model.nest().buffers.size(); ++b) {
    EXPECT_EQ(e.buffer_bytes[b] % 32, 0) << what << " buffer " << model.nest().buffers[b].name;
    int count = model.nest().buffers[b].count;
    EXPECT_EQ(count, model.nest().buffers[b].kind == BufferKind::kInQueue ||
                             model.nest().buffers[b].kind == BufferKind::kOutQueue
                         ? 2
                         : 1);
    sum += e.buffer_bytes[b] * count;
  }
  EXPECT_EQ(sum, e.ub_used) << what;
  // A tile of a moved tensor's contiguous axis is whole 32-byte blocks or the whole axis.
  for (size_t g = 0; g < model.groups().size(); ++g) {
    int split = candidate.tiling_case.split[g];
    if (split < 0) continue;
    int64_t tile = candidate.point.tiles[g], size = model.nest().axes[split].size;
    EXPECT_GE(tile, 1) << what;
    EXPECT_LE(tile, size) << what;
    for (const ScheduledNode& node : model.nest().nodes) {
      if (node.role == NodeRole::kVector) continue;
      const UbTensor& tensor = model.nest().tensors[node.tensors[0]];
      if (tensor.innermost == split && tile != size) {
        EXPECT_EQ(tile * tensor.elem_bytes % 32, 0) << what << " " << node.name << " tile " << tile;
      }
    }
  }
  Evaluation again = model.Evaluate(candidate.tiling_case, candidate.point);
  EXPECT_DOUBLE_EQ(again.objective, e.objective) << what;
  EXPECT_EQ(again.block_dim, candidate.point.block_dim) << what;
}

void CheckSchedule(const ascgraph::Request& request, const ascgraph::Platform& platform,
                   const std::string& what, Stats& stats) {
  auto schedule = ScheduleRequest(request, platform, {1u << 20});
  if (!schedule) {
    ASSERT_EQ(schedule.error().code, ErrorCode::kResourceExhausted)
        << what << ": " << schedule.error().message;
    // Only when no case fits even with its smallest tiles.
    auto bound = ascgraph::BindAndValidate(request);
    ASSERT_TRUE(bound);
    TilingModel model(*BuildLoopNest(*bound), platform);
    for (const TilingCase& tiling_case : model.cases()) {
      EXPECT_GT(model.UbUsed(tiling_case, model.SmallestPoint(tiling_case).tiles),
                platform.ub_bytes)
          << what << " case " << tiling_case.key;
    }
    ++stats.too_big;
    return;
  }
  ++stats.schedules;
  const TilingModel& model = schedule->model;
  CheckCandidate(model, schedule->pick, what + " pick");
  CheckCandidate(model, schedule->model_best, what + " model best");
  const std::vector<Candidate>& ranked = schedule->alternatives;
  ASSERT_EQ(ranked.size(), schedule->alternatives_considered) << what;
  for (size_t i = 0; i < ranked.size(); ++i) {
    CheckCandidate(model, ranked[i], what + " alternative " + std::to_string(i + 1));
    if (i > 0) {
      EXPECT_LE(ranked[i - 1].evaluation.objective, ranked[i].evaluation.objective + 1e-9);
      EXPECT_TRUE(CheaperThan(ranked[i - 1], ranked[i])) << what << " duplicate at " << i;
    }
  }
  EXPECT_EQ(ranked.front().evaluation.objective, schedule->model_best.evaluation.objective);
  // The pick is one of the ranked candidates, at its rank.
  ASSERT_GE(schedule->pick_rank, 1u);
  ASSERT_LE(schedule->pick_rank, ranked.size());
  const Candidate& at_rank = ranked[schedule->pick_rank - 1];
  EXPECT_EQ(at_rank.tiling_case.key, schedule->pick.tiling_case.key) << what;
  EXPECT_EQ(at_rank.point, schedule->pick.point) << what;
  double best = schedule->model_best.evaluation.objective;
  double pick = schedule->pick.evaluation.objective;
  EXPECT_LE(best, pick + 1e-9) << what;
  if (schedule->pick_rank == 1) ++stats.pick_is_best;
  stats.worst_gap = std::max(stats.worst_gap, (pick - best) / best);
}

// A random valid HintGraph: one of six shapes of computation over 1-4 axes.
ascgraph::Request RandomGraph(std::mt19937_64& rng, std::string& description) {
  auto pick = [&](auto const& options) { return options[rng() % options.size()]; };
  static const std::vector<int64_t> kSizes = {1,   2,   3,   7,    8,    16,   31,   64,
                                              100, 128, 255, 1000, 1024, 4097, 65536};
  static const std::vector<PrimitiveType> kFloats = {PrimitiveType::kF16, PrimitiveType::kF32,
                                                     PrimitiveType::kBF16};
  static const std::vector<PrimitiveType> kAny = {PrimitiveType::kF16, PrimitiveType::kF32,
                                                  PrimitiveType::kS8, PrimitiveType::kS32,
                                                  PrimitiveType::kU8};
  int shape = static_cast<int>(rng() % 6);
  int rank = 1 + static_cast<int>(rng() % 4);
  if (shape == 3) rank = std::max(rank, 2);  // a transpose needs two axes
  GraphBuilder b("random");
  std::vector<int64_t> axes;
  int64_t elements = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t size = pick(kSizes);
    while (elements * size > (int64_t{1} << 26)) size = std::max<int64_t>(1, size / 16);
    elements *= size;
    axes.push_back(b.Axis(size));
  }
  PrimitiveType type = shape == 5                   ? PrimitiveType::kF16
                       : (shape == 0 || shape == 4) ? pick(kFloats)
                                                    : pick(kAny);
  auto tensor = [&](std::vector<int64_t> order = {}, std::vector<int64_t> ones = {}) {
    return b.Tensor(type, order.empty() ? axes : order, ones);
  };
  std::vector<int64_t> subset;  // a random non-empty subset of the axes
  for (int64_t axis : axes) {
    if (rng() % 2) subset.push_back(axis);
  }
  if (subset.empty()) subset.push_back(pick(axes));
  std::string x = b.Input(tensor());
  switch (shape) {
    case 0: {  // elementwise chain
      int length = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < length; ++i) {
        x = b.Node(pick(std::vector<std::string>{"Abs", "Exp", "Neg", "Relu", "Sigmoid", "Sqrt"}),
                   {x}, tensor());
      }
      description = "chain of " + std::to_string(length);
      break;
    }
    case 1: {  // broadcast binary
      std::string row = b.Input(tensor({}, subset));
      std::string wide = b.Node("Broadcast", {row}, tensor());
      x = b.Node(pick(std::vector<std::string>{"Add", "Mul", "Sub", "Max"}), {x, wide}, tensor());
      description = "broadcast binary";
      break;
    }
    case 2: {  // reduction, kept dims
      if (rng() % 2) x = b.Node("Abs", {x}, tensor());
      x = b.Node(pick(std::vector<std::string>{"Sum", "Max", "Min", "Prod"}), {x},
                 tensor({}, subset));
      description = "reduction";
      break;
    }
    case 3: {  // swap two axes
      size_t i = rng() % axes.size(), j = rng() % axes.size();
      if (i == j) j = (i + 1) % axes.size();
      std::vector<int64_t> order = axes;
      std::swap(order[i], order[j]);
      x = b.Node("Transpose", {x}, tensor(order));
      if (rng() % 2) x = b.Node("Abs", {x}, tensor(order));
      description = "transpose";
      break;
    }
    case 4: {  // softmax over the last axis
      std::vector<int64_t> last = {axes.back()};
      std::string max = b.Node("Max", {x}, tensor({}, last));
      std::string shifted = b.Node("Sub", {x, b.Node("Broadcast", {max}, tensor())}, tensor());
      std::string exp = b.Node("Exp", {shifted}, tensor());
      std::string sum = b.Node("Sum", {exp}, tensor({}, last));
      x = b.Node("Div", {exp, b.Node("Broadcast", {sum}, tensor())}, tensor());
      description = "softmax";
      break;
    }
    default: {  // cast f16 -> f32, then exp
      x = b.Node("Cast", {x}, b.Tensor(PrimitiveType::kF32, axes));
      x = b.Node("Exp", {x}, b.Tensor(PrimitiveType::kF32, axes));
      description = "cast + exp";
      break;
    }
  }
  b.Result(x);
  description += " " + testing::TypeName(type) + " [";
  for (int64_t axis : axes)
    description += std::to_string(b.request().sizes.at("s" + std::to_string(axis))) + ",";
  description += "]";
  return b.request();
}

TEST(SchedulePropertyTest, RandomGraphsKeepEveryConstraint) {
  std::mt19937_64 rng(20260103);
  Stats stats;
  std::vector<ascgraph::Platform> platforms = Platforms();
  for (int i = 0; i < 150; ++i) {
    std::string description;
    ascgraph::Request request = RandomGraph(rng, description);
    ASSERT_TRUE(ascgraph::ValidateRequest(request))
        << description << ": " << ascgraph::ValidateRequest(request).error().message;
    for (const ascgraph::Platform& platform : platforms) {
      CheckSchedule(request, platform,
                    "#" + std::to_string(i) + " " + description + " on " + platform.name, stats);
    }
  }
  std::cout << stats.schedules << " schedules, " << stats.too_big << " too big for the buffer; "
            << "the solver's pick is the model's best in " << stats.pick_is_best << ", worst gap "
            << 100 * stats.worst_gap << "%\n";
  EXPECT_GT(stats.schedules, 500);
  // The greedy solver is a local search: a regression guard on how far it may fall behind.
  EXPECT_LT(stats.worst_gap, 0.05);
}

TEST(SchedulePropertyTest, ShippedExamplesKeepEveryConstraint) {
  std::filesystem::path dir =
      std::filesystem::path(TILESMITH_SOURCE_DIR) / "configs/examples/ascgraph";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no examples at " << dir;
  std::mt19937_64 rng(7);
  static const std::vector<int64_t> kSizes = {1, 5, 16, 77, 128, 1000, 2048, 4096, 30000};
  Stats stats;
  std::vector<ascgraph::Platform> platforms = Platforms();
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string path = entry.path().string();
    if (!ascgraph::IsAscGraphPath(path)) continue;
    auto base = ascgraph::ReadRequestFile(path);
    ASSERT_TRUE(base) << base.error().message;
    for (int round = 0; round < 8; ++round) {
      ascgraph::Request request = *base;
      for (const std::string& var : request.graph.size_vars) {
        if (round > 0 || !request.sizes.contains(var))
          request.sizes[var] = kSizes[rng() % kSizes.size()];
      }
      for (const ascgraph::Platform& platform : platforms) {
        CheckSchedule(request, platform,
                      path + " round " + std::to_string(round) + " on " + platform.name, stats);
      }
    }
  }
  std::cout << stats.schedules << " schedules, " << stats.too_big << " too big; pick is best in "
            << stats.pick_is_best << ", worst gap " << 100 * stats.worst_gap << "%\n";
  EXPECT_GT(stats.schedules, 100);
  EXPECT_LT(stats.worst_gap, 0.05);
}

}  // namespace
}  // namespace tilesmith::costmodel::ascend
