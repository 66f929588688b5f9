// Output -> input maps of index-only and elementwise ops, checked against the evaluator on
// many small random instances: every output element must be the operand element its map
// names, and constraints must exclude exactly the padding and other operands' pieces.
#include "compiler/analysis/op_indexing.h"

#include <gtest/gtest.h>

#include "tests/analysis/op_checks.h"

namespace tilesmith::analysis {
namespace {

using testing::EvaluateOp;
using testing::Evaluation;
using testing::ExpectDependenciesCovered;
using testing::ExpectInverseRelations;
using testing::ExpectSelects;
using testing::ExpectSumOfReads;
using testing::Join;
using testing::Random;
using testing::ShapeText;

constexpr int kInstances = 25;

std::string MapOf(const Evaluation& e, int64_t operand = 0) {
  return OutputToInputIndexing(*e.computation->root())[operand].ToString();
}

TEST(OpIndexingTest, TransposeFromTheSpec) {
  Evaluation e = EvaluateOp({"f32[20,40]"}, "f32[40,20] transpose(p0), dimensions={1,0}");
  EXPECT_EQ(MapOf(e), "(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]");
}

TEST(OpIndexingTest, Transpose) {
  Random random(1);
  for (int i = 0; i < kInstances; ++i) {
    std::vector<int64_t> dims = random.Dims(1, 4, 4);
    std::vector<int64_t> permutation = random.Permutation(dims.size());
    Evaluation e =
        EvaluateOp({ShapeText(dims)}, "transpose(p0), dimensions={" + Join(permutation) + "}");
    ExpectSelects(e);
    ExpectInverseRelations(*e.computation->root(), 0);
  }
}

TEST(OpIndexingTest, Broadcast) {
  Random random(2);
  for (int i = 0; i < kInstances; ++i) {
    std::vector<int64_t> out = random.Dims(0, 4, 4);
    std::vector<int64_t> kept = random.Subset(out.size());
    std::vector<int64_t> in;
    for (int64_t d : kept) in.push_back(out[d]);
    Evaluation e = EvaluateOp({ShapeText(in)},
                              ShapeText(out) + " broadcast(p0), dimensions={" + Join(kept) + "}");
    ExpectSelects(e);
    ExpectInverseRelations(*e.computation->root(), 0);
  }
  Evaluation e = EvaluateOp({"f32[3]"}, "f32[2,3,4] broadcast(p0), dimensions={1}");
  EXPECT_EQ(MapOf(e), "(d0, d1, d2) -> (d1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3]");
  EXPECT_EQ(InputToOutputIndexing(*e.computation->root(), 0).ToString(),
            "(d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 2], s0 in [0, 1], s1 in [0, 3]");
}

TEST(OpIndexingTest, Reshape) {
  Random random(3);
  for (int i = 0; i < kInstances; ++i) {
    std::vector<int64_t> in = random.Dims(1, 4, 4);
    int64_t count = 1;
    for (int64_t d : in) count *= d;
    // Factor the element count into a random output shape.
    std::vector<int64_t> out;
    int64_t left = count;
    while (left > 1 && random.Uniform(0, 3) != 0) {
      int64_t factor = random.Uniform(1, left);
      if (left % factor != 0) continue;
      out.push_back(factor);
      left /= factor;
    }
    out.push_back(left);
    std::shuffle(out.begin(), out.end(), std::mt19937(i));
    Evaluation e = EvaluateOp({ShapeText(in)}, ShapeText(out) + " reshape(p0)");
    ExpectSelects(e);
    ExpectInverseRelations(*e.computation->root(), 0);
  }
  EXPECT_EQ(MapOf(EvaluateOp({"f32[4,6]"}, "f32[2,12] reshape(p0)")),
            "(d0, d1) -> (d0 * 2 + d1 floordiv 6, d1 mod 6), domain: d0 in [0, 1], d1 in [0, 11]");
  EXPECT_EQ(MapOf(EvaluateOp({"f32[2,3,4]"}, "f32[6,4] reshape(p0)")),
            "(d0, d1) -> (d0 floordiv 3, d0 mod 3, d1), domain: d0 in [0, 5], d1 in [0, 3]");
  EXPECT_EQ(MapOf(EvaluateOp({"f32[6,4]"}, "f32[24] reshape(p0)")),
            "(d0) -> (d0 floordiv 4, d0 mod 4), domain: d0 in [0, 23]");
}

TEST(OpIndexingTest, BitcastThroughLayouts) {
  // The evaluator test from the repository: memory order of a 2x2-tiled array.
  Evaluation tiled = EvaluateOp({"s32[4,4]{1,0:T(2,2)}"}, "s32[16]{0} bitcast(p0)");
  ExpectSelects(tiled);
  EXPECT_EQ(MapOf(tiled),
            "(d0) -> ((d0 floordiv 8) * 2 + (d0 floordiv 2) mod 2, d0 mod 2 + ((d0 floordiv 4) mod "
            "2) * 2), domain: d0 in [0, 15]");
  // A layout-changing bitcast is a transpose.
  Evaluation transposing = EvaluateOp({"s32[3,5]{1,0}"}, "s32[5,3]{0,1} bitcast(p0)");
  ExpectSelects(transposing);
  EXPECT_EQ(MapOf(transposing), "(d0, d1) -> (d1, d0), domain: d0 in [0, 4], d1 in [0, 2]");
  // Both sides tiled with padding in different places: outputs over the operand's padding
  // read nothing (the evaluator gives 0 there, which names no parameter).
  Evaluation padded = EvaluateOp({"s32[3,5]{1,0:T(2,2)}"}, "s32[5,3]{1,0:T(4,1)} bitcast(p0)");
  ExpectSelects(padded);
  Evaluation into_tiles = EvaluateOp({"s32[16]{0}"}, "s32[4,4]{0,1:T(2,2)} bitcast(p0)");
  ExpectSelects(into_tiles);
  Random random(4);
  for (int i = 0; i < kInstances; ++i) {
    std::vector<int64_t> in = random.Dims(1, 3, 4);
    std::vector<int64_t> out = in;
    std::shuffle(out.begin(), out.end(), std::mt19937(i));
    Evaluation e =
        EvaluateOp({ShapeText(in) + "{" + Join(random.Permutation(in.size())) + "}"},
                   ShapeText(out) + "{" + Join(random.Permutation(out.size())) + "} bitcast(p0)");
    ExpectSelects(e);
    ExpectInverseRelations(*e.computation->root(), 0);
  }
}

TEST(OpIndexingTest, Slice) {
  Random random(5);
  for (int i = 0; i < kInstances; ++i) {
    std::vector<int64_t> in = random.Dims(1, 3, 7);
    std::string slice;
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t start = random.Uniform(0, in[d] - 1);
      int64_t limit = random.Uniform(start + 1, in[d]);
      slice += std::string(d ? ", " : "") + "[" + std::to_string(start) + ":" +
               std::to_string(limit) + ":" + std::to_string(random.Uniform(1, 3)) + "]";
    }
    Evaluation e = EvaluateOp({ShapeText(in)}, "slice(p0), slice={" + slice + "}");
    ExpectSelects(e);
    ExpectInverseRelations(*e.computation->root(), 0);
  }
  EXPECT_EQ(MapOf(EvaluateOp({"f32[10,8]"}, "slice(p0), slice={[1:9:3], [2:4]}")),
            "(d0, d1) -> (d0 * 3 + 1, d1 + 2), domain: d0 in [0, 2], d1 in [0, 1]");
}

TEST(OpIndexingTest, Reverse) {
  Random random(6);
  for (int i = 0; i < kInstances; ++i) {
    std::vector<int64_t> in = random.Dims(1, 3, 5);
    Evaluation e = EvaluateOp({ShapeText(in)},
                              "reverse(p0), dimensions={" + Join(random.Subset(in.size())) + "}");
    ExpectSelects(e);
    ExpectInverseRelations(*e.computation->root(), 0);
  }
}

TEST(OpIndexingTest, Pad) {
  Random random(7);
  for (int i = 0; i < kInstances * 2; ++i) {
    std::vector<int64_t> in = random.Dims(1, 3, 4);
    std::string padding;
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t low, high, interior;
      do {
        low = random.Uniform(-2, 3);
        high = random.Uniform(-2, 3);
        interior = random.Uniform(0, 2);
      } while (low + high + in[d] + (in[d] - 1) * interior < 1);
      padding += std::string(d ? "x" : "") + std::to_string(low) + "_" + std::to_string(high) +
                 "_" + std::to_string(interior);
    }
    Evaluation e = EvaluateOp({ShapeText(in), "s32[]"}, "pad(p0, p1), padding=" + padding);
    ExpectSelects(e);
    ExpectInverseRelations(*e.computation->root(), 0);
  }
  Evaluation e = EvaluateOp({"f32[4,5]", "f32[]"}, "pad(p0, p1), padding=1_2x0_0_2");
  EXPECT_EQ(MapOf(e, 0),
            "(d0, d1) -> (d0 - 1, d1 floordiv 3), domain: d0 in [1, 4], d1 in [0, 12], d1 mod 3 "
            "in [0, 0]");
  EXPECT_EQ(MapOf(e, 1), "(d0, d1) -> (), domain: d0 in [0, 6], d1 in [0, 12]");
}

