// Indexing maps: construction, evaluation, the text form (print and parse round trips,
// located errors) and composition.
#include "compiler/analysis/indexing_map.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "tests/analysis/analysis_test_util.h"

namespace tilesmith::analysis {
namespace {

IndexingMap ParseMap(const std::string& text) {
  Expected<IndexingMap> map = IndexingMap::Parse(text);
  EXPECT_TRUE(map.has_value()) << (map ? "" : map.error().message);
  return map ? *map : IndexingMap::Undefined();
}

const AffineExpr d0 = AffineExpr::Dim(0);
const AffineExpr d1 = AffineExpr::Dim(1);
const AffineExpr s0 = AffineExpr::Symbol(0);

TEST(IndexingMapTest, PrintsTheSpecForm) {
  IndexingMap map({Interval{0, 19}, Interval{0, 39}}, {SymbolVar{{0, 3}}}, {d1, d0},
                  {{d0 + s0, {0, 9}}});
  EXPECT_EQ(map.ToString(),
            "(d0, d1)[s0] -> (d1, d0), domain: d0 in [0, 19], d1 in [0, 39], s0 in [0, 3], "
            "d0 + s0 in [0, 9]");
  EXPECT_EQ(IndexingMap::Identity(std::vector<int64_t>{20, 40}).ToString(),
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 39]");
  EXPECT_EQ(IndexingMap().ToString(), "() -> ()");
  EXPECT_EQ(IndexingMap::Undefined().ToString(), "UNDEFINED");
  EXPECT_EQ(IndexingMap::KnownEmpty(2, 0, 1).ToString(), "(d0, d1) -> (0), domain: KNOWN EMPTY");
}

TEST(IndexingMapTest, PrintsWithNames) {
  // The loop emitter's map from the spec (GELU, bf16[6,512,4096]).
  IndexingMap map = ParseMap(
      "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, "
      "(bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in "
      "[0, 24575], vector_index in [0, 3]");
  std::vector<std::string> dims = {"th_x", "bl_x"};
  std::vector<std::string> symbols = {"vector_index"};
  EXPECT_EQ(map.ToString(dims, symbols),
            "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, "
            "(bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in "
            "[0, 24575], vector_index in [0, 3]");
  EXPECT_EQ(map.Evaluate(std::vector<int64_t>{5, 24575}, std::vector<int64_t>{3}),
            (std::vector<int64_t>{5, 511, 7 * 512 + 23}));
}

TEST(IndexingMapTest, ParsePrintRoundTrips) {
  for (const char* text : {
           "(d0, d1)[s0] -> (d1, d0), domain: d0 in [0, 19], d1 in [0, 39], s0 in [0, 3], "
           "d0 + s0 in [0, 9]",
           "(d0) -> ((d0 floordiv 8) mod 4, d0 * -3 + 2, -d0), domain: d0 in [-5, 100]",
           "(d0, d1)[s0, s1] -> (d0 - d1 * 2 - 3, s0 - (d0 + s1)), domain: d0 in [0, 9], d1 in "
           "[0, 9], s0 in [0, 2] runtime, s1 in [0, 4], d0 + d1 * 2 in [1, 4], (d0 - 1) mod 2 in "
           "[0, 0]",
           "()[s0] -> (s0), domain: s0 in [0, 7]",
           "() -> ()",
           "(d0) -> (), domain: d0 in [0, 3]",
           "(d0, d1) -> (0, 0), domain: KNOWN EMPTY",
           "UNDEFINED",
       }) {
    IndexingMap map = ParseMap(text);
    EXPECT_EQ(map.ToString(), text);
    EXPECT_EQ(ParseMap(map.ToString()), map);
  }
}

TEST(IndexingMapTest, ParsesXlasMultiLineLayout) {
  IndexingMap map = ParseMap(
      "(d0, d1)[s0] -> (d1, d0 + s0),\ndomain:\nd0 in [0, 19],\nd1 in [0, 39],\ns0 in [0, 3],\n"
      "d0 + s0 in [0, 9]\n");
  EXPECT_EQ(map.ToString(),
            "(d0, d1)[s0] -> (d1, d0 + s0), domain: d0 in [0, 19], d1 in [0, 39], s0 in [0, 3], "
            "d0 + s0 in [0, 9]");
}

TEST(IndexingMapTest, ParseReportsLocatedErrors) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"(d0) -> (d0 * d0), domain: d0 in [0, 3]", "col 13: a product needs a constant"},
           {"(d0) -> (d0 floordiv 0), domain: d0 in [0, 3]", "col 13: floordiv needs a positive"},
           {"(d0) -> (d1), domain: d0 in [0, 3]", "col 10: unknown variable 'd1'"},
           {"(d0) -> (d0)", "'d0' has no range"},
           {"(d0, d0) -> (d0), domain: d0 in [0, 3]", "declared twice"},
           {"(d0) -> (d0), domain: d0 in [0, 3", "col 34: expected ']'"},
           {"(d0) -> (d0) junk", "col 14: unexpected text"},
           {"(d0) -> (d0), domain: d0 in [0, 3] runtime", "only a symbol"},
       }) {
    Expected<IndexingMap> map = IndexingMap::Parse(c.text);
    ASSERT_FALSE(map.has_value()) << c.text;
    EXPECT_NE(map.error().message.find(c.message), std::string::npos) << c.text << "\n"
                                                                      << map.error().message;
  }
}

