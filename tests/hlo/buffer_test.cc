#include "compiler/hlo/buffer.h"

#include <gtest/gtest.h>

#include <random>

#include "compiler/hlo/tiling.h"

namespace tilesmith::hlo {
namespace {

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

Literal IntLiteral(const Shape& shape, std::vector<int64_t> values) {
  Literal literal(shape);
  for (size_t i = 0; i < values.size(); ++i) literal.SetInt(static_cast<int64_t>(i), values[i]);
  return literal;
}

std::vector<uint8_t> MustBuffer(const Literal& literal) {
  auto buffer = ToPhysicalBuffer(literal);
  EXPECT_TRUE(buffer.has_value()) << ShapeToString(literal.shape()) << ": "
                                  << buffer.error().message;
  return buffer.value_or(std::vector<uint8_t>{});
}

using Bytes = std::vector<uint8_t>;

TEST(BufferTest, PackedS4FirstElementInLowBits) {
  Shape shape = MakeShape(PrimitiveType::kS4, {4}, {0}, {}, 1, 4);
  Literal literal = IntLiteral(shape, {1, -2, 3, -4});
  EXPECT_EQ(MustBuffer(literal), (Bytes{0xE1, 0xC3}));
  auto back = FromPhysicalBuffer(shape, Bytes{0xE1, 0xC3});
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, literal);
  EXPECT_EQ(back->GetInt(1), -2);
  EXPECT_EQ(back->GetInt(3), -4);
}

TEST(BufferTest, PackedOddCountsLeaveHighBitsZero) {
  Shape u4 = MakeShape(PrimitiveType::kU4, {3}, {0}, {}, 1, 4);
  EXPECT_EQ(MustBuffer(IntLiteral(u4, {1, 2, 15})), (Bytes{0x21, 0x0F}));
  // u2 uses its 2-bit width even without E(n).
  Shape u2 = MakeShape(PrimitiveType::kU2, {5}, {0});
  EXPECT_EQ(MustBuffer(IntLiteral(u2, {1, 2, 3, 0, 1})), (Bytes{0x39, 0x01}));
  Shape s1 = MakeShape(PrimitiveType::kS1, {9}, {0});
  EXPECT_EQ(MustBuffer(IntLiteral(s1, {-1, 0, -1, -1, 0, 0, 0, -1, -1})), (Bytes{0x8D, 0x01}));
  Shape pred = MakeShape(PrimitiveType::kPred, {10}, {0}, {}, 1, 1);
  EXPECT_EQ(MustBuffer(IntLiteral(pred, {1, 0, 0, 1, 1, 1, 0, 0, 0, 1})), (Bytes{0x39, 0x02}));
}

TEST(BufferTest, PackedColumnMajor) {
  // Logical [[1, 2, 3], [4, 5, 6]] stored column by column: 1 4 2 5 3 6.
  Shape shape = MakeShape(PrimitiveType::kS4, {2, 3}, {0, 1}, {}, 1, 4);
  EXPECT_EQ(MustBuffer(IntLiteral(shape, {1, 2, 3, 4, 5, 6})), (Bytes{0x41, 0x52, 0x63}));
}

TEST(BufferTest, F4E2M1FnPacked) {
  Shape shape = MakeShape(PrimitiveType::kF4E2M1FN, {3}, {0}, {}, 1, 4);
  Literal literal(shape);
  literal.SetDouble(0, 1.0);   // 0x2
  literal.SetDouble(1, -6.0);  // 0xF
  literal.SetDouble(2, 0.5);   // 0x1
  EXPECT_EQ(MustBuffer(literal), (Bytes{0xF2, 0x01}));
}

TEST(BufferTest, WideSlotsHoldTheNaturalBitsLow) {
  Shape s8 = MakeShape(PrimitiveType::kS8, {3}, {0}, {}, 1, 16);
  EXPECT_EQ(MustBuffer(IntLiteral(s8, {-1, 2, -128})), (Bytes{0xFF, 0, 0x02, 0, 0x80, 0}));
  Shape s4 = MakeShape(PrimitiveType::kS4, {2}, {0}, {}, 1, 8);
  Literal literal = IntLiteral(s4, {-2, 7});
  EXPECT_EQ(MustBuffer(literal), (Bytes{0x0E, 0x07}));
  auto back = FromPhysicalBuffer(s4, Bytes{0x0E, 0x07});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->GetInt(0), -2);
  // A 12-bit slot is not byte aligned: u8 values straddle bytes.
  Shape u8 = MakeShape(PrimitiveType::kU8, {2}, {0}, {}, 1, 12);
  EXPECT_EQ(MustBuffer(IntLiteral(u8, {0xAB, 0xCD})), (Bytes{0xAB, 0xD0, 0x0C}));
}

