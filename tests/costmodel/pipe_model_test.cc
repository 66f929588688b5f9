// The public per-pipe formulas of the spec ("Ascend tiling cost model"), checked against
// values worked out by hand.
#include "costmodel/ascend/pipe_model.h"

#include <gtest/gtest.h>

namespace tilesmith::costmodel::ascend {
namespace {

using hlo::PrimitiveType;

TEST(PipeModelTest, LoadMatchesTheSpecFormula) {
  // S / (9.9074 + 15.896 / block_dim) + 27.01.
  // block_dim 1: 25804 / 25.8034 = 1000.0 (to 4 digits), + 27.01.
  EXPECT_NEAR(LoadCycles(25803.4, 1), 1000.0 + 27.01, 1e-6);
  // block_dim 48: 15.896 / 48 = 0.331167; 32416 / 10.238567 = 3166.07; + 27.01 = 3193.08.
  EXPECT_NEAR(LoadCycles(32416, 48), 3193.08, 0.01);
  // A zero-byte call still pays the per-call cost.
  EXPECT_DOUBLE_EQ(LoadCycles(0, 8), 27.01);
}

TEST(PipeModelTest, StoreMatchesTheSpecFormula) {
  // S / (9.96 + 3.79 / block_dim) + 12.09.
  // block_dim 1: 13.75 bytes per cycle; 1375 bytes -> 100 + 12.09.
  EXPECT_NEAR(StoreCycles(1375, 1), 112.09, 1e-9);
  // block_dim 48: 3.79 / 48 = 0.078958; 32416 / 10.038958 = 3229.02; + 12.09 = 3241.11.
  EXPECT_NEAR(StoreCycles(32416, 48), 3241.11, 0.01);
}

TEST(PipeModelTest, HeadCostsAndObjective) {
  EXPECT_DOUBLE_EQ(HeadCycles(Pipe::kMte2, 1), 1575 + 32.7);
  EXPECT_DOUBLE_EQ(HeadCycles(Pipe::kMte2, 40), 1575 + 32.7 * 40);  // 2883
  EXPECT_DOUBLE_EQ(HeadCycles(Pipe::kMte3, 40), 497);
  EXPECT_DOUBLE_EQ(HeadCycles(Pipe::kVec, 40), 37);
  PipeCycles cycles{1000, 2500, 700};
  EXPECT_EQ(cycles.Bottleneck(), Pipe::kMte3);
  EXPECT_DOUBLE_EQ(Objective(cycles, 8), 2500 + 300 * 8);
  EXPECT_EQ((PipeCycles{5, 5, 5}).Bottleneck(), Pipe::kMte2);
  EXPECT_EQ((PipeCycles{1, 2, 3}).Bottleneck(), Pipe::kVec);
  EXPECT_EQ(PipeName(Pipe::kVec), "VEC");
}

TEST(PipeModelTest, PublishedVectorCoefficientsAreExact) {
  struct Case {
    const char* op;
    PrimitiveType type;
    double k, b;
  };
  for (const Case& c : {Case{"Add", PrimitiveType::kF16, 0.0103, 22.2},
                        Case{"Add", PrimitiveType::kF32, 0.0206, 23.2},
                        Case{"Exp", PrimitiveType::kF32, 0.0307, 28.0}}) {
    auto op = VectorOp(c.op, c.type);
    ASSERT_TRUE(op) << op.error().message;
    EXPECT_DOUBLE_EQ(op->cost.k, c.k) << c.op;
    EXPECT_DOUBLE_EQ(op->cost.b, c.b) << c.op;
    EXPECT_FALSE(op->cost.assumed) << c.op;
    EXPECT_EQ(op->cost.basis.rfind("spec:", 0), 0u) << op->cost.basis;
  }
  // fp32 Add on 4096 elements: 0.0206 * 4096 + 23.2 = 107.5776.
  EXPECT_NEAR(VectorOp("Add", PrimitiveType::kF32)->cost.Cycles(4096), 107.5776, 1e-9);
}

TEST(PipeModelTest, EstimatesScaleWithWidthAndAreMarked) {
  // The two published Add slopes agree per byte (0.0103 / 2 == 0.0206 / 4); the estimates
  // for other widths and ops rest on that.
  EXPECT_DOUBLE_EQ(0.0103 / 2, 0.0206 / 4);
  auto abs32 = VectorOp("Abs", PrimitiveType::kF32);
  ASSERT_TRUE(abs32);
  EXPECT_TRUE(abs32->cost.assumed);
  EXPECT_DOUBLE_EQ(abs32->cost.k, 0.0206);
  EXPECT_DOUBLE_EQ(abs32->cost.b, 23.2);
  EXPECT_NE(abs32->cost.basis.find("assumed"), std::string::npos);
  auto add8 = VectorOp("Add", PrimitiveType::kS8);
  EXPECT_DOUBLE_EQ(add8->cost.k, 0.00515);
  EXPECT_DOUBLE_EQ(add8->cost.b, 22.2);
  auto bf16 = VectorOp("Add", PrimitiveType::kBF16);  // same width as fp16, not published
  EXPECT_DOUBLE_EQ(bf16->cost.k, 0.0103);
  EXPECT_TRUE(bf16->cost.assumed);
  auto exp16 = VectorOp("Exp", PrimitiveType::kF16);  // half the fp32 Exp slope, same offset
  EXPECT_DOUBLE_EQ(exp16->cost.k, 0.0307 / 2);
  EXPECT_DOUBLE_EQ(exp16->cost.b, 28.0);
  // Sigmoid = muls, exp, adds, reciprocal: 2 simple + 2 transcendental calls.
  auto sigmoid = VectorOp("Sigmoid", PrimitiveType::kF32);
  EXPECT_NEAR(sigmoid->cost.k, 2 * 0.0206 + 2 * 0.0307, 1e-12);
  EXPECT_NEAR(sigmoid->cost.b, 2 * 23.2 + 2 * 28.0, 1e-12);
  EXPECT_TRUE(sigmoid->needs_tmp_buffer);
  EXPECT_FALSE(VectorOp("Add", PrimitiveType::kF32)->needs_tmp_buffer);
}

TEST(PipeModelTest, UnknownOpsAreErrorsThatNameTheOp) {
  auto op = VectorOp("Frobnicate", PrimitiveType::kF32);
  ASSERT_FALSE(op);
  EXPECT_NE(op.error().message.find("'Frobnicate'"), std::string::npos) << op.error().message;
}

}  // namespace
}  // namespace tilesmith::costmodel::ascend