TEST(OpIndexingTest, ConcatenateIsPiecewise) {
  Random random(8);
  for (int i = 0; i < kInstances; ++i) {
    std::vector<int64_t> dims = random.Dims(1, 3, 4);
    int64_t dim = random.Uniform(0, dims.size() - 1);
    std::vector<std::string> params;
    std::string operands;
    for (int64_t k = 0, n = random.Uniform(1, 3); k < n; ++k) {
      dims[dim] = random.Uniform(1, 4);
      params.push_back(ShapeText(dims));
      operands += (k ? ", p" : "p") + std::to_string(k);
    }
    Evaluation e = EvaluateOp(
        params, "concatenate(" + operands + "), dimensions={" + std::to_string(dim) + "}");
    ExpectSelects(e);
    for (int64_t k = 0; k < e.computation->root()->operand_count(); ++k) {
      ExpectInverseRelations(*e.computation->root(), k);
    }
  }
  Evaluation e = EvaluateOp({"f32[2,3]", "f32[2,4]"}, "concatenate(p0, p1), dimensions={1}");
  EXPECT_EQ(MapOf(e, 0), "(d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]");
  EXPECT_EQ(MapOf(e, 1), "(d0, d1) -> (d0, d1 - 3), domain: d0 in [0, 1], d1 in [3, 6]");
}

