// Structural evaluator checks better done in code than as data cases: errors (elided
// constants, unimplemented ops, the memory limit), speed on tensors of millions of
// elements, and agreement of the typed reducer loops with evaluating the reducer per element.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::hlo {
namespace {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

Expected<Literal> EvaluateText(const std::string& text, std::span<const Literal> arguments,
                               const EvaluatorOptions& options = {}) {
  std::unique_ptr<HloModule> module = Parse(text);
  if (module == nullptr) return InvalidArgument("does not parse");
  return Evaluate(*module->entry(), arguments, options);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Timings only mean something with optimizations on.
#ifdef NDEBUG
constexpr double kSlack = 1;
#else
constexpr double kSlack = 20;
#endif

TEST(EvaluatorStructuralTest, ElidedConstantIsAnErrorNamingIt) {
  auto result = EvaluateText("ENTRY e {\n  ROOT big = f32[4,4] constant({...})\n}\n", {});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find(
                "constant 'big' has elided contents ({...}) and cannot be evaluated"),
            std::string::npos)
      << result.error().message;
}

TEST(EvaluatorStructuralTest, UnimplementedOpsAreNamed) {
  const char* text = R"(
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ENTRY e {
  p = f32[4] parameter(0)
  ROOT s = f32[4] sort(p), dimensions={0}, to_apply=less
})";
  Literal argument(Shape::Array(PrimitiveType::kF32, {4}));
  auto result = EvaluateText(text, {&argument, 1});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kUnimplemented);
  EXPECT_NE(result.error().message.find("the evaluator does not implement 'sort'"),
            std::string::npos)
      << result.error().message;

  auto custom = EvaluateText(
      "ENTRY e {\n  ROOT c = f32[2] custom-call(), custom_call_target=\"foo\"\n}\n", {});
  ASSERT_FALSE(custom.has_value());
  EXPECT_EQ(custom.error().code, ErrorCode::kUnimplemented);
  EXPECT_NE(custom.error().message.find("'custom-call'"), std::string::npos)
      << custom.error().message;
}

TEST(EvaluatorStructuralTest, MemoryLimitIsResourceExhaustedNamingTheSize) {
  const char* text = R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT big = f32[1024,1024] broadcast(p), dimensions={}
})";
  Literal argument(Shape::Scalar(PrimitiveType::kF32));
  EvaluatorOptions options;
  options.max_value_bytes = 1 << 20;
  auto result = EvaluateText(text, {&argument, 1}, options);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(result.error().message.find("4.0 MiB"), std::string::npos) << result.error().message;
  EXPECT_NE(result.error().message.find("'big'"), std::string::npos) << result.error().message;
}

TEST(EvaluatorStructuralTest, ResultsCarryTheDeclaredLayout) {
  const char* text = R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT t = f32[3,2]{0,1} transpose(p), dimensions={1,0}
})";
  Literal argument(Shape::Array(PrimitiveType::kF32, {2, 3}));
  for (int64_t i = 0; i < 6; ++i) argument.SetDouble(i, static_cast<double>(i));
  auto result = EvaluateText(text, {&argument, 1});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(ShapeToString(result->shape()), "f32[3,2]{0,1}");
  EXPECT_EQ(result->ToString(), "{{0, 3}, {1, 4}, {2, 5}}");
}

// The parameter's declared layout says how memory holds the value, whatever layout the
// argument literal was built with.
TEST(EvaluatorStructuralTest, BitcastUsesTheDeclaredOperandLayout) {
  const char* text = R"(
ENTRY e {
  p = s32[2,3]{0,1} parameter(0)
  ROOT b = s32[6]{0} bitcast(p)
})";
  Literal argument(Shape::Array(PrimitiveType::kS32, {2, 3}));  // default layout
  for (int64_t i = 0; i < 6; ++i) argument.SetInt(i, i);
  auto result = EvaluateText(text, {&argument, 1});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->ToString(), "{0, 3, 1, 4, 2, 5}");
}