TEST(BufferTest, MultiByteValuesAreLittleEndian) {
  Shape shape = MakeShape(PrimitiveType::kS32, {2}, {0});
  EXPECT_EQ(MustBuffer(IntLiteral(shape, {0x01020304, -2})),
            (Bytes{4, 3, 2, 1, 0xFE, 0xFF, 0xFF, 0xFF}));
  Literal bf16(MakeShape(PrimitiveType::kBF16, {1}, {0}));
  bf16.SetDouble(0, 1.0);  // 0x3F80
  EXPECT_EQ(MustBuffer(bf16), (Bytes{0x80, 0x3F}));
  Literal c64(MakeShape(PrimitiveType::kC64, {1}, {0}));
  c64.SetComplex(0, {1.0, -2.0});  // 0x3F800000, 0xC0000000
  EXPECT_EQ(MustBuffer(c64), (Bytes{0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0}));
}

TEST(BufferTest, TiledLayoutPlacesElementsAndZeroesPadding) {
  Shape shape = MakeShape(PrimitiveType::kS32, {3, 5}, {1, 0}, {{2, 2}});
  Literal literal(shape);
  for (int64_t i = 0; i < 15; ++i) literal.SetInt(i, 100 + i);
  Bytes buffer = MustBuffer(literal);
  ASSERT_EQ(buffer.size(), 96u);
  // Element (2, 3), logical index 13, sits in slot 17.
  EXPECT_EQ(buffer[17 * 4], 113);
  auto physical = PhysicalLayout::Create(shape);
  ASSERT_TRUE(physical.has_value());
  int padding = 0;
  for (int64_t slot = 0; slot < 24; ++slot) {
    if (physical->ElementAt(slot).has_value()) continue;
    ++padding;
    for (int b = 0; b < 4; ++b) EXPECT_EQ(buffer[slot * 4 + b], 0) << slot;
  }
  EXPECT_EQ(padding, 9);
}

TEST(BufferTest, Bf16PairedRows) {
  // T(8,128)(2,1): rows 0 and 1 of a column share one 32-bit word.
  Shape shape = MakeShape(PrimitiveType::kBF16, {2, 2}, {1, 0}, {{8, 128}, {2, 1}});
  Literal literal(shape);
  for (int64_t i = 0; i < 4; ++i) literal.SetBits(i, 0x1111 * (i + 1));
  Bytes buffer = MustBuffer(literal);
  ASSERT_EQ(buffer.size(), 2048u);
  // Slots: (0,0)->0, (1,0)->1, (0,1)->2, (1,1)->3.
  EXPECT_EQ((Bytes{buffer.begin(), buffer.begin() + 8}),
            (Bytes{0x11, 0x11, 0x33, 0x33, 0x22, 0x22, 0x44, 0x44}));
}

TEST(BufferTest, TailPaddingIsZero) {
  Shape shape = MakeShape(PrimitiveType::kU8, {3}, {0}, {}, 8);
  EXPECT_EQ(MustBuffer(IntLiteral(shape, {7, 8, 9})), (Bytes{7, 8, 9, 0, 0, 0, 0, 0}));
}

TEST(BufferTest, PredAnyBitIsTrue) {
  Shape shape = MakeShape(PrimitiveType::kPred, {3}, {0});
  auto literal = FromPhysicalBuffer(shape, Bytes{0, 2, 0x80});
  ASSERT_TRUE(literal.has_value());
  EXPECT_EQ(literal->GetInt(0), 0);
  EXPECT_EQ(literal->GetInt(1), 1);
  EXPECT_EQ(literal->GetInt(2), 1);
}

TEST(BufferTest, Errors) {
  Shape shape = MakeShape(PrimitiveType::kF32, {3, 5}, {1, 0}, {{2, 2}});
  auto wrong_size = FromPhysicalBuffer(shape, Bytes(60));
  ASSERT_FALSE(wrong_size.has_value());
  EXPECT_NE(wrong_size.error().message.find("60"), std::string::npos);
  EXPECT_NE(wrong_size.error().message.find("96"), std::string::npos);
  EXPECT_EQ(wrong_size.error().code, ErrorCode::kInvalidArgument);

  Literal tuple(Shape::Tuple({Shape::Scalar(PrimitiveType::kF32)}));
  EXPECT_FALSE(ToPhysicalBuffer(tuple).has_value());
  EXPECT_FALSE(FromPhysicalBuffer(Shape::Token(), Bytes{}).has_value());
  Literal elided(shape);
  elided.set_elided(true);
  EXPECT_FALSE(ToPhysicalBuffer(elided).has_value());
  Shape sparse = MakeShape(PrimitiveType::kF32, {4}, {0});
  sparse.mutable_layout().dim_level_types = {"C"};
  EXPECT_EQ(ToPhysicalBuffer(Literal(sparse)).error().code, ErrorCode::kUnimplemented);
  Shape bad = MakeShape(PrimitiveType::kF32, {4}, {1});
  EXPECT_FALSE(ToPhysicalBuffer(Literal(bad)).has_value());
}

