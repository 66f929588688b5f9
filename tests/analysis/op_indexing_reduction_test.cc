// Output -> input maps of ops that read many elements per output (reduce, reduce-window,
// dot, sort) and of data-dependent ones (gather, scatter), checked against the evaluator:
// sums of what the maps read, and which outputs change when one input element does.
#include <gtest/gtest.h>

#include "compiler/analysis/op_indexing.h"
#include "tests/analysis/op_checks.h"

namespace tilesmith::analysis {
namespace {

using testing::EvaluateOp;
using testing::Evaluation;
using testing::ExpectDependenciesCovered;
using testing::ExpectInverseRelations;
using testing::ExpectSumOfReads;
using testing::Join;
using testing::Random;
using testing::ShapeText;

constexpr int kInstances = 25;

const char* const kAdd = R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
)";

std::string MapOf(const Evaluation& e, int64_t operand = 0) {
  return OutputToInputIndexing(*e.computation->root())[operand].ToString();
}

TEST(ReductionIndexingTest, ReduceReadsEveryReducedElement) {
  Random random(11);
  for (int i = 0; i < kInstances; ++i) {
    std::vector<int64_t> in = random.Dims(1, 4, 4);
    Evaluation e = EvaluateOp(
        {ShapeText(in), "s32[]"},
        "reduce(p0, p1), dimensions={" + Join(random.Subset(in.size())) + "}, to_apply=add", {},
        kAdd);
    ExpectSumOfReads(e);
    ExpectDependenciesCovered(e, 0);
    ExpectInverseRelations(*e.computation->root(), 0);
  }
  Evaluation e = EvaluateOp({"s32[3,4,5]", "s32[]"},
                            "reduce(p0, p1), dimensions={0,2}, to_apply=add", {}, kAdd);
  EXPECT_EQ(MapOf(e, 0),
            "(d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 3], s0 in [0, 2], s1 in [0, 4]");
  EXPECT_EQ(MapOf(e, 1), "(d0) -> (), domain: d0 in [0, 3]");
}

TEST(ReductionIndexingTest, VariadicReduce) {
  const char* argmax = R"(
argmax {
  a = s32[] parameter(0)
  i = s32[] parameter(1)
  b = s32[] parameter(2)
  j = s32[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  v = s32[] select(ge, a, b)
  k = s32[] select(ge, i, j)
  ROOT t = (s32[], s32[]) tuple(v, k)
}
)";
  Evaluation e = EvaluateOp({"s32[4,6]", "s32[4,6]", "s32[]", "s32[]"},
                            "(s32[4], s32[4]) reduce(p0, p1, p2, p3), dimensions={1}, "
                            "to_apply=argmax",
                            {}, argmax);
  for (int64_t output = 0; output < 2; ++output) {
    std::vector<IndexingMap> maps = OutputToInputIndexing(*e.computation->root(), output);
    ASSERT_EQ(maps.size(), 4u);
    EXPECT_EQ(maps[0].ToString(), "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 5]");
    EXPECT_EQ(maps[1], maps[0]);
    EXPECT_EQ(maps[3].ToString(), "(d0) -> (), domain: d0 in [0, 3]");
  }
}

TEST(ReductionIndexingTest, ReduceWindowReadsTheWindowOutsidePadding) {
  Random random(12);
  for (int i = 0; i < kInstances * 2; ++i) {
    std::vector<int64_t> in = random.Dims(1, 3, 5);
    std::string size, stride, pad, lhs_dilate, rhs_dilate;
    for (size_t d = 0; d < in.size(); ++d) {
      std::string x = d ? "x" : "";
      size += x + std::to_string(random.Uniform(1, 3));
      stride += x + std::to_string(random.Uniform(1, 2));
      pad += x + std::to_string(random.Uniform(0, 2)) + "_" + std::to_string(random.Uniform(0, 2));
      lhs_dilate += x + std::to_string(random.Uniform(1, 2));
      rhs_dilate += x + std::to_string(random.Uniform(1, 2));
    }
    // With init 0, padded positions contribute nothing whatever their treatment.
    Evaluation e = EvaluateOp({ShapeText(in), "s32[]"},
                              "reduce-window(p0, p1), window={size=" + size + " stride=" + stride +
                                  " pad=" + pad + " lhs_dilate=" + lhs_dilate +
                                  " rhs_dilate=" + rhs_dilate + "}, to_apply=add",
                              {{1, {0}}}, kAdd);
    if (e.result.element_count() == 0) continue;
    ExpectSumOfReads(e);
    ExpectDependenciesCovered(e, 0);
  }
  Evaluation e = EvaluateOp({"s32[6]", "s32[]"},
                            "reduce-window(p0, p1), window={size=3 stride=2 pad=1_1}, to_apply=add",
                            {{1, {0}}}, kAdd);
  EXPECT_EQ(MapOf(e),
            "(d0)[s0] -> (d0 * 2 + s0 - 1), domain: d0 in [0, 2], s0 in [0, 2], d0 * 2 + s0 in "
            "[1, 6]");
}

TEST(ReductionIndexingTest, DotSumsProductsOverContractingSymbols) {
  Random random(13);
  for (int i = 0; i < kInstances; ++i) {
    int64_t batch = random.Uniform(0, 1), contracting = random.Uniform(1, 2);
    std::vector<int64_t> b = random.Dims(batch, batch, 3);
    std::vector<int64_t> k = random.Dims(contracting, contracting, 3);
    std::vector<int64_t> m = random.Dims(0, 1, 3), n = random.Dims(0, 1, 3);
    // lhs = [batch…, m…, k…], rhs = [batch…, k…, n…].
    std::vector<int64_t> lhs = b, rhs = b;
    lhs.insert(lhs.end(), m.begin(), m.end());
    lhs.insert(lhs.end(), k.begin(), k.end());
    rhs.insert(rhs.end(), k.begin(), k.end());
    rhs.insert(rhs.end(), n.begin(), n.end());
    std::vector<int64_t> batch_dims, lhs_contracting, rhs_contracting;
    for (int64_t d = 0; d < batch; ++d) batch_dims.push_back(d);
    for (int64_t d = 0; d < contracting; ++d) {
      lhs_contracting.push_back(batch + static_cast<int64_t>(m.size()) + d);
      rhs_contracting.push_back(batch + d);
    }
    std::string line = "s64[] dot(p0, p1), lhs_contracting_dims={" + Join(lhs_contracting) +
                       "}, rhs_contracting_dims={" + Join(rhs_contracting) + "}";
    if (batch > 0) {
      line +=
          ", lhs_batch_dims={" + Join(batch_dims) + "}, rhs_batch_dims={" + Join(batch_dims) + "}";
    }
    line.replace(0, 5, "");  // let the parser infer the result shape
    Evaluation e = EvaluateOp({ShapeText(lhs, "s64"), ShapeText(rhs, "s64")}, line);
    const hlo::HloInstruction* root = e.computation->root();
    std::vector<IndexingMap> maps = OutputToInputIndexing(*root);
    ASSERT_EQ(maps[0].symbol_count(), maps[1].symbol_count());
    testing::ForEachIndex(testing::DimsOf(root->shape()), [&](std::span<const int64_t> out,
                                                              int64_t linear) {
      int64_t sum = 0;
      testing::ForEachSymbolValue(maps[0], e.args, [&](std::span<const int64_t> s) {
        sum += e.args[0].GetInt(testing::Linearize(maps[0].Evaluate(out, s), lhs)) *
               e.args[1].GetInt(testing::Linearize(maps[1].Evaluate(out, s), rhs));
      });
      ASSERT_EQ(sum, e.result.GetInt(linear)) << maps[0].ToString() << "\n" << maps[1].ToString();
    });
  }
  Evaluation e = EvaluateOp({"f32[2,3,4]", "f32[2,4,5]"},
                            "dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                            "lhs_contracting_dims={2}, rhs_contracting_dims={1}");
  EXPECT_EQ(MapOf(e, 0),
            "(d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 4], "
            "s0 in [0, 3]");
  EXPECT_EQ(MapOf(e, 1),
            "(d0, d1, d2)[s0] -> (d0, s0, d2), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 4], "
            "s0 in [0, 3]");
}

TEST(ReductionIndexingTest, SortReadsTheWholeRow) {
  const char* less = R"(
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
)";
  // The evaluator has no sort, so only the map is checked.
  auto module =
      testing::ParseOrDie(std::string(less) +
                          "ENTRY e {\n p0 = s32[3,4] parameter(0)\n"
                          " ROOT r = s32[3,4] sort(p0), dimensions={1}, to_apply=less\n}\n");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(OutputToInputIndexing(*module->entry()->root())[0].ToString(),
            "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 3], s0 in [0, 3]");
}

TEST(ReductionIndexingTest, GatherIndicesAreAffineTheOperandIsNot) {
  Evaluation e = EvaluateOp({"s32[5,4]", "s32[3,1]"},
                            "s32[3,4] gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, "
                            "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}",
                            {{1, {3, 0, 4}}});
  std::vector<IndexingMap> maps = OutputToInputIndexing(*e.computation->root());
  EXPECT_TRUE(maps[0].IsUndefined());
  // A one-component index vector: its symbol has one value and folds away.
  EXPECT_EQ(maps[1].ToString(), "(d0, d1) -> (d0, 0), domain: d0 in [0, 2], d1 in [0, 3]");
  ExpectDependenciesCovered(e, 1);
  // Index vector along dim 0 of the indices, two components.
  Evaluation two = EvaluateOp({"s32[4,5]", "s32[2,3]"},
                              "s32[3,2,2] gather(p0, p1), offset_dims={1,2}, "
                              "collapsed_slice_dims={}, start_index_map={0,1}, "
                              "index_vector_dim=0, slice_sizes={2,2}",
                              {{1, {0, 2, 1, 3, 0, 2}}});
  EXPECT_EQ(MapOf(two, 1),
            "(d0, d1, d2)[s0] -> (s0, d0), domain: d0 in [0, 2], d1 in [0, 1], d2 in [0, 1], s0 "
            "in [0, 1]");
  ExpectDependenciesCovered(two, 1);
}

TEST(ReductionIndexingTest, ScatterStartsFromItsOperand) {
  Evaluation e = EvaluateOp({"s32[5,3]", "s32[2,1]", "s32[2,3]"},
                            "s32[5,3] scatter(p0, p1, p2), update_window_dims={1}, "
                            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                            "index_vector_dim=1, to_apply=add",
                            {{1, {1, 3}}}, kAdd);
  std::vector<IndexingMap> maps = OutputToInputIndexing(*e.computation->root());
  EXPECT_EQ(maps[0].ToString(), "(d0, d1) -> (d0, d1), domain: d0 in [0, 4], d1 in [0, 2]");
  EXPECT_TRUE(maps[1].IsUndefined());
  EXPECT_TRUE(maps[2].IsUndefined());
  ExpectDependenciesCovered(e, 0);
}

}  // namespace
}  // namespace tilesmith::analysis