TEST(EvaluatorStructuralTest, BroadcastAndTransposeOfTwelveMillionBf16AreFast) {
  const char* text = R"(
ENTRY e {
  p = bf16[4096] parameter(0)
  b = bf16[3000,4096] broadcast(p), dimensions={1}
  ROOT t = bf16[4096,3000] transpose(b), dimensions={1,0}
})";
  Literal argument(Shape::Array(PrimitiveType::kBF16, {4096}));
  for (int64_t i = 0; i < 4096; ++i) argument.SetDouble(i, static_cast<double>(i % 200));
  auto start = std::chrono::steady_clock::now();
  auto result = EvaluateText(text, {&argument, 1});
  double seconds = SecondsSince(start);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_LT(seconds, 1.0 * kSlack);
  EXPECT_EQ(result->GetDouble(0), 0.0);
  EXPECT_EQ(result->GetDouble(4095 * 3000 + 17), 4095 % 200);
  EXPECT_EQ(result->GetDouble(150 * 3000 + 2999), 150.0);
}

TEST(EvaluatorStructuralTest, TenMillionElementReduceAddIsFast) {
  const char* text = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[2500,4000] parameter(0)
  z = f32[] constant(0)
  rows = f32[2500] reduce(p, z), dimensions={1}, to_apply=add
  cols = f32[4000] reduce(p, z), dimensions={0}, to_apply=add
  all = f32[] reduce(p, z), dimensions={0,1}, to_apply=add
  ROOT t = (f32[2500], f32[4000], f32[]) tuple(rows, cols, all)
})";
  Literal argument(Shape::Array(PrimitiveType::kF32, {2500, 4000}));
  float* data = argument.data<float>();
  for (int64_t i = 0; i < argument.element_count(); ++i) data[i] = 1.0f;
  auto start = std::chrono::steady_clock::now();
  auto result = EvaluateText(text, {&argument, 1});
  double seconds = SecondsSince(start);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_LT(seconds, 1.0 * kSlack);
  std::span<const Literal> parts = result->tuple_elements();
  EXPECT_EQ(parts[0].GetDouble(2499), 4000.0);
  EXPECT_EQ(parts[1].GetDouble(3999), 2500.0);
  EXPECT_EQ(parts[2].GetDouble(0), 1e7);  // exact: every partial sum is below 2^24
}

TEST(EvaluatorStructuralTest, ReduceWindowWithAMillionOutputsIsFast) {
  const char* text = R"(
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

ENTRY e {
  p = f32[1000,1000] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[1000,1000] reduce-window(p, z), window={size=3x3 pad=1_1x1_1}, to_apply=max
})";
  Literal argument(Shape::Array(PrimitiveType::kF32, {1000, 1000}));
  float* data = argument.data<float>();
  for (int64_t i = 0; i < argument.element_count(); ++i) data[i] = static_cast<float>(i % 1000);
  auto start = std::chrono::steady_clock::now();
  auto result = EvaluateText(text, {&argument, 1});
  double seconds = SecondsSince(start);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_LT(seconds, 1.0 * kSlack);
  EXPECT_EQ(result->GetDouble(0), 1.0);
  EXPECT_EQ(result->GetDouble(999), 999.0);
  EXPECT_EQ(result->GetDouble(500 * 1000 + 500), 501.0);
}

TEST(EvaluatorStructuralTest, DotAndGatherOfMillionsAreFast) {
  const char* text = R"(
ENTRY e {
  a = bf16[512,512] parameter(0)
  b = bf16[512,512] parameter(1)
  d = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = s32[4096,1] iota(), iota_dimension=0
  g = f32[4096,512] gather(d, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,512}
  ROOT t = (f32[512,512], f32[4096,512]) tuple(d, g)
})";
  std::vector<Literal> arguments;
  for (int k = 0; k < 2; ++k) {
    arguments.emplace_back(Shape::Array(PrimitiveType::kBF16, {512, 512}));
    for (int64_t i = 0; i < 512 * 512; ++i) arguments[k].SetDouble(i, 1.0);
  }
  auto start = std::chrono::steady_clock::now();
  auto result = EvaluateText(text, arguments);
  double seconds = SecondsSince(start);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_LT(seconds, 1.0 * kSlack);
  std::span<const Literal> parts = result->tuple_elements();
  EXPECT_EQ(parts[0].GetDouble(512 * 512 - 1), 512.0);
  EXPECT_EQ(parts[1].GetDouble(4096 * 512 - 1), 512.0);  // row 4095 clamps to row 511
}