TEST(BufferTest, ZeroSizedAndScalar) {
  Shape empty = MakeShape(PrimitiveType::kS4, {0, 3}, {1, 0}, {{2, 2}}, 1, 4);
  EXPECT_TRUE(MustBuffer(Literal(empty)).empty());
  auto back = FromPhysicalBuffer(empty, Bytes{});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->element_count(), 0);
  Literal scalar(Shape::Scalar(PrimitiveType::kF64));
  scalar.SetDouble(0, -0.0);
  EXPECT_EQ(MustBuffer(scalar), (Bytes{0, 0, 0, 0, 0, 0, 0, 0x80}));
}

// Random contents in the literal's canonical unpacked form (narrow ints sign-extended,
// pred 0/1), so that a round trip must reproduce the bytes exactly.
Literal RandomLiteral(const Shape& shape, std::mt19937& rng) {
  Literal literal(shape);
  for (uint8_t& byte : literal.bytes()) byte = static_cast<uint8_t>(rng());
  if (literal.element_bytes() <= 8) {
    for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetBits(i, literal.GetBits(i));
  }
  return literal;
}

// Layouts worth trying on a rank-2 array of `type`, E(n) variants included.
std::vector<Shape> LayoutsToTry(PrimitiveType type) {
  std::vector<int64_t> dims = {5, 7};
  std::vector<Shape> shapes = {
      MakeShape(type, dims, {1, 0}),
      MakeShape(type, dims, {0, 1}),
      MakeShape(type, dims, {1, 0}, {{2, 2}}),
      MakeShape(type, dims, {0, 1}, {{4, 3}, {2, 1}}),
      MakeShape(type, dims, {1, 0}, {{8, 128}, {2, 1}}),
      MakeShape(type, dims, {1, 0}, {{-1, 4}}),
      MakeShape(type, dims, {1, 0}, {{3}}, 7),
      MakeShape(type, dims, {1, 0}, {}, 16),
      MakeShape(type, {2, 0}, {0, 1}),
  };
  int bits = BitWidth(type);
  for (int64_t e : {4, 8, 16, 24, 64, 128}) {
    if (e >= bits) {
      shapes.push_back(MakeShape(type, dims, {1, 0}, {}, 1, e));
      shapes.push_back(MakeShape(type, dims, {0, 1}, {{2, 4}}, 1, e));
    }
  }
  return shapes;
}

TEST(BufferTest, RoundTripEveryTypeAndLayout) {
  std::mt19937 rng(7);
  for (PrimitiveType type : AllArrayTypes()) {
    for (const Shape& shape : LayoutsToTry(type)) {
      SCOPED_TRACE(ShapeToString(shape));
      Literal literal = RandomLiteral(shape, rng);
      auto buffer = ToPhysicalBuffer(literal);
      ASSERT_TRUE(buffer.has_value()) << buffer.error().message;
      auto physical = PhysicalLayout::Create(shape);
      ASSERT_TRUE(physical.has_value());
      EXPECT_EQ(static_cast<int64_t>(buffer->size()), physical->byte_size());
      auto back = FromPhysicalBuffer(shape, *buffer);
      ASSERT_TRUE(back.has_value()) << back.error().message;
      EXPECT_EQ(*back, literal);
    }
  }
}

TEST(BufferTest, ByteSlotsMatchLinearIndex) {
  // With u8 every slot is one byte: the buffer is the slot map made visible.
  std::mt19937 rng(3);
  Shape shape = MakeShape(PrimitiveType::kU8, {3, 4, 5}, {0, 2, 1}, {{-1, 2, 3}, {2, 1}});
  Literal literal = RandomLiteral(shape, rng);
  Bytes buffer = MustBuffer(literal);
  auto physical = PhysicalLayout::Create(shape);
  ASSERT_TRUE(physical.has_value());
  std::vector<int64_t> slots = physical->SlotOfEveryElement();
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    EXPECT_EQ(buffer[slots[i]], literal.GetInt(i));
  }
}

// Whole-array copies (row-major layouts) and the slot-by-slot path must place every
// element where LinearIndex says, for every byte-wide type and layout: a round trip alone
// would not notice two copies that agree with each other but not with the layout.
TEST(BufferTest, EveryByteWideElementSitsAtItsSlot) {
  std::mt19937 rng(11);
  for (PrimitiveType type : AllArrayTypes()) {
    if (BitWidth(type) % 8 != 0 || type == PrimitiveType::kPred) continue;
    for (const Shape& shape : LayoutsToTry(type)) {
      SCOPED_TRACE(ShapeToString(shape));
      auto physical = PhysicalLayout::Create(shape);
      ASSERT_TRUE(physical.has_value());
      int64_t width = BitWidth(type) / 8;
      if (physical->element_bits() != 8 * width) continue;
      Literal literal = RandomLiteral(shape, rng);
      Bytes buffer = MustBuffer(literal);
      std::vector<int64_t> slots = physical->SlotOfEveryElement();
      for (int64_t i = 0; i < literal.element_count(); ++i) {
        ASSERT_TRUE(std::equal(literal.bytes().begin() + i * width,
                               literal.bytes().begin() + (i + 1) * width,
                               buffer.begin() + slots[i] * width))
            << "element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace tilesmith::hlo
