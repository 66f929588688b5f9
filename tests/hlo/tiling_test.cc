#include "compiler/hlo/tiling.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace tilesmith::hlo {
namespace {

// A shape with layout `minor_to_major`, the given tiles and optional L/E fields.
Shape MakeShape(PrimitiveType type, std::vector<int64_t> dims, std::vector<int64_t> minor_to_major,
                std::vector<std::vector<int64_t>> tiles = {}, int64_t tail_padding = 1,
                int64_t element_bits = 0) {
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  for (auto& tile : tiles) layout.tiles.push_back(Tile{std::move(tile)});
  layout.tail_padding_alignment_in_elements = tail_padding;
  layout.element_size_in_bits = element_bits;
  return Shape::Array(type, std::move(dims), std::move(layout));
}

PhysicalLayout MustCreate(const Shape& shape) {
  auto physical = PhysicalLayout::Create(shape);
  EXPECT_TRUE(physical.has_value()) << ShapeToString(shape) << ": " << physical.error().message;
  return physical.value_or(PhysicalLayout{});
}

int64_t Slot(const PhysicalLayout& physical, std::vector<int64_t> index) {
  return physical.LinearIndex(index);
}

std::vector<int64_t> Dims(const PhysicalLayout& physical) {
  return {physical.tiled_dims().begin(), physical.tiled_dims().end()};
}

// Calls `visit` with every multi-index of `dims` in row-major order.
template <typename Visit>
void ForEachIndex(std::span<const int64_t> dims, Visit visit) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(dims.size(), 0);
  while (true) {
    visit(index);
    int64_t d = static_cast<int64_t>(dims.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

TEST(TilingTest, SpecExampleSingleTile) {
  PhysicalLayout physical = MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0}, {{2, 2}}));
  EXPECT_EQ(Slot(physical, {2, 3}), 17);
  EXPECT_EQ(physical.byte_size(), 96);
  EXPECT_EQ(physical.element_count(), 24);
  EXPECT_EQ(Dims(physical), (std::vector<int64_t>{2, 3, 2, 2}));
  EXPECT_TRUE(physical.is_tiled());
}

TEST(TilingTest, SpecExampleRepeatedTiles) {
  PhysicalLayout physical =
      MustCreate(MakeShape(PrimitiveType::kS32, {4, 8}, {1, 0}, {{2, 4}, {2, 1}}));
  EXPECT_EQ(Slot(physical, {0, 0}), 0);
  EXPECT_EQ(Slot(physical, {1, 0}), 1);
  EXPECT_EQ(Slot(physical, {0, 1}), 2);
  EXPECT_EQ(Slot(physical, {1, 1}), 3);
  EXPECT_EQ(Slot(physical, {0, 4}), 8);
  EXPECT_EQ(Slot(physical, {2, 0}), 16);
  EXPECT_EQ(Slot(physical, {3, 7}), 31);
  EXPECT_EQ(physical.element_count(), 32);
  EXPECT_EQ(physical.byte_size(), 128);
}

TEST(TilingTest, SpecExampleCombinedDimensions) {
  PhysicalLayout combined = MustCreate(
      MakeShape(PrimitiveType::kF32, {2, 7, 8, 11, 10}, {4, 3, 2, 1, 0}, {{-1, -1, 2, -1, 3}}));
  PhysicalLayout merged = MustCreate(MakeShape(PrimitiveType::kF32, {112, 110}, {1, 0}, {{2, 3}}));
  EXPECT_EQ(Dims(combined), (std::vector<int64_t>{56, 37, 2, 3}));
  EXPECT_EQ(Dims(combined), Dims(merged));
  EXPECT_EQ(combined.element_count(), merged.element_count());
  std::vector<int64_t> dims = {2, 7, 8, 11, 10};
  ForEachIndex(dims, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> merged_index = {(i[0] * 7 + i[1]) * 8 + i[2], i[3] * 10 + i[4]};
    ASSERT_EQ(combined.LinearIndex(i), merged.LinearIndex(merged_index));
    ASSERT_EQ(combined.ElementAt(combined.LinearIndex(i)), i);
  });
}

TEST(TilingTest, ColumnMajorUntiled) {
  PhysicalLayout physical = MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {0, 1}));
  EXPECT_FALSE(physical.is_tiled());
  EXPECT_EQ(Dims(physical), (std::vector<int64_t>{5, 3}));
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) EXPECT_EQ(Slot(physical, {i, j}), j * 3 + i);
  }
  EXPECT_EQ(physical.ElementAt(4), (std::vector<int64_t>{1, 1}));
}

