// Strides to buffers: which strided tensors tilesmith can read, and with what layout.
#include "compiler/ascgraph/memory_view.h"

#include <gtest/gtest.h>

namespace tilesmith::ascgraph {
namespace {

MemoryView Analyze(std::vector<int64_t> repeats, std::vector<int64_t> strides) {
  auto view = AnalyzeStrides(repeats, strides);
  EXPECT_TRUE(view.has_value()) << view.error().message;
  return view.value_or(MemoryView{});
}

TEST(MemoryViewTest, RowMajorIsDenseWithTheDefaultLayout) {
  MemoryView view = Analyze({4, 5, 6}, {30, 6, 1});
  EXPECT_TRUE(view.IsDense(std::vector<int64_t>{4, 5, 6}));
  EXPECT_TRUE(view.HasDefaultLayout());
  EXPECT_EQ(view.buffer_dims, (std::vector<int64_t>{4, 5, 6}));
  // Size-1 dims may carry any stride (the graph engine writes 0) and stay in place.
  view = Analyze({4, 1, 6, 1}, {6, 0, 1, 0});
  EXPECT_TRUE(view.IsDense(std::vector<int64_t>{4, 1, 6, 1}));
  EXPECT_TRUE(view.HasDefaultLayout());
  view = Analyze({8, 1}, {1, 0});
  EXPECT_TRUE(view.HasDefaultLayout());
}

TEST(MemoryViewTest, PermutedStridesGiveALayout) {
  MemoryView view = Analyze({4, 5}, {1, 4});
  EXPECT_TRUE(view.IsDense(std::vector<int64_t>{4, 5}));
  EXPECT_EQ(view.minor_to_major, (std::vector<int64_t>{0, 1}));
  view = Analyze({2, 3, 4}, {3, 1, 6});  // dim 1 fastest, then 0, then 2
  EXPECT_TRUE(view.IsDense(std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(view.minor_to_major, (std::vector<int64_t>{1, 0, 2}));
}

TEST(MemoryViewTest, GapsPadTheBuffer) {
  MemoryView view = Analyze({3, 5}, {8, 1});  // rows of 8, 5 used
  EXPECT_FALSE(view.IsDense(std::vector<int64_t>{3, 5}));
  EXPECT_EQ(view.buffer_dims, (std::vector<int64_t>{3, 8}));
  EXPECT_TRUE(view.HasDefaultLayout());
  view = Analyze({3, 4}, {8, 2});  // every other element
  EXPECT_TRUE(view.element_dim);
  EXPECT_EQ(view.buffer_dims, (std::vector<int64_t>{3, 4, 2}));
  EXPECT_TRUE(view.HasDefaultLayout());
  view = Analyze({3, 4}, {1, 5});  // column major, columns padded to 5
  EXPECT_EQ(view.buffer_dims, (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(view.minor_to_major, (std::vector<int64_t>{0, 1}));
}

TEST(MemoryViewTest, ZeroStridesBroadcast) {
  MemoryView view = Analyze({3, 4}, {0, 1});
  EXPECT_EQ(view.broadcast, (std::vector<bool>{true, false}));
  EXPECT_EQ(view.buffer_dims, std::vector<int64_t>{4});
  EXPECT_FALSE(view.IsDense(std::vector<int64_t>{3, 4}));
}

TEST(MemoryViewTest, OverlappingOrNonNestingStridesAreUnimplemented) {
  for (auto [repeats, strides] : {std::pair{std::vector<int64_t>{4, 4}, std::vector<int64_t>{2, 1}},
                                  {{4, 4}, {1, 1}},
                                  {{3, 2}, {5, 2}}}) {
    auto view = AnalyzeStrides(repeats, strides);
    ASSERT_FALSE(view.has_value());
    EXPECT_EQ(view.error().code, ErrorCode::kUnimplemented);
    EXPECT_NE(view.error().message.find("overlap or do not nest"), std::string::npos);
  }
}

}  // namespace
}  // namespace tilesmith::ascgraph