// The typed reducer loops must give exactly what evaluating the reducer computation per
// element gives; a `copy` at the root forces the per-element path.
struct ReducerCase {
  const char* type;
  const char* op;
};

class ReducerPathsTest : public ::testing::TestWithParam<ReducerCase> {};

std::string ReduceModule(const ReducerCase& c, bool per_element) {
  std::string t = c.type;
  std::string root = per_element
                         ? "  r = " + t + "[] " + c.op + "(a, b)\n  ROOT c = " + t + "[] copy(r)\n"
                         : "  ROOT r = " + t + "[] " + c.op + "(b, a)\n";
  return "reducer {\n  a = " + t + "[] parameter(0)\n  b = " + t + "[] parameter(1)\n" + root +
         "}\n\nENTRY e {\n  p = " + t + "[6,40,7] parameter(0)\n  init = " + t +
         "[] parameter(1)\n  r0 = " + t +
         "[6,7] reduce(p, init), dimensions={1}, to_apply=reducer\n  r1 = " + t +
         "[40] reduce(p, init), dimensions={0,2}, to_apply=reducer\n  w = " + t +
         "[3,19,13] reduce-window(p, init), window={size=3x4x2 stride=2x2x1 pad=1_0x1_2x0_1 "
         "lhs_dilate=1x1x2 rhs_dilate=1x2x1}, to_apply=reducer\n  i = s32[4,1] constant({{1}, "
         "{39}, {1}, {-1}})\n  u = " +
         t + "[6,4,7] slice(p), slice={[0:6], [0:4], [0:7]}\n  s = " + t +
         "[6,40,7] scatter(p, i, u), update_window_dims={0,2}, inserted_window_dims={1}, "
         "scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=reducer\n  ROOT t = (" +
         t + "[6,7], " + t + "[40], " + t + "[3,19,13], " + t +
         "[6,40,7]) tuple(r0, r1, w, s)\n}\n";
}

TEST_P(ReducerPathsTest, TypedLoopMatchesPerElementEvaluation) {
  const ReducerCase& c = GetParam();
  std::unique_ptr<HloModule> fast = Parse(ReduceModule(c, false));
  std::unique_ptr<HloModule> slow = Parse(ReduceModule(c, true));
  ASSERT_TRUE(fast != nullptr && slow != nullptr);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto arguments = MakeRandomArguments(*fast->entry(), seed);
    ASSERT_TRUE(arguments.has_value()) << arguments.error().message;
    auto expected = Evaluate(*slow->entry(), *arguments);
    ASSERT_TRUE(expected.has_value()) << expected.error().message;
    auto actual = Evaluate(*fast->entry(), *arguments);
    ASSERT_TRUE(actual.has_value()) << actual.error().message;
    EXPECT_TRUE(*actual == *expected)
        << c.type << " " << c.op << " seed " << seed << "\n  typed:       " << actual->ToString()
        << "\n  per element: " << expected->ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Types, ReducerPathsTest,
    ::testing::Values(
        ReducerCase{"f32", "add"}, ReducerCase{"f32", "maximum"}, ReducerCase{"f64", "multiply"},
        ReducerCase{"bf16", "add"}, ReducerCase{"bf16", "minimum"}, ReducerCase{"f16", "multiply"},
        ReducerCase{"f8e5m2", "add"}, ReducerCase{"f8e4m3fn", "maximum"},
        ReducerCase{"f4e2m1fn", "add"}, ReducerCase{"s8", "add"}, ReducerCase{"s4", "multiply"},
        ReducerCase{"u4", "add"}, ReducerCase{"u16", "multiply"}, ReducerCase{"s32", "minimum"},
        ReducerCase{"u64", "add"}, ReducerCase{"s64", "xor"}, ReducerCase{"pred", "or"},
        ReducerCase{"pred", "and"}, ReducerCase{"c64", "multiply"}, ReducerCase{"c128", "add"}),
    [](const ::testing::TestParamInfo<ReducerCase>& info) {
      return std::string(info.param.type) + "_" + info.param.op;
    });

}  // namespace
}  // namespace tilesmith::hlo
