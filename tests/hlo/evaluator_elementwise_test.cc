// Elementwise evaluator checks better done in code than as data cases: sweeps over many
// values against an independent reference, exhaustive sub-byte integer tables, speed of
// the narrow-float loops, and the errors for what is not supported.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/float_types.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::hlo {
namespace {

// Evaluates `text`'s entry on `arguments`; fails the test on any error.
Literal EvaluateText(const std::string& text, std::span<const Literal> arguments) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  if (!module) return Literal();
  auto result = Evaluate(*(*module)->entry(), arguments);
  EXPECT_TRUE(result.has_value()) << result.error().message;
  return result ? std::move(*result) : Literal();
}

// `ROOT r = <result>[n] <op>(p0, p1)` on two parameters of `operand`[n].
std::string BinaryModule(std::string_view op, std::string_view operand, std::string_view result,
                         int64_t n, std::string_view extra = "") {
  std::string dims = "[" + std::to_string(n) + "]";
  std::string o = std::string(operand) + dims;
  return "ENTRY e {\n  a = " + o + " parameter(0)\n  b = " + o +
         " parameter(1)\n  ROOT r = " + std::string(result) + dims + " " + std::string(op) +
         "(a, b)" + std::string(extra) + "\n}\n";
}

std::string UnaryModule(std::string_view op, std::string_view operand, std::string_view result,
                        int64_t n) {
  std::string dims = "[" + std::to_string(n) + "]";
  return "ENTRY e {\n  a = " + std::string(operand) + dims +
         " parameter(0)\n  ROOT r = " + std::string(result) + dims + " " + std::string(op) +
         "(a)\n}\n";
}

Literal Bits(PrimitiveType type, const std::vector<uint64_t>& bits) {
  Literal literal(Shape::Array(type, {static_cast<int64_t>(bits.size())}));
  for (size_t i = 0; i < bits.size(); ++i) literal.SetBits(static_cast<int64_t>(i), bits[i]);
  return literal;
}

// Every narrow float type: the evaluator encodes through its own tables and bit tricks;
// the reference is float_types.h, itself checked against ml_dtypes.
const PrimitiveType kNarrowTypes[] = {
    PrimitiveType::kBF16,     PrimitiveType::kF16,        PrimitiveType::kF8E5M2,
    PrimitiveType::kF8E4M3,   PrimitiveType::kF8E4M3FN,   PrimitiveType::kF8E4M3B11FNUZ,
    PrimitiveType::kF8E3M4,   PrimitiveType::kF8E5M2FNUZ, PrimitiveType::kF8E4M3FNUZ,
    PrimitiveType::kF4E2M1FN, PrimitiveType::kF8E8M0FNU,
};

TEST(EvaluatorElementwiseTest, ConvertF32ToNarrowMatchesEncoder) {
  // Every combination of the top 16 bits, each with several low halves: the cases where
  // a rounding decision could depend on the low bits.
  std::vector<uint64_t> inputs;
  for (uint32_t high = 0; high < (1u << 16); ++high) {
    for (uint32_t low : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      inputs.push_back(high << 16 | low);
    }
  }
  Literal input = Bits(PrimitiveType::kF32, inputs);
  int64_t n = static_cast<int64_t>(inputs.size());
  for (PrimitiveType type : kNarrowTypes) {
    std::string name(PrimitiveTypeName(type));
    Literal out = EvaluateText(UnaryModule("convert", "f32", name, n), {&input, 1});
    ASSERT_EQ(out.element_count(), n);
    int mismatches = 0;
    for (int64_t i = 0; i < n && mismatches < 5; ++i) {
      float value = std::bit_cast<float>(static_cast<uint32_t>(inputs[i]));
      uint64_t expected = EncodeNarrowFloat(type, value);
      if (out.GetBits(i) != expected) {
        ++mismatches;
        ADD_FAILURE() << name << ": f32 0x" << std::hex << inputs[i] << " -> 0x" << out.GetBits(i)
                      << ", expected 0x" << expected;
      }
    }
  }
}

