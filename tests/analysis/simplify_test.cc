// Simplification rules, one test each, every one cross-checked point by point: the
// simplified map must be the same function on the same domain.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "compiler/analysis/indexing_map.h"
#include "tests/analysis/analysis_test_util.h"

namespace tilesmith::analysis {
namespace {

using testing::ExpectSameFunction;

// Parses `before`, simplifies it, expects the text `after` and the same function.
void ExpectSimplifiesTo(const std::string& before, const std::string& after) {
  Expected<IndexingMap> map = IndexingMap::Parse(before);
  ASSERT_TRUE(map.has_value()) << map.error().message;
  IndexingMap simplified = *map;
  simplified.Simplify();
  EXPECT_EQ(simplified.ToString(), after);
  ExpectSameFunction(*map, simplified);
  // Simplification is idempotent.
  IndexingMap again = simplified;
  again.Simplify();
  EXPECT_EQ(again.ToString(), simplified.ToString());
}

TEST(SimplifyTest, FoldsConstants) {
  ExpectSimplifiesTo("(d0) -> ((d0 + 2) * 3 - d0 * 3, 7 floordiv 2), domain: d0 in [0, 3]",
                     "(d0) -> (6, 3), domain: d0 in [0, 3]");
}

// An empty domain (a zero-sized dimension) simplifies without dividing by zero.
TEST(SimplifyTest, ZeroSizedDimensionsSimplify) {
  Expected<IndexingMap> map = IndexingMap::Parse(
      "(d0, d1) -> (d0 floordiv 3, d1 mod 3), domain: d0 in [0, -1], "
      "d1 in [0, 5]");
  ASSERT_TRUE(map.has_value()) << map.error().message;
  map->Simplify();
  EXPECT_TRUE(map->IsKnownEmpty()) << map->ToString();
}

TEST(SimplifyTest, CollectsLikeTermsInCanonicalOrder) {
  ExpectSimplifiesTo(
      "(d0, d1)[s0] -> (s0 + d1 * 2 + d0 * 3 - d1 + 1 + d0), domain: d0 in [0, 3], "
      "d1 in [0, 3], s0 in [0, 1]",
      "(d0, d1)[s0] -> (d0 * 4 + d1 + s0 + 1), domain: d0 in [0, 3], d1 in [0, 3], "
      "s0 in [0, 1]");
}

TEST(SimplifyTest, DistributesFactorsOverSums) {
  ExpectSimplifiesTo("(d0, d1) -> ((d0 + d1 * 2 + 1) * 3), domain: d0 in [0, 3], d1 in [0, 3]",
                     "(d0, d1) -> (d0 * 3 + d1 * 6 + 3), domain: d0 in [0, 3], d1 in [0, 3]");
}

TEST(SimplifyTest, ExactDivisionOfAMultiple) {
  ExpectSimplifiesTo(
      "(d0, d1) -> ((d0 * 8 + d1 * 16) floordiv 8), domain: d0 in [0, 9], d1 in "
      "[0, 9]",
      "(d0, d1) -> (d0 + d1 * 2), domain: d0 in [0, 9], d1 in [0, 9]");
}

TEST(SimplifyTest, ExtractsMultiplesFromFloorDiv) {
  ExpectSimplifiesTo(
      "(d0, d1) -> ((d0 * 8 + d1 + 19) floordiv 8), domain: d0 in [0, 9], d1 in "
      "[0, 20]",
      "(d0, d1) -> (d0 + (d1 + 3) floordiv 8 + 2), domain: d0 in [0, 9], d1 in "
      "[0, 20]");
  ExpectSimplifiesTo("(d0) -> ((d0 - 1) floordiv 2, (d0 - 13) floordiv 4), domain: d0 in [0, 20]",
                     "(d0) -> ((d0 - 1) floordiv 2, (d0 - 1) floordiv 4 - 3), domain: d0 in [0, "
                     "20]");
  ExpectSimplifiesTo("(d0, d1) -> ((d0 * 8 + d1) floordiv 8), domain: d0 in [0, 9], d1 in [0, 7]",
                     "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 7]");
}

TEST(SimplifyTest, ModAndFloorDivOfASmallRange) {
  ExpectSimplifiesTo("(d0) -> (d0 mod 8, d0 floordiv 8), domain: d0 in [0, 7]",
                     "(d0) -> (d0, 0), domain: d0 in [0, 7]");
  ExpectSimplifiesTo("(d0) -> (d0 mod 8, d0 floordiv 8), domain: d0 in [16, 23]",
                     "(d0) -> (d0 - 16, 2), domain: d0 in [16, 23]");
  ExpectSimplifiesTo("(d0) -> ((d0 - 8) floordiv 8, (d0 - 8) mod 8), domain: d0 in [0, 7]",
                     "(d0) -> (-1, d0), domain: d0 in [0, 7]");
}

TEST(SimplifyTest, Delinearisation) {
  ExpectSimplifiesTo("(d0) -> ((d0 floordiv 4) * 4 + d0 mod 4), domain: d0 in [0, 100]",
                     "(d0) -> (d0), domain: d0 in [0, 100]");
  ExpectSimplifiesTo(
      "(d0) -> ((d0 floordiv 12) * 12 + ((d0 floordiv 4) mod 3) * 4 + d0 mod 4), "
      "domain: d0 in [0, 100]",
      "(d0) -> (d0), domain: d0 in [0, 100]");
  ExpectSimplifiesTo(
      "(d0) -> ((d0 floordiv 12) * 12 + ((d0 mod 12) floordiv 4) * 4 + d0 mod 4), "
      "domain: d0 in [0, 100]",
      "(d0) -> (d0), domain: d0 in [0, 100]");
  // Scaled, with a symbol in the dividend and other terms around it.
  ExpectSimplifiesTo(
      "(d0)[s0] -> (((d0 + s0) floordiv 4) * 8 + ((d0 + s0) mod 4) * 2 + 1), "
      "domain: d0 in [0, 20], s0 in [0, 3]",
      "(d0)[s0] -> (d0 * 2 + s0 * 2 + 1), domain: d0 in [0, 20], s0 in [0, 3]");
}

TEST(SimplifyTest, DividendMinusMultipleOfQuotientIsMod) {
  ExpectSimplifiesTo("(d0) -> (d0 - (d0 floordiv 4) * 4), domain: d0 in [0, 100]",
                     "(d0) -> (d0 mod 4), domain: d0 in [0, 100]");
}

TEST(SimplifyTest, NestedFloorDivAndMod) {
  ExpectSimplifiesTo("(d0) -> ((d0 floordiv 4) floordiv 8), domain: d0 in [0, 1000]",
                     "(d0) -> (d0 floordiv 32), domain: d0 in [0, 1000]");
  ExpectSimplifiesTo("(d0) -> ((d0 mod 16) mod 4), domain: d0 in [0, 1000]",
                     "(d0) -> (d0 mod 4), domain: d0 in [0, 1000]");
  ExpectSimplifiesTo("(d0) -> ((d0 mod 16) floordiv 4), domain: d0 in [0, 1000]",
                     "(d0) -> ((d0 floordiv 4) mod 4), domain: d0 in [0, 1000]");
}

TEST(SimplifyTest, CommonFactorOfDivisorAndCoefficients) {
  ExpectSimplifiesTo("(d0, d1) -> ((d0 * 4 + d1) floordiv 8), domain: d0 in [0, 9], d1 in [0, 3]",
                     "(d0, d1) -> (d0 floordiv 2), domain: d0 in [0, 9], d1 in [0, 3]");
  ExpectSimplifiesTo("(d0, d1) -> ((d0 * 4 + d1) mod 8), domain: d0 in [0, 9], d1 in [0, 3]",
                     "(d0, d1) -> (d1 + (d0 mod 2) * 4), domain: d0 in [0, 9], d1 in [0, 3]");
  ExpectSimplifiesTo("(d0) -> ((d0 * 6) mod 9), domain: d0 in [0, 9]",
                     "(d0) -> (((d0 * 2) mod 3) * 3), domain: d0 in [0, 9]");
}

TEST(SimplifyTest, ModDropsMultiplesOfTheDivisor) {
  ExpectSimplifiesTo("(d0, d1) -> ((d0 * 8 + d1 + 9) mod 8), domain: d0 in [0, 9], d1 in [0, 20]",
                     "(d0, d1) -> ((d1 + 1) mod 8), domain: d0 in [0, 9], d1 in [0, 20]");
}

TEST(SimplifyTest, VariablesWithOnePointBecomeConstants) {
  ExpectSimplifiesTo("(d0)[s0] -> (d0 * 3 + s0), domain: d0 in [2, 2], s0 in [0, 1]",
                     "(d0)[s0] -> (s0 + 6), domain: d0 in [2, 2], s0 in [0, 1]");
}

TEST(SimplifyTest, DropsImpliedConstraints) {
  ExpectSimplifiesTo(
      "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 mod 4 in [0, 3], "
      "d0 + d1 in [0, 18]",
      "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9]");
}

TEST(SimplifyTest, FoldsSingleVariableConstraintsIntoRanges) {
  ExpectSimplifiesTo("(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 * 2 + 1 in [3, 12]",
                     "(d0, d1) -> (d0), domain: d0 in [1, 5], d1 in [0, 9]");
  ExpectSimplifiesTo("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [0, 9], -s0 in [-5, -2]",
                     "(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [2, 5]");
  // Once the range is tight, results simplify with it.
  ExpectSimplifiesTo("(d0) -> (d0 floordiv 10), domain: d0 in [0, 99], d0 - 20 in [0, 9]",
                     "(d0) -> (2), domain: d0 in [20, 29]");
}

TEST(SimplifyTest, NormalisesConstraints) {
  ExpectSimplifiesTo(
      "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 * 2 + d1 * 4 + 1 "
      "in [2, 6]",
      "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 * 2 in [1, 2]");
  ExpectSimplifiesTo(
      "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in [0, 5], "
      "d1 + d0 in [3, 7]",
      "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in [3, 5]");
}

TEST(SimplifyTest, DetectsEmptyDomains) {
  ExpectSimplifiesTo("(d0) -> (d0), domain: d0 in [0, 9], d0 mod 4 in [5, 6]",
                     "(d0) -> (0), domain: KNOWN EMPTY");
  ExpectSimplifiesTo(
      "(d0, d1) -> (d0 + d1), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in "
      "[20, 30]",
      "(d0, d1) -> (0), domain: KNOWN EMPTY");
  ExpectSimplifiesTo("(d0) -> (d0), domain: d0 in [0, 9], d0 in [12, 15]",
                     "(d0) -> (0), domain: KNOWN EMPTY");
  ExpectSimplifiesTo("(d0) -> (d0), domain: d0 in [0, -1]", "(d0) -> (0), domain: KNOWN EMPTY");
}

TEST(SimplifyTest, RemovesUnusedSymbols) {
  Expected<IndexingMap> map = IndexingMap::Parse(
      "(d0)[s0, s1, s2] -> (d0 + s1), domain: d0 in [0, 9], s0 in [0, 3], s1 in [0, 4], "
      "s2 in [0, 5], d0 + s2 in [0, 12]");
  ASSERT_TRUE(map.has_value());
  map->RemoveUnusedSymbols();
  EXPECT_EQ(map->ToString(),
            "(d0)[s0, s1] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 4], s1 in [0, 5], "
            "d0 + s1 in [0, 12]");
}

// Random expressions over a small domain: whatever the simplifier does must keep the
// function. Ranges include negative values to exercise floor semantics.
class RandomExpressions {
 public:
  explicit RandomExpressions(uint32_t seed) : rng_(seed) {}