TEST(OpIndexingTest, DynamicSliceOffsetsAreClampedRuntimeSymbols) {
  Random random(9);
  for (int i = 0; i < kInstances * 2; ++i) {
    std::vector<int64_t> in = random.Dims(1, 3, 6);
    std::vector<int64_t> sizes;
    std::vector<std::string> params = {ShapeText(in)};
    std::string operands = "p0";
    std::map<int64_t, std::vector<int64_t>> offsets;
    for (size_t d = 0; d < in.size(); ++d) {
      sizes.push_back(random.Uniform(1, in[d]));
      params.push_back("s32[]");
      operands += ", p" + std::to_string(d + 1);
      offsets[d + 1] = {random.Uniform(-2, in[d] + 2)};  // out of range clamps
    }
    Evaluation e = EvaluateOp(
        params, "dynamic-slice(" + operands + "), dynamic_slice_sizes={" + Join(sizes) + "}",
        offsets);
    ExpectSelects(e);
  }
  Evaluation e = EvaluateOp({"f32[10,8]", "s32[]", "s32[]"},
                            "dynamic-slice(p0, p1, p2), dynamic_slice_sizes={3,8}");
  IndexingMap map = OutputToInputIndexing(*e.computation->root())[0];
  EXPECT_EQ(map.ToString(),
            "(d0, d1)[s0] -> (d0 + s0, d1), domain: d0 in [0, 2], d1 in [0, 7], s0 in [0, 7] "
            "runtime");
  EXPECT_EQ(map.symbol(0).source, e.computation->parameter(1));
  EXPECT_EQ(MapOf(e, 2), "(d0, d1) -> (), domain: d0 in [0, 2], d1 in [0, 7]");
}