TEST(EvaluatorElementwiseTest, NarrowArithmeticIsOneRoundingOfTheF32Op) {
  constexpr int64_t kCount = 1 << 16;
  std::mt19937 random(7);
  using Op = std::function<float(float, float)>;
  const std::pair<const char*, Op> ops[] = {
      {"add", std::plus<float>()},
      {"multiply", std::multiplies<float>()},
      {"subtract", std::minus<float>()},
      {"divide", std::divides<float>()},
  };
  for (PrimitiveType type : kNarrowTypes) {
    int width = BitWidth(type);
    std::vector<uint64_t> a_bits(kCount), b_bits(kCount);
    for (int64_t i = 0; i < kCount; ++i) {
      // All bit patterns, specials included.
      a_bits[i] = random() & ((uint64_t{1} << width) - 1);
      b_bits[i] = random() & ((uint64_t{1} << width) - 1);
    }
    Literal a = Bits(type, a_bits);
    Literal b = Bits(type, b_bits);
    Literal args[] = {a, b};
    std::string name(PrimitiveTypeName(type));
    for (const auto& [op, fn] : ops) {
      Literal out = EvaluateText(BinaryModule(op, name, name, kCount), args);
      ASSERT_EQ(out.element_count(), kCount);
      for (int64_t i = 0; i < kCount; ++i) {
        float x = DecodeNarrowFloat(type, static_cast<uint32_t>(a_bits[i]));
        float y = DecodeNarrowFloat(type, static_cast<uint32_t>(b_bits[i]));
        float exact = fn(x, y);
        if (std::isnan(exact)) {
          // Which NaN comes out is not specified; f4e2m1fn, which has none, gets a zero
          // whose sign follows the NaN's.
          bool nan_like = std::isnan(out.GetDouble(i)) ||
                          out.GetBits(i) == EncodeNarrowFloat(type, exact) ||
                          out.GetBits(i) == EncodeNarrowFloat(type, -exact);
          ASSERT_TRUE(nan_like) << name << " " << op << "(" << x << ", " << y << ")";
          continue;
        }
        ASSERT_EQ(out.GetBits(i), EncodeNarrowFloat(type, exact))
            << name << " " << op << "(" << x << ", " << y << ")";
      }
    }
  }
}

TEST(EvaluatorElementwiseTest, Bf16MultiplyOfTenMillionIsFast) {
  constexpr int64_t kCount = 10'000'000;
  Shape shape = Shape::Array(PrimitiveType::kBF16, {kCount});
  Literal a(shape), b(shape);
  uint16_t* x = a.data<uint16_t>();
  uint16_t* y = b.data<uint16_t>();
  for (int64_t i = 0; i < kCount; ++i) {
    x[i] = FloatToBf16Bits(static_cast<float>(i % 1000) * 0.01f);
    y[i] = FloatToBf16Bits(1.0f + static_cast<float>(i % 7));
  }
  Literal args[] = {a, b};
  auto start = std::chrono::steady_clock::now();
  Literal out = EvaluateText(BinaryModule("multiply", "bf16", "bf16", kCount), args);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(out.element_count(), kCount);
  EXPECT_EQ(out.data<uint16_t>()[12345],
            FloatToBf16Bits(Bf16BitsToFloat(x[12345]) * Bf16BitsToFloat(y[12345])));
#ifdef NDEBUG
  EXPECT_LT(seconds, 0.5) << "10M bf16 multiplies took " << seconds << " s";
#else
  EXPECT_LT(seconds, 5.0) << "10M bf16 multiplies took " << seconds << " s (debug build)";
#endif
}

// Exhaustive tables for the small integer types against a reference written from the
// HLO semantics on mathematical integers.
int64_t WrapTo(int64_t value, int bits, bool is_signed) {
  int64_t modulus = int64_t{1} << bits;
  int64_t low = is_signed ? -(modulus / 2) : 0;
  int64_t wrapped = ((value - low) % modulus + modulus) % modulus + low;
  return wrapped;
}