TEST(IndexingMapTest, EvaluateAndDomainMembership) {
  IndexingMap map = ParseMap(
      "(d0, d1)[s0] -> (d0 * 4 + s0, d1 floordiv 2), domain: d0 in [0, 3], d1 in [0, 5], s0 in "
      "[0, 3], d0 + s0 in [0, 4]");
  std::vector<int64_t> dims = {2, 5};
  std::vector<int64_t> inside = {2};
  std::vector<int64_t> outside = {3};
  EXPECT_EQ(map.Evaluate(dims, inside), (std::vector<int64_t>{10, 2}));
  EXPECT_TRUE(map.Contains(dims, inside));
  EXPECT_FALSE(map.Contains(dims, outside));
  EXPECT_FALSE(map.ConstraintsSatisfied(dims, outside));
  std::vector<int64_t> out_of_range = {4, 0};
  std::vector<int64_t> zero = {0};
  EXPECT_TRUE(map.ConstraintsSatisfied(out_of_range, zero));
  EXPECT_FALSE(map.Contains(out_of_range, zero));
  EXPECT_EQ(map.RangeOf(map.result(0)), (Interval{0, 15}));
  // d0 + s0 is narrowed by the constraint on exactly that expression.
  EXPECT_EQ(map.RangeOf(d0 + s0), (Interval{0, 4}));
}

TEST(IndexingMapTest, EqualityAndHashing) {
  IndexingMap a =
      ParseMap("(d0) -> (d0), domain: d0 in [0, 3], d0 mod 2 in [0, 0], d0 * 2 in [0, 5]");
  // Constraints are kept sorted, so the order they were written in does not matter.
  IndexingMap b =
      ParseMap("(d0) -> (d0), domain: d0 in [0, 3], d0 * 2 in [0, 5], d0 mod 2 in [0, 0]");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Hash(), b.Hash());
  IndexingMap c = ParseMap("(d0) -> (d0), domain: d0 in [0, 4]");
  EXPECT_NE(a, c);
  std::unordered_set<IndexingMap> set = {a, b, c, IndexingMap::Undefined()};
  EXPECT_EQ(set.size(), 3u);
  // Runtime symbols differ from range symbols.
  IndexingMap r = ParseMap("()[s0] -> (s0), domain: s0 in [0, 3] runtime");
  IndexingMap s = ParseMap("()[s0] -> (s0), domain: s0 in [0, 3]");
  EXPECT_NE(r, s);
  EXPECT_EQ(r.symbol(0).kind, SymbolKind::kRuntime);
}

TEST(IndexingMapTest, ComposeTransposeFromTheSpec) {
  // Transpose f32[20,40] -> f32[40,20]: output (d0, d1) reads input (d1, d0).
  IndexingMap transpose = ParseMap("(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]");
  IndexingMap back = ParseMap("(d0, d1) -> (d1, d0), domain: d0 in [0, 19], d1 in [0, 39]");
  EXPECT_EQ(Compose(transpose, back).ToString(),
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 39], d1 in [0, 19]");
}