TEST(TilingTest, RowMajorMeansElementIInSlotI) {
  EXPECT_TRUE(MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0})).is_row_major());
  EXPECT_TRUE(MustCreate(MakeShape(PrimitiveType::kF32, {2, 3, 4}, {2, 1, 0})).is_row_major());
  EXPECT_FALSE(MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {0, 1})).is_row_major());
  EXPECT_FALSE(MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0}, {{2, 2}})).is_row_major());
  // Tail padding: the slots outnumber the elements.
  EXPECT_FALSE(MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0}, {}, 16)).is_row_major());
  EXPECT_TRUE(MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0}, {}, 5)).is_row_major());
}

TEST(TilingTest, ColumnMajorTiled) {
  // Physical dims (5, 3) tiled (2, 2): element (i, j) sits at physical (j, i).
  PhysicalLayout physical = MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {0, 1}, {{2, 2}}));
  EXPECT_EQ(Dims(physical), (std::vector<int64_t>{3, 2, 2, 2}));
  EXPECT_EQ(Slot(physical, {2, 3}), (1 * 2 + 1) * 4 + 1 * 2 + 0);
  EXPECT_EQ(physical.element_count(), 24);
}

TEST(TilingTest, TailPaddingRoundsTheSlotCount) {
  PhysicalLayout untiled = MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0}, {}, 8));
  EXPECT_EQ(untiled.element_count(), 16);
  EXPECT_EQ(untiled.byte_size(), 64);
  EXPECT_EQ(untiled.ElementAt(14), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(untiled.ElementAt(15), std::nullopt);  // the tail padding slot
  PhysicalLayout tiled = MustCreate(MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0}, {{2, 2}}, 10));
  EXPECT_EQ(tiled.element_count(), 30);
  EXPECT_EQ(tiled.byte_size(), 120);
  EXPECT_EQ(tiled.ElementAt(29), std::nullopt);
  PhysicalLayout exact = MustCreate(MakeShape(PrimitiveType::kF32, {4, 4}, {1, 0}, {}, 16));
  EXPECT_EQ(exact.element_count(), 16);
}

TEST(TilingTest, ElementSizeInBits) {
  // s4 packs two per byte: ceil(n * 4 / 8).
  for (int64_t n : {0, 1, 2, 5, 8, 9}) {
    PhysicalLayout s4 = MustCreate(MakeShape(PrimitiveType::kS4, {n}, {0}, {}, 1, 4));
    EXPECT_EQ(s4.element_bits(), 4);
    EXPECT_EQ(s4.byte_size(), (n * 4 + 7) / 8) << n;
  }
  // Without E(n) s4 still uses its 4-bit width.
  EXPECT_EQ(MustCreate(MakeShape(PrimitiveType::kS4, {5}, {0})).byte_size(), 3);
  EXPECT_EQ(MustCreate(MakeShape(PrimitiveType::kF4E2M1FN, {3}, {0}, {}, 1, 4)).byte_size(), 2);
  EXPECT_EQ(MustCreate(MakeShape(PrimitiveType::kU2, {7}, {0})).byte_size(), 2);
  // A wider E(n) widens every slot.
  PhysicalLayout widened = MustCreate(MakeShape(PrimitiveType::kS4, {3}, {0}, {}, 1, 8));
  EXPECT_EQ(widened.byte_size(), 3);
  EXPECT_EQ(MustCreate(MakeShape(PrimitiveType::kU8, {3}, {0}, {}, 1, 16)).byte_size(), 6);
  // Tiles and E(4) together: 8 padded slots of 4 bits.
  EXPECT_EQ(MustCreate(MakeShape(PrimitiveType::kS4, {3, 3}, {1, 0}, {{2, 2}}, 1, 4)).byte_size(),
            8);
}

TEST(TilingTest, PredIsOneBytePerElement) {
  PhysicalLayout pred = MustCreate(MakeShape(PrimitiveType::kPred, {10}, {0}));
  EXPECT_EQ(pred.element_bits(), 8);
  EXPECT_EQ(pred.byte_size(), 10);
  EXPECT_EQ(MustCreate(MakeShape(PrimitiveType::kPred, {10}, {0}, {}, 1, 1)).byte_size(), 2);
  EXPECT_EQ(MustCreate(Shape::Scalar(PrimitiveType::kPred)).byte_size(), 1);
}

