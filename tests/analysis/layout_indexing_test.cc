// Layout maps against the ground truth, `hlo::PhysicalLayout`: every element and every slot
// of small shapes, the examples of docs/cli.md, and random layouts with tiles, combined dims and
// tail padding.
#include "compiler/analysis/layout_indexing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/tiling.h"
#include "tests/analysis/analysis_test_util.h"

namespace tilesmith::analysis {
namespace {

hlo::Shape MustParseShape(const std::string& text) {
  Expected<hlo::Shape> shape = hlo::ParseShape(text);
  EXPECT_TRUE(shape.has_value()) << text << ": " << (shape ? "" : shape.error().message);
  return shape ? *shape : hlo::Shape();
}

// Both maps of `shape`, checked at every logical index and every slot.
void ExpectLayoutMapsMatchPhysicalLayout(const hlo::Shape& shape) {
  SCOPED_TRACE(hlo::ShapeToString(shape));
  Expected<hlo::PhysicalLayout> physical = hlo::PhysicalLayout::Create(shape);
  ASSERT_TRUE(physical.has_value()) << physical.error().message;
  Expected<IndexingMap> forward = LogicalToLinearIndexing(shape);
  Expected<IndexingMap> inverse = LinearToLogicalIndexing(shape);
  ASSERT_TRUE(forward.has_value()) << forward.error().message;
  ASSERT_TRUE(inverse.has_value()) << inverse.error().message;
  ASSERT_EQ(forward->dim_count(), shape.rank());
  ASSERT_EQ(inverse->result_count(), shape.rank());
  int64_t elements = 0;
  testing::ForEachPointInBox(
      *forward, [&](std::span<const int64_t> index, std::span<const int64_t> symbols) {
        ++elements;
        ASSERT_TRUE(forward->Contains(index, symbols));
        ASSERT_EQ(forward->Evaluate(index, symbols)[0], physical->LinearIndex(index))
            << forward->ToString();
      });
  EXPECT_EQ(elements, std::max<int64_t>(shape.ElementCount(), 0));
  for (int64_t slot = 0; slot < physical->element_count(); ++slot) {
    std::vector<int64_t> point = {slot};
    std::optional<std::vector<int64_t>> element = physical->ElementAt(slot);
    ASSERT_EQ(inverse->Contains(point), element.has_value())
        << "slot " << slot << ": " << inverse->ToString();
    if (element) {
      ASSERT_EQ(inverse->Evaluate(point), *element) << inverse->ToString();
    }
  }
}

TEST(LayoutIndexingTest, RowAndColumnMajor) {
  EXPECT_EQ(LogicalToLinearIndexing(MustParseShape("f32[3,5]{1,0}"))->ToString(),
            "(d0, d1) -> (d0 * 5 + d1), domain: d0 in [0, 2], d1 in [0, 4]");
  EXPECT_EQ(LogicalToLinearIndexing(MustParseShape("f32[3,5]{0,1}"))->ToString(),
            "(d0, d1) -> (d0 + d1 * 3), domain: d0 in [0, 2], d1 in [0, 4]");
  EXPECT_EQ(LinearToLogicalIndexing(MustParseShape("f32[3,5]{0,1}"))->ToString(),
            "(d0) -> (d0 mod 3, d0 floordiv 3), domain: d0 in [0, 14]");
  EXPECT_EQ(LogicalToLinearIndexing(MustParseShape("f32[]"))->ToString(), "() -> (0)");
}

TEST(LayoutIndexingTest, ReadmeExamples) {
  IndexingMap tiled = *LogicalToLinearIndexing(MustParseShape("f32[3,5]{1,0:T(2,2)}"));
  EXPECT_EQ(tiled.Evaluate(std::vector<int64_t>{2, 3})[0], 17);
  EXPECT_EQ(tiled.ToString(),
            "(d0, d1) -> ((d0 floordiv 2) * 12 + (d1 floordiv 2) * 4 + (d0 mod 2) * 2 + d1 mod 2), "
            "domain: d0 in [0, 2], d1 in [0, 4]");
  IndexingMap two_level = *LogicalToLinearIndexing(MustParseShape("s32[4,8]{1,0:T(2,4)(2,1)}"));
  EXPECT_EQ(two_level.Evaluate(std::vector<int64_t>{3, 7})[0], 31);
  IndexingMap inverse = *LinearToLogicalIndexing(MustParseShape("f32[3,5]{1,0:T(2,2)}"));
  EXPECT_EQ(inverse.Evaluate(std::vector<int64_t>{17}), (std::vector<int64_t>{2, 3}));
  // Slot 14 would be row 3 (the padding row of the second tile row), slot 9 column 5.
  EXPECT_FALSE(inverse.Contains(std::vector<int64_t>{14}));
  EXPECT_FALSE(inverse.Contains(std::vector<int64_t>{9}));
  EXPECT_TRUE(inverse.Contains(std::vector<int64_t>{20}));
}

TEST(LayoutIndexingTest, SmallShapesExhaustively) {
  for (const char* text : {
           "f32[3,5]{1,0}",
           "f32[3,5]{0,1}",
           "f32[2,3,4]{0,2,1}",
           "f32[3,5]{1,0:T(2,2)}",
           "s32[4,8]{1,0:T(2,4)(2,1)}",
           "f32[5,7]{0,1:T(4,2)}",
           "f32[7]{0:T(4)}",
           "f32[3,5]{1,0:T(2,2)L(7)}",
           "f32[2,3,5]{2,1,0:T(*,2,4)}",
           "f32[2,3,4,5]{3,2,1,0:T(2,*,3)}",
           "f32[6]{0:T(2,2,2)}",
           "bf16[8,6]{1,0:T(8,4)(2,1)}",
           "s4[5,6]{1,0:T(2,4)E(4)}",
           "f32[0,3]{1,0}",
           "f32[3,0]{1,0:T(2,2)}",
           "pred[3,3]{0,1:T(2,2)}",
       }) {
    ExpectLayoutMapsMatchPhysicalLayout(MustParseShape(text));
  }
}

TEST(LayoutIndexingTest, RejectsWhatHasNoLayout) {
  EXPECT_FALSE(LogicalToLinearIndexing(MustParseShape("(f32[2], s32[])")).has_value());
  EXPECT_FALSE(LinearToLogicalIndexing(MustParseShape("token[]")).has_value());
  EXPECT_FALSE(LogicalToLinearIndexing(MustParseShape("f32[?,3]")).has_value());
}

// Random shapes: any dim order, up to two tile levels (longer than the rank, with combined
// dims), sometimes tail padding.
std::string RandomShapeText(std::mt19937& rng) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int64_t rank = uniform(1, 4);
  std::vector<int64_t> order(rank);
  for (int64_t i = 0; i < rank; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::string text = "f32[";
  for (int64_t i = 0; i < rank; ++i) text += (i ? "," : "") + std::to_string(uniform(1, 6));
  text += "]{";
  for (int64_t i = 0; i < rank; ++i) text += (i ? "," : "") + std::to_string(order[i]);
  int64_t levels = uniform(0, 2);
  int64_t current_rank = rank;
  std::string fields;
  for (int64_t level = 0; level < levels; ++level) {
    int64_t tile_rank = uniform(1, current_rank + 1);
    int64_t sized = 0;
    fields += "T(";
    for (int64_t j = 0; j < tile_rank; ++j) {
      bool combine = j + 1 < tile_rank && uniform(0, 3) == 0;
      fields += (j ? "," : "") + (combine ? std::string("*") : std::to_string(uniform(1, 5)));
      sized += combine ? 0 : 1;
    }
    fields += ")";
    current_rank = std::max(current_rank, tile_rank) - tile_rank + 2 * sized;
  }
  if (uniform(0, 3) == 0) fields += "L(" + std::to_string(uniform(2, 9)) + ")";
  return text + (fields.empty() ? "" : ":" + fields) + "}";
}

TEST(LayoutIndexingTest, RandomLayoutsMatchPhysicalLayout) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 400; ++trial) {
    ExpectLayoutMapsMatchPhysicalLayout(MustParseShape(RandomShapeText(rng)));
    if (::testing::Test::HasFailure()) FAIL() << "trial " << trial;
  }
}

}  // namespace
}  // namespace tilesmith::analysis
