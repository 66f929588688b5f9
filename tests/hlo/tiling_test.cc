#include "compiler/hlo/tiling.h"

#include <gtest/gtest.h>

namespace tilesmith::hlo {
namespace {

TEST(TilingTest, SpecExampleSingleTile) {
  Layout layout = Layout::Default(2);
  layout.tiles.push_back(Tile{{2, 2}});
  Shape shape = Shape::Array(PrimitiveType::kF32, {3, 5}, layout);
  auto physical = PhysicalLayout::Create(shape);
  ASSERT_TRUE(physical.has_value()) << physical.error().message;
  std::vector<int64_t> index = {2, 3};
  EXPECT_EQ(physical->LinearIndex(index), 17);
  EXPECT_EQ(physical->byte_size(), 96);
}

}  // namespace
}  // namespace tilesmith::hlo