TEST(TilingTest, Bf16TpuTiling) {
  PhysicalLayout physical =
      MustCreate(MakeShape(PrimitiveType::kBF16, {16, 256}, {1, 0}, {{8, 128}, {2, 1}}));
  EXPECT_EQ(Dims(physical), (std::vector<int64_t>{2, 2, 4, 128, 2, 1}));
  EXPECT_EQ(physical.byte_size(), 16 * 256 * 2);
  // Pairs of rows share 32 bits: (r, c) -> tile * 1024 + (r % 8 / 2) * 256 + c * 2 + r % 2.
  for (int64_t r = 0; r < 16; ++r) {
    for (int64_t c = 0; c < 256; ++c) {
      int64_t expected = ((r / 8) * 2 + c / 128) * 1024 + (r % 8 / 2) * 256 + (c % 128) * 2 + r % 2;
      ASSERT_EQ(Slot(physical, {r, c}), expected) << r << "," << c;
    }
  }
  // A small array pads to a whole (8, 128) tile.
  PhysicalLayout small =
      MustCreate(MakeShape(PrimitiveType::kBF16, {3, 5}, {1, 0}, {{8, 128}, {2, 1}}));
  EXPECT_EQ(small.element_count(), 1024);
  EXPECT_EQ(small.byte_size(), 2048);
  EXPECT_EQ(Slot(small, {2, 4}), 1 * 256 + 4 * 2 + 0);
}

TEST(TilingTest, TileRankGreaterThanShapeRank) {
  // f32[5] tiled (2, 4) is tiled as f32[1, 5]: tiled dims (1, 2, 2, 4).
  PhysicalLayout physical = MustCreate(MakeShape(PrimitiveType::kF32, {5}, {0}, {{2, 4}}));
  EXPECT_EQ(Dims(physical), (std::vector<int64_t>{1, 2, 2, 4}));
  EXPECT_EQ(physical.element_count(), 16);
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(Slot(physical, {i}), (i / 4) * 8 + i % 4);
    EXPECT_EQ(physical.ElementAt(Slot(physical, {i})), (std::vector<int64_t>{i}));
  }
  EXPECT_EQ(physical.ElementAt(4), std::nullopt);  // row 1 of the first tile: padding
  PhysicalLayout scalar = MustCreate(MakeShape(PrimitiveType::kF32, {}, {}, {{128}}));
  EXPECT_EQ(scalar.element_count(), 128);
  EXPECT_EQ(Slot(scalar, {}), 0);
  EXPECT_EQ(scalar.ElementAt(0), std::vector<int64_t>{});
  EXPECT_EQ(scalar.ElementAt(1), std::nullopt);
}

TEST(TilingTest, ZeroSizedDimensions) {
  for (const Shape& shape :
       {MakeShape(PrimitiveType::kF32, {0}, {0}), MakeShape(PrimitiveType::kF32, {3, 0}, {1, 0}),
        MakeShape(PrimitiveType::kF32, {0, 5}, {0, 1}, {{2, 2}}),
        MakeShape(PrimitiveType::kBF16, {4, 0}, {1, 0}, {{8, 128}, {2, 1}}),
        MakeShape(PrimitiveType::kS4, {0, 3}, {1, 0}, {}, 4, 4)}) {
    PhysicalLayout physical = MustCreate(shape);
    EXPECT_EQ(physical.element_count(), 0) << ShapeToString(shape);
    EXPECT_EQ(physical.byte_size(), 0) << ShapeToString(shape);
    EXPECT_TRUE(physical.SlotOfEveryElement().empty());
    EXPECT_EQ(physical.ElementAt(0), std::nullopt);
  }
}

TEST(TilingTest, ScalarUntiled) {
  PhysicalLayout physical = MustCreate(Shape::Scalar(PrimitiveType::kF64));
  EXPECT_EQ(physical.element_count(), 1);
  EXPECT_EQ(physical.byte_size(), 8);
  EXPECT_EQ(Slot(physical, {}), 0);
  EXPECT_EQ(physical.SlotOfEveryElement(), std::vector<int64_t>{0});
}

TEST(TilingTest, RejectsWhatHasNoPhysicalLayout) {
  EXPECT_FALSE(PhysicalLayout::Create(Shape::Token()).has_value());
  EXPECT_FALSE(PhysicalLayout::Create(Shape::Tuple({Shape::Scalar(PrimitiveType::kF32)})));
  EXPECT_FALSE(PhysicalLayout::Create(MakeShape(PrimitiveType::kF32, {3, 5}, {0, 0})));
  EXPECT_FALSE(PhysicalLayout::Create(MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0}, {{2, -1}})));
  EXPECT_FALSE(PhysicalLayout::Create(MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0}, {{0, 2}})));
  Shape unbounded = MakeShape(PrimitiveType::kF32, {Shape::kUnboundedSize}, {0});
  unbounded.set_dynamic_dim(0, true);
  auto result = PhysicalLayout::Create(unbounded);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("unbounded"), std::string::npos);
}