TEST(IndexingMapTest, ComposeConcatenatesSymbolsAndCarriesConstraints) {
  // A reduce over d1 of [10, 8] (output -> input), then a slice of its input's producer.
  IndexingMap reduce = ParseMap("(d0)[s0] -> (d0, s0), domain: d0 in [0, 9], s0 in [0, 7]");
  IndexingMap pad = ParseMap(
      "(d0, d1) -> (d0, (d1 - 1) floordiv 2), domain: d0 in [0, 9], d1 in [0, 7], d1 - 1 in "
      "[0, 4], (d1 - 1) mod 2 in [0, 0]");
  IndexingMap composed = Compose(reduce, pad);
  EXPECT_EQ(composed.ToString(),
            "(d0)[s0] -> (d0, (s0 - 1) floordiv 2), domain: d0 in [0, 9], s0 in [1, 5], (s0 - 1) "
            "mod 2 in [0, 0]");
  // second's symbols come after first's.
  IndexingMap broadcast_in = ParseMap("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]");
  IndexingMap window = ParseMap("(d0)[s0] -> (d0 * 2 + s0), domain: d0 in [0, 4], s0 in [0, 2]");
  EXPECT_EQ(Compose(broadcast_in, window).ToString(),
            "(d0)[s0, s1] -> (d0 * 2 + s0 * 2 + s1), domain: d0 in [0, 3], s0 in [0, 1], s1 in "
            "[0, 2]");
}

TEST(IndexingMapTest, ComposeAddsSecondsRangesOnlyWhenNotImplied) {
  IndexingMap shift = ParseMap("(d0) -> (d0 + 2), domain: d0 in [0, 9]");
  IndexingMap narrow = ParseMap("(d0) -> (d0), domain: d0 in [0, 5]");
  EXPECT_EQ(Compose(shift, narrow).ToString(), "(d0) -> (d0 + 2), domain: d0 in [0, 3]");
  IndexingMap wide = ParseMap("(d0) -> (d0), domain: d0 in [0, 20]");
  EXPECT_EQ(Compose(shift, wide).ToString(), "(d0) -> (d0 + 2), domain: d0 in [0, 9]");
  IndexingMap mixed = ParseMap("(d0, d1) -> (d0 + d1), domain: d0 in [0, 9], d1 in [0, 9]");
  EXPECT_EQ(Compose(mixed, narrow).ToString(),
            "(d0, d1) -> (d0 + d1), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in [0, 5]");
}

TEST(IndexingMapTest, ComposeWithUndefinedOrEmpty) {
  IndexingMap id = ParseMap("(d0) -> (d0), domain: d0 in [0, 9]");
  EXPECT_TRUE(Compose(id, IndexingMap::Undefined()).IsUndefined());
  EXPECT_TRUE(Compose(IndexingMap::Undefined(), id).IsUndefined());
  EXPECT_TRUE(Compose(id, IndexingMap::KnownEmpty(1, 0, 1)).IsKnownEmpty());
  IndexingMap disjoint = ParseMap("(d0) -> (d0), domain: d0 in [20, 29]");
  EXPECT_TRUE(Compose(id, disjoint).IsKnownEmpty());
}

TEST(IndexingMapTest, ComposeMatchesApplyingBothPointByPoint) {
  IndexingMap first = ParseMap(
      "(d0, d1)[s0] -> (d0 * 3 + s0, d1 floordiv 2), domain: d0 in [0, 4], d1 in [0, 7], s0 in "
      "[0, 2], d1 + s0 in [1, 8]");
  IndexingMap second = ParseMap(
      "(d0, d1)[s0] -> (d0 mod 5 + s0, d1 - 1), domain: d0 in [2, 12], d1 in [1, 3], s0 in [0, "
      "1], d0 + d1 in [0, 12]");
  IndexingMap composed = Compose(first, second);
  int64_t points = 0;
  testing::ForEachPointInBox(composed, [&](std::span<const int64_t> d, std::span<const int64_t> s) {
    std::span<const int64_t> s_first = s.first(first.symbol_count());
    std::span<const int64_t> s_second = s.subspan(first.symbol_count());
    std::vector<int64_t> middle = first.Evaluate(d, s_first);
    bool expected = first.Contains(d, s_first) && second.Contains(middle, s_second);
    ASSERT_EQ(composed.Contains(d, s), expected);
    if (expected) {
      ++points;
      EXPECT_EQ(composed.Evaluate(d, s), second.Evaluate(middle, s_second));
    }
  });
  EXPECT_GT(points, 0);
}

}  // namespace
}  // namespace tilesmith::analysis