TEST(OpIndexingTest, DynamicUpdateSliceReadsTheUpdateInItsBox) {
  Random random(10);
  for (int i = 0; i < kInstances * 2; ++i) {
    std::vector<int64_t> out = random.Dims(1, 3, 5);
    std::vector<int64_t> update;
    std::vector<std::string> params = {ShapeText(out)};
    std::map<int64_t, std::vector<int64_t>> offsets;
    for (size_t d = 0; d < out.size(); ++d) update.push_back(random.Uniform(1, out[d]));
    params.push_back(ShapeText(update));
    std::string operands = "p0, p1";
    for (size_t d = 0; d < out.size(); ++d) {
      params.push_back("s32[]");
      operands += ", p" + std::to_string(d + 2);
      offsets[d + 2] = {random.Uniform(-2, out[d] + 2)};
    }
    Evaluation e = EvaluateOp(params, "dynamic-update-slice(" + operands + ")", offsets);
    // The operand's map is the identity: it over-approximates, the update's is exact.
    ExpectSelects(e, /*exclusive=*/false);
  }
  Evaluation e = EvaluateOp({"f32[10]", "f32[3]", "s32[]"}, "dynamic-update-slice(p0, p1, p2)");
  EXPECT_EQ(MapOf(e, 0), "(d0) -> (d0), domain: d0 in [0, 9]");
  EXPECT_EQ(MapOf(e, 1),
            "(d0)[s0] -> (d0 - s0), domain: d0 in [0, 9], s0 in [0, 7] runtime, d0 - s0 in [0, 2]");
}

TEST(OpIndexingTest, Elementwise) {
  Evaluation add = EvaluateOp({"s32[3,4]", "s32[3,4]"}, "add(p0, p1)");
  ExpectSumOfReads(add);
  EXPECT_EQ(MapOf(add, 1), "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 3]");
  ExpectInverseRelations(*add.computation->root(), 1);
  ExpectSelects(EvaluateOp({"s32[2,3,2]"}, "copy(p0)"));
  Evaluation clamp =
      EvaluateOp({"s32[]", "s32[5]", "s32[]"}, "clamp(p0, p1, p2)", {{0, {10003}}, {2, {20001}}});
  EXPECT_EQ(MapOf(clamp, 0), "(d0) -> (), domain: d0 in [0, 4]");
  for (int64_t q = 0; q < 3; ++q) ExpectDependenciesCovered(clamp, q);
  ExpectInverseRelations(*clamp.computation->root(), 0);
}

TEST(OpIndexingTest, BitcastConvertBetweenWidths) {
  Evaluation narrowing = EvaluateOp({"s32[3]"}, "s16[3,2] bitcast-convert(p0)");
  EXPECT_EQ(MapOf(narrowing), "(d0, d1) -> (d0), domain: d0 in [0, 2], d1 in [0, 1]");
  ExpectDependenciesCovered(narrowing, 0);
  Evaluation widening = EvaluateOp({"u8[3,4]"}, "u32[3] bitcast-convert(p0)");
  EXPECT_EQ(MapOf(widening), "(d0)[s0] -> (d0, s0), domain: d0 in [0, 2], s0 in [0, 3]");
  ExpectDependenciesCovered(widening, 0);
}

TEST(OpIndexingTest, OpsWithoutOperandsHaveNoMaps) {
  for (const char* line : {"s32[4,3] iota(), iota_dimension=1", "s32[2] constant({1, 2})"}) {
    Evaluation e = EvaluateOp({}, line);
    EXPECT_TRUE(OutputToInputIndexing(*e.computation->root()).empty()) << line;
  }
}

TEST(OpIndexingTest, TupleAndGetTupleElement) {
  Evaluation e = EvaluateOp({"s32[2]", "s32[3,4]"}, "tuple(p0, p1)");
  std::vector<IndexingMap> second = OutputToInputIndexing(*e.computation->root(), 1);
  EXPECT_TRUE(second[0].IsKnownEmpty());
  EXPECT_EQ(second[1].ToString(), "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 3]");
  Evaluation gte = EvaluateOp({"(s32[2], s32[3])"}, "get-tuple-element(p0), index=1");
  EXPECT_EQ(MapOf(gte), "(d0) -> (d0), domain: d0 in [0, 2]");
}

TEST(OpIndexingTest, UnsupportedOpsAreUndefined) {
  auto module = testing::ParseOrDie(
      "ENTRY e {\n p0 = f32[4] parameter(0)\n ROOT r = f32[4] custom-call(p0), "
      "custom_call_target=\"foo\"\n}\n");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(OutputToInputIndexing(*module->entry()->root())[0].IsUndefined());
  EXPECT_TRUE(InputToOutputIndexing(*module->entry()->root(), 0).IsUndefined());
}

}  // namespace
}  // namespace tilesmith::analysis