TEST(TilingTest, BoundedDynamicDimensionUsesItsBound) {
  Shape shape = MakeShape(PrimitiveType::kF32, {6, 4}, {1, 0});
  shape.set_dynamic_dim(0, true);
  EXPECT_EQ(MustCreate(shape).byte_size(), 96);
}

// A random array shape with a random layout: permuted dims, up to two tile levels (which
// may be longer than the rank and may combine dims), and sometimes tail padding.
Shape RandomShape(std::mt19937& rng) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int64_t rank = uniform(0, 4);
  std::vector<int64_t> dims(rank);
  for (int64_t& d : dims) d = uniform(0, 9) == 0 ? 0 : uniform(1, 7);
  std::vector<int64_t> minor_to_major(rank);
  for (int64_t i = 0; i < rank; ++i) minor_to_major[i] = i;
  std::shuffle(minor_to_major.begin(), minor_to_major.end(), rng);
  std::vector<std::vector<int64_t>> tiles;
  int64_t levels = uniform(0, 2);
  int64_t current_rank = rank;
  for (int64_t level = 0; level < levels; ++level) {
    int64_t tile_rank = uniform(1, current_rank + 1);
    std::vector<int64_t> tile(tile_rank);
    int64_t sized = 0;
    for (int64_t j = 0; j < tile_rank; ++j) {
      bool combine = j + 1 < tile_rank && uniform(0, 3) == 0;
      tile[j] = combine ? Tile::kCombineDimension : uniform(1, 5);
      if (!combine) ++sized;
    }
    // The next level sees the untouched leading dims, the tile counts and the tile sizes.
    current_rank = std::max(current_rank, tile_rank) - tile_rank + 2 * sized;
    tiles.push_back(std::move(tile));
  }
  int64_t padding = uniform(0, 3) == 0 ? uniform(2, 9) : 1;
  return MakeShape(PrimitiveType::kF32, std::move(dims), std::move(minor_to_major),
                   std::move(tiles), padding);
}

TEST(TilingPropertyTest, EveryElementHasItsOwnSlotAndMapsBack) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 3000; ++trial) {
    Shape shape = RandomShape(rng);
    SCOPED_TRACE(ShapeToString(shape));
    auto created = PhysicalLayout::Create(shape);
    ASSERT_TRUE(created.has_value()) << created.error().message;
    const PhysicalLayout& physical = *created;
    ASSERT_GE(physical.element_count(), shape.ElementCount());
    std::vector<int64_t> slots = physical.SlotOfEveryElement();
    ASSERT_EQ(static_cast<int64_t>(slots.size()), shape.ElementCount());
    std::vector<bool> used(physical.element_count(), false);
    int64_t n = 0;
    ForEachIndex(shape.dims(), [&](const std::vector<int64_t>& index) {
      int64_t slot = physical.LinearIndex(index);
      ASSERT_EQ(slot, slots[n++]);
      ASSERT_GE(slot, 0);
      ASSERT_LT(slot, physical.element_count());
      ASSERT_FALSE(used[slot]) << "slot " << slot << " hit twice";
      used[slot] = true;
      ASSERT_EQ(physical.ElementAt(slot), index);
    });
    ASSERT_EQ(n, shape.ElementCount());
    int64_t occupied = 0;
    for (int64_t slot = 0; slot < physical.element_count(); ++slot) {
      std::optional<std::vector<int64_t>> element = physical.ElementAt(slot);
      if (element.has_value()) {
        ++occupied;
        ASSERT_TRUE(used[slot]) << "slot " << slot << " claims an element that is elsewhere";
      }
    }
    ASSERT_EQ(occupied, shape.ElementCount());
    ASSERT_EQ(physical.byte_size(), physical.element_count() * 4);
  }
}

TEST(TilingPropertyTest, UntiledLayoutsArePermutedRowMajor) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 200; ++trial) {
    Shape shape = RandomShape(rng);
    shape.mutable_layout().tiles.clear();
    shape.mutable_layout().tail_padding_alignment_in_elements = 1;
    PhysicalLayout physical = MustCreate(shape);
    ASSERT_EQ(physical.element_count(), shape.ElementCount());
    // The stride of a dim is the product of the dims more minor than it.
    ForEachIndex(shape.dims(), [&](const std::vector<int64_t>& index) {
      int64_t expected = 0, stride = 1;
      for (int64_t d : shape.layout().minor_to_major) {
        expected += index[d] * stride;
        stride *= shape.dim(d);
      }
      ASSERT_EQ(physical.LinearIndex(index), expected) << ShapeToString(shape);
    });
  }
}

}  // namespace
}  // namespace tilesmith::hlo