  AffineExpr Make(int depth) {
    int choice = Uniform(0, depth <= 0 ? 2 : 7);
    switch (choice) {
      case 0:
        return AffineExpr::Constant(Uniform(-10, 10));
      case 1:
        return AffineExpr::Dim(Uniform(0, 1));
      case 2:
        return AffineExpr::Symbol(0);
      case 3:
      case 4:
        return Make(depth - 1) + Make(depth - 1);
      case 5:
        return Make(depth - 1) * Uniform(-4, 8);
      case 6:
        return Make(depth - 1).FloorDiv(Uniform(1, 12));
      default:
        return Make(depth - 1).Mod(Uniform(1, 12));
    }
  }

  Interval Range() {
    int64_t lower = Uniform(-6, 8);
    return {lower, lower + Uniform(0, 14)};
  }

  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

 private:
  std::mt19937 rng_;
};

// `TILESMITH_FUZZ_SECONDS=N` runs it for N seconds instead of a fixed count.
TEST(SimplifyTest, RandomExpressionsKeepTheirValues) {
  double seconds = 0;
  if (const char* env = std::getenv("TILESMITH_FUZZ_SECONDS")) seconds = std::atof(env);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  RandomExpressions random(1234);
  for (int iteration = 0; iteration < 3000 || std::chrono::steady_clock::now() < deadline;
       ++iteration) {
    std::vector<AffineExpr> results = {random.Make(5), random.Make(3)};
    std::vector<Constraint> constraints;
    for (int c = random.Uniform(0, 2); c > 0; --c) {
      constraints.push_back({random.Make(2), random.Range()});
    }
    IndexingMap map({random.Range(), random.Range()}, {SymbolVar{random.Range()}}, results,
                    constraints);
    IndexingMap simplified = map;
    simplified.Simplify();
    ExpectSameFunction(map, simplified);
    if (::testing::Test::HasFailure()) FAIL() << "iteration " << iteration;
  }
}

// Delinearising a linear index over any shape and linearising it back is the identity.
TEST(SimplifyTest, RandomDelinearisationRoundTrips) {
  RandomExpressions random(99);
  for (int iteration = 0; iteration < 300; ++iteration) {
    int rank = static_cast<int>(random.Uniform(1, 4));
    std::vector<int64_t> dims;
    int64_t count = 1;
    for (int i = 0; i < rank; ++i) {
      dims.push_back(random.Uniform(1, 6));
      count *= dims.back();
    }
    AffineExpr linear = AffineExpr::Dim(0);
    AffineExpr relinearised;
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; --i) {
      AffineExpr index = linear.FloorDiv(stride).Mod(dims[i]);
      relinearised = relinearised + index * stride;
      stride *= dims[i];
    }
    IndexingMap map({Interval::ForSize(count)}, {}, {relinearised});
    IndexingMap simplified = map;
    simplified.Simplify();
    // A one-element shape leaves d0 in [0, 0], which simplifies to the constant.
    AffineExpr expected = count == 1 ? AffineExpr() : AffineExpr::Dim(0);
    EXPECT_EQ(simplified.result(0), expected) << map.ToString() << "\n" << simplified.ToString();
  }
}

}  // namespace
}  // namespace tilesmith::analysis