int64_t ReferenceBinary(std::string_view op, int64_t a, int64_t b, int bits, bool is_signed) {
  int64_t min = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
  int64_t unsigned_b = WrapTo(b, bits, false);
  int64_t result = 0;
  if (op == "add") result = a + b;
  if (op == "subtract") result = a - b;
  if (op == "multiply") result = a * b;
  if (op == "divide") {
    result = b == 0 ? -1 : (a == min && b == -1 && is_signed) ? min : a / b;
  }
  if (op == "remainder") result = b == 0 ? a : (is_signed && b == -1) ? 0 : a % b;
  if (op == "shift-left") result = unsigned_b >= bits ? 0 : a * (int64_t{1} << unsigned_b);
  if (op == "shift-right-logical") {
    result = unsigned_b >= bits ? 0 : WrapTo(a, bits, false) / (int64_t{1} << unsigned_b);
  }
  if (op == "shift-right-arithmetic") {
    int64_t value = WrapTo(a, bits, true);
    int64_t shift = std::min<int64_t>(unsigned_b, bits - 1);
    // Floor division is an arithmetic shift.
    result = value >= 0 ? value >> shift : -((-value + (int64_t{1} << shift) - 1) >> shift);
  }
  if (op == "power") {
    if (b < 0) {
      result = a == 1 ? 1 : 0;  // XLA: base -1 gives 0 too
    } else {
      result = 1;
      for (int64_t k = 0; k < b; ++k) result = WrapTo(result * a, bits, is_signed);
    }
  }
  if (op == "maximum") result = std::max(a, b);
  if (op == "minimum") result = std::min(a, b);
  return WrapTo(result, bits, is_signed);
}

TEST(EvaluatorElementwiseTest, SmallIntegerBinaryOpsExhaustive) {
  const PrimitiveType types[] = {PrimitiveType::kS2, PrimitiveType::kS4, PrimitiveType::kS8,
                                 PrimitiveType::kU2, PrimitiveType::kU4, PrimitiveType::kU8};
  const char* ops[] = {"add",
                       "subtract",
                       "multiply",
                       "divide",
                       "remainder",
                       "shift-left",
                       "shift-right-logical",
                       "shift-right-arithmetic",
                       "power",
                       "maximum",
                       "minimum"};
  for (PrimitiveType type : types) {
    int bits = BitWidth(type);
    bool is_signed = IsSignedIntegral(type);
    int64_t low = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
    int64_t size = int64_t{1} << bits;
    Shape shape = Shape::Array(type, {size * size});
    Literal a(shape), b(shape);
    for (int64_t i = 0; i < size * size; ++i) {
      a.SetInt(i, low + i / size);
      b.SetInt(i, low + i % size);
    }
    Literal args[] = {a, b};
    std::string name(PrimitiveTypeName(type));
    for (const char* op : ops) {
      Literal out = EvaluateText(BinaryModule(op, name, name, size * size), args);
      ASSERT_EQ(out.element_count(), size * size);
      for (int64_t i = 0; i < size * size; ++i) {
        int64_t expected = ReferenceBinary(op, a.GetInt(i), b.GetInt(i), bits, is_signed);
        ASSERT_EQ(out.GetInt(i), expected)
            << name << " " << op << "(" << a.GetInt(i) << ", " << b.GetInt(i) << ")";
      }
    }
  }
}

