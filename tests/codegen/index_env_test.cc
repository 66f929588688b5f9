// The share of runs in which index conditions hold (IndexEnv::HoldShare), which weights the
// emitters' bounds checks: exact over small ranges, sampled over large ones, and over the
// variables the conditions use only.
#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>

#include "compiler/codegen/index_emitter.h"

namespace tilesmith::codegen {
namespace {

using analysis::AffineExpr;
using analysis::Interval;

class IndexEnvTest : public ::testing::Test {
 protected:
  AffineExpr Variable(int64_t lower, int64_t upper) {
    return env_.AddVariable(builder_.getInt64(0), Interval{lower, upper});
  }

  llvm::LLVMContext context_;
  llvm::IRBuilder<> builder_{context_};
  IndexEnv env_{builder_};
};

TEST_F(IndexEnvTest, NoConditionAlwaysHolds) { EXPECT_DOUBLE_EQ(env_.HoldShare({}), 1.0); }

// A tile of 4 x 4 threads over a 10-element row: thread + 4 * block in [0, 9] holds for 10
// of the 16 points.
TEST_F(IndexEnvTest, SmallRangesCountEveryPoint) {
  AffineExpr thread = Variable(0, 3);
  AffineExpr block = Variable(0, 3);
  std::vector<IndexEnv::Condition> row = {{thread + block * 4, Interval{0, 9}}};
  EXPECT_DOUBLE_EQ(env_.HoldShare(row), 10.0 / 16.0);
  // Both conditions: the row's and only even threads.
  row.push_back({thread.Mod(2), Interval{0, 0}});
  EXPECT_DOUBLE_EQ(env_.HoldShare(row), 5.0 / 16.0);
}

// A variable no condition uses does not widen the points counted: still exact.
TEST_F(IndexEnvTest, UnusedVariablesDoNotCount) {
  Variable(0, 1'000'000);
  AffineExpr thread = Variable(0, 2);
  std::vector<IndexEnv::Condition> first = {{thread, Interval{0, 0}}};
  EXPECT_DOUBLE_EQ(env_.HoldShare(first), 1.0 / 3.0);
}

// Past 4096 points the share is sampled: near the truth, and the same every time.
TEST_F(IndexEnvTest, LargeRangesAreSampledTheSameWayEveryTime) {
  AffineExpr element = Variable(0, 99'999);
  AffineExpr lane = Variable(0, 7);
  std::vector<IndexEnv::Condition> half = {{element + lane, Interval{0, 50'003}}};
  double share = env_.HoldShare(half);
  EXPECT_NEAR(share, 0.5, 0.05);
  EXPECT_DOUBLE_EQ(env_.HoldShare(half), share);
}

}  // namespace
}  // namespace tilesmith::codegen
