// The affine expression algebra: builders, folding, evaluation, substitution, printing,
// equality and hashing.
#include "compiler/analysis/affine_expr.h"

#include <gtest/gtest.h>

#include <unordered_set>
#include <vector>

namespace tilesmith::analysis {
namespace {

const AffineExpr d0 = AffineExpr::Dim(0);
const AffineExpr d1 = AffineExpr::Dim(1);
const AffineExpr s0 = AffineExpr::Symbol(0);

TEST(AffineExprTest, PrintsXlaTextForm) {
  EXPECT_EQ((d0 * 4 + s0).ToString(), "d0 * 4 + s0");
  EXPECT_EQ(d0.FloorDiv(8).Mod(4).ToString(), "(d0 floordiv 8) mod 4");
  EXPECT_EQ((d0 * 4).FloorDiv(8).ToString(), "(d0 * 4) floordiv 8");
  EXPECT_EQ((d1 - d0 * 2 - 3).ToString(), "d1 - d0 * 2 - 3");
  EXPECT_EQ((d1 - d0).ToString(), "d1 - d0");
  EXPECT_EQ((-d0 + d1).ToString(), "-d0 + d1");
  EXPECT_EQ((d0 - (d1 + s0)).ToString(), "d0 - (d1 + s0)");
  EXPECT_EQ((d0 + (d1 + s0 * 2)).ToString(), "d0 + (d1 + s0 * 2)");
  EXPECT_EQ((d0.Mod(8) * 512 + d1 * 4 + s0).ToString(), "(d0 mod 8) * 512 + d1 * 4 + s0");
  EXPECT_EQ((d0 + d1.FloorDiv(2)).ToString(), "d0 + d1 floordiv 2");
  EXPECT_EQ((d0 * -3).ToString(), "d0 * -3");
  EXPECT_EQ(AffineExpr::Constant(-7).ToString(), "-7");
  std::vector<std::string> dims = {"th_x", "bl_x"};
  std::vector<std::string> symbols = {"vector_index"};
  EXPECT_EQ((d0 * 4 + d1 * 512 + s0).ToString(dims, symbols),
            "th_x * 4 + bl_x * 512 + vector_index");
}

TEST(AffineExprTest, BuildersFoldTrivialCases) {
  EXPECT_EQ(AffineExpr::Constant(3) + AffineExpr::Constant(4), AffineExpr::Constant(7));
  EXPECT_EQ(d0 + 0, d0);
  EXPECT_EQ(d0 * 1, d0);
  EXPECT_EQ(d0 * 0, AffineExpr());
  EXPECT_EQ(d0.FloorDiv(1), d0);
  EXPECT_EQ(d0.Mod(1), AffineExpr());
  EXPECT_EQ(AffineExpr::Constant(-7).FloorDiv(2), AffineExpr::Constant(-4));
  EXPECT_EQ(AffineExpr::Constant(-7).Mod(2), AffineExpr::Constant(1));
  EXPECT_EQ((d0 * 2) * 3, d0 * 6);
  // Constants move to the right and merge.
  EXPECT_EQ((AffineExpr::Constant(2) + d0).ToString(), "d0 + 2");
  EXPECT_EQ(((d0 + 2) + 3).ToString(), "d0 + 5");
  EXPECT_EQ((d1 + (d0 + 2)).ToString(), "d1 + d0 + 2");
}

// A zero-sized dimension divides by its extent: its domain is empty, and the builders fold
// the division so no node ever divides by zero (x = 0 * (x floordiv 0) + x mod 0).
TEST(AffineExprTest, DivisionByAZeroSizedExtentFolds) {
  EXPECT_EQ(d0.FloorDiv(0), AffineExpr());
  EXPECT_EQ(d0.Mod(0), d0);
  EXPECT_EQ((d0 * 3 + s0).Mod(0), d0 * 3 + s0);
  EXPECT_EQ(AffineExpr::Constant(7).FloorDiv(0), AffineExpr());
  AffineExpr delinearised = d0.FloorDiv(0).Mod(5) + d0.Mod(0);
  std::vector<int64_t> dims = {4}, symbols = {};
  EXPECT_EQ(delinearised.Evaluate(dims, symbols), 4);
}

TEST(AffineExprTest, EvaluatesWithFloorSemantics) {
  AffineExpr e = (d0 - 5).FloorDiv(4) * 10 + (d0 - 5).Mod(4) + s0 * 100;
  std::vector<int64_t> symbols = {2};
  for (int64_t x = -20; x <= 20; ++x) {
    std::vector<int64_t> dims = {x};
    int64_t v = x - 5;
    int64_t q = v >= 0 ? v / 4 : -((-v + 3) / 4);
    EXPECT_EQ(e.Evaluate(dims, symbols), q * 10 + (v - q * 4) + 200) << x;
  }
}

TEST(AffineExprTest, SubstitutesDimsAndSymbols) {
  AffineExpr e = d0 * 4 + d1.Mod(3) + s0;
  std::vector<AffineExpr> dims = {d1 + 1, AffineExpr::Constant(7)};
  std::vector<AffineExpr> symbols = {AffineExpr::Symbol(2)};
  // Substitution rebuilds; distributing the factor is the simplifier's job.
  EXPECT_EQ(e.Substitute(dims, symbols).ToString(), "(d1 + 1) * 4 + s2 + 1");
  // Variables past the spans stay.
  EXPECT_EQ(e.Substitute({}, symbols).ToString(), "d0 * 4 + d1 mod 3 + s2");
}

TEST(AffineExprTest, EqualityAndHashAreStructural) {
  AffineExpr a = (d0 * 4 + s0).FloorDiv(3);
  AffineExpr b = (AffineExpr::Dim(0) * 4 + AffineExpr::Symbol(0)).FloorDiv(3);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_FALSE(a == (d0 * 4 + s0).FloorDiv(2));
  EXPECT_FALSE(d0 == s0);
  std::unordered_set<AffineExpr> set = {a, b, d0, AffineExpr(), AffineExpr::Constant(0)};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(Compare(a, b), 0);
  EXPECT_LT(Compare(d0, d1), 0);
  EXPECT_LT(Compare(d1, s0), 0);
}

TEST(AffineExprTest, UsesAndWalk) {
  AffineExpr e = d0.FloorDiv(2) + s0 * 3;
  EXPECT_TRUE(e.UsesDim(0));
  EXPECT_FALSE(e.UsesDim(1));
  EXPECT_TRUE(e.UsesSymbol(0));
  int nodes = 0;
  e.Walk([&](const AffineExpr&) { ++nodes; });
  EXPECT_EQ(nodes, 5);  // +, floordiv, d0, *, s0
}

}  // namespace
}  // namespace tilesmith::analysis