TEST(EvaluatorElementwiseTest, ConvertS64ToNarrowRoundsOnce) {
  // Near ties of the narrow type at large magnitudes, where rounding through f32 or f64
  // first would land exactly on a tie and then go to even.
  std::mt19937_64 random(3);
  std::vector<int64_t> values = {
      (int64_t{1} << 60) + (int64_t{1} << 52) + 1, (int64_t{1} << 30) + (int64_t{1} << 22) + 1,
      -((int64_t{1} << 62) + (int64_t{1} << 54) + 1), INT64_MIN, INT64_MAX};
  for (int i = 0; i < 2000; ++i) values.push_back(static_cast<int64_t>(random()) >> (i % 40));
  Literal input(Shape::Array(PrimitiveType::kS64, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) input.SetInt(static_cast<int64_t>(i), values[i]);
  for (PrimitiveType type : kNarrowTypes) {
    std::string name(PrimitiveTypeName(type));
    Literal out =
        EvaluateText(UnaryModule("convert", "s64", name, input.element_count()), {&input, 1});
    ASSERT_EQ(out.element_count(), input.element_count());
    const FloatFormat& format = FormatOf(type);
    for (size_t i = 0; i < values.size(); ++i) {
      // Reference: the two neighbours of the exact integer in the format, picked by
      // comparing exact integer distances (the values involved are below 2^64).
      double value = DecodeNarrowFloat(type, static_cast<uint32_t>(out.GetBits(i)));
      if (std::isnan(value) || std::isinf(value) || std::fabs(value) >= format.max_finite()) {
        continue;  // overflow behaviour is covered by the data cases
      }
      long double exact = static_cast<long double>(values[i]);
      long double error = std::fabs(static_cast<long double>(value) - exact);
      // No representable value may be strictly closer: check one ulp either side.
      uint64_t bits = out.GetBits(i);
      for (int step : {-1, 1}) {
        uint32_t neighbour = static_cast<uint32_t>(bits + step);
        double other = DecodeNarrowFloat(type, neighbour & ((1u << BitWidth(type)) - 1));
        if (std::isnan(other) || std::isinf(other)) continue;
        EXPECT_LE(error, std::fabs(static_cast<long double>(other) - exact))
            << name << " " << values[i] << " -> " << value;
      }
    }
  }
}

TEST(EvaluatorElementwiseTest, UnsupportedOpsAreUnimplementedAndNameTheOp) {
  const std::pair<std::string, std::string> cases[] = {
      {"ENTRY e {\n  a = c64[2] parameter(0)\n  b = c64[2] parameter(1)\n"
       "  ROOT r = c64[2] remainder(a, b)\n}\n",
       "remainder"},
      {"ENTRY e {\n  a = c64[2] parameter(0)\n  ROOT r = c64[2] cbrt(a)\n}\n", "cbrt"},
      {"ENTRY e {\n  a = f32[2] parameter(0)\n  b = u32[2] parameter(1)\n"
       "  ROOT r = bf16[2] stochastic-convert(a, b)\n}\n",
       "stochastic-convert"},
  };
  for (const auto& [text, op] : cases) {
    auto module = ParseHloModule(text);
    ASSERT_TRUE(module.has_value()) << module.error().message;
    const HloComputation& entry = *(*module)->entry();
    auto arguments = MakeRandomArguments(entry, 1);
    ASSERT_TRUE(arguments.has_value());
    auto result = Evaluate(entry, *arguments);
    ASSERT_FALSE(result.has_value()) << op;
    EXPECT_EQ(result.error().code, ErrorCode::kUnimplemented) << result.error().message;
    EXPECT_NE(result.error().message.find(op), std::string::npos) << result.error().message;
  }
}

TEST(EvaluatorElementwiseTest, OperandLayoutsDoNotChangeLogicalResults) {
  // The operands are column-major, the result row-major; values are logical either way.
  const std::string text =
      "ENTRY e {\n  a = s32[2,3]{0,1} parameter(0)\n  b = s32[2,3]{1,0} parameter(1)\n"
      "  ROOT r = s32[2,3]{1,0} subtract(a, b)\n}\n";
  auto module = ParseHloModule(text);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const HloComputation& entry = *(*module)->entry();
  auto a = ParseLiteral("{{10, 20, 30}, {40, 50, 60}}", entry.parameter(0)->shape());
  auto b = ParseLiteral("{{1, 2, 3}, {4, 5, 6}}", entry.parameter(1)->shape());
  ASSERT_TRUE(a.has_value() && b.has_value());
  Literal args[] = {*a, *b};
  Literal out = EvaluateText(text, args);
  EXPECT_EQ(out.ToString(), "{{9, 18, 27}, {36, 45, 54}}");
  EXPECT_EQ(out.shape(), entry.root()->shape());
}

}  // namespace
}  // namespace tilesmith::hlo
