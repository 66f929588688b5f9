// What the elemental emitter's LLVM IR looks like where that matters beyond its results
// (narrow floats stay narrow in memory and round once per op), and the portable complex
// formulas that targets without a C library use, checked on the host against the evaluator.
#include <gtest/gtest.h>

#include <regex>

#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/parser.h"
#include "tests/codegen/host_check.h"

namespace tilesmith::codegen {
namespace {

namespace fs = std::filesystem;

Expected<std::string> OptimizedHostIr(const std::string& text) {
  TS_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module, hlo::ParseHloModule(text, "ir"));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  TS_ASSIGN_OR_RETURN(emitters::KernelIR kernel, emitters::EmitKernel(analysis, nullptr, device));
  return HostLlvmIr(kernel);
}

int64_t Count(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator());
}

// bf16 values live in memory as i16 and are computed in f32; each op's result is rounded
// to bf16 (round to nearest even adds 0x7FFF plus the lowest kept bit) exactly once.
TEST(ElementalIrTest, Bf16ChainLoadsAndStoresI16AndRoundsOncePerOp) {
  auto ir = OptimizedHostIr(R"(
ENTRY e {
  p0 = bf16[1024] parameter(0)
  p1 = bf16[1024] parameter(1)
  a = bf16[1024] add(p0, p1)
  m = bf16[1024] multiply(a, p1)
  ROOT t = bf16[1024] tanh(m)
})");
  ASSERT_TRUE(ir.has_value()) << ir.error().message;
  EXPECT_GE(Count(*ir, R"(load (<\d+ x )?i16>?)"), 2) << *ir;
  EXPECT_GE(Count(*ir, R"(store (<\d+ x )?i16>?)"), 1) << *ir;
  EXPECT_EQ(Count(*ir, R"(load (<\d+ x )?(float|bfloat|half)>?)"), 0) << *ir;
  EXPECT_EQ(Count(*ir, R"(fptrunc|fpext)"), 0) << *ir;
  // One rounding per op: add, multiply, tanh.
  // (The loop may be unrolled: three per copy of the body.)
  int roundings = Count(*ir, R"(add (<\d+ x )?i32>? %\w+, (<(i32 32767(, )?)+>|32767))");
  EXPECT_GE(roundings, 3) << *ir;
  EXPECT_EQ(roundings % 3, 0) << *ir;
  // tanh is computed inline, in vector lanes, not by a scalar libm call.
  EXPECT_EQ(Count(*ir, R"(@tanhf)"), 0) << *ir;
  EXPECT_GE(Count(*ir, R"(fmuladd\.v\d+f32)"), 1) << *ir;
}

// On the host, complex division and functions are the C runtime's, as std::complex (and
// so the evaluator) calls them, passing c64 as <2 x float> (x86-64 System V).
TEST(ElementalIrTest, ComplexCallsTheCLibraryOnTheHost) {
  auto ir = OptimizedHostIr(R"(
ENTRY e {
  p0 = c64[8] parameter(0)
  p1 = c64[8] parameter(1)
  d = c64[8] divide(p0, p1)
  ROOT t = c64[8] tanh(d)
})");
  ASSERT_TRUE(ir.has_value()) << ir.error().message;
  EXPECT_GE(Count(*ir, R"(call <2 x float> @__divsc3\(float)"), 1) << *ir;
  EXPECT_GE(Count(*ir, R"(call <2 x float> @ctanhf\(<2 x float>)"), 1) << *ir;
}

// Targets without a C library compute complex functions from real ones: on ordinary
// (finite) values they agree with the evaluator within the usual tolerance.
class ComplexFormulaTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ComplexFormulaTest, MatchesEvaluatorWithoutComplexLibrary) {
  DataCase c = LoadDataCase(fs::path(TILESMITH_TEST_DATA_DIR) / "eval" / GetParam());
  auto module = hlo::ParseHloModule(c.text, c.path);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  auto args = DataCaseArguments(c, fusion);
  ASSERT_TRUE(args.has_value()) << args.error().message;
  auto expected = hlo::Evaluate(fusion, *args);
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  auto comparisons = CheckOnHost(fusion, *args, *expected, HostOptions{.complex_library = false});
  ASSERT_TRUE(comparisons.has_value()) << comparisons.error().message;
  for (size_t i = 0; i < comparisons->size(); ++i) {
    EXPECT_TRUE((*comparisons)[i].matches)
        << c.path << " output " << i << ": " << (*comparisons)[i].first_mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(Data, ComplexFormulaTest,
                         ::testing::Values("elementwise_complex_math_c64.hlo",
                                           "elementwise_complex_math_c128.hlo",
                                           "elementwise_complex_exact_c64.hlo",
                                           "elementwise_complex_exact_c128.hlo", "dot_c64.hlo",
                                           "reduce_c64_multiply_all.hlo"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).stem();
                           return name;
                         });

// The functions the data files leave out, on finite values away from branch cuts.
TEST(ComplexFormulaTest, InverseAndHyperbolicFunctionsWithoutComplexLibrary) {
  const char* ops[] = {"tan",         "asin",  "acos",
                       "asinh",       "acosh", "atanh",
                       "sinh",        "cosh",  "exponential-minus-one",
                       "log-plus-one"};
  for (const char* type : {"c64", "c128"}) {
    std::string text = std::string("ENTRY e {\n  p0 = ") + type + "[6] parameter(0)\n";
    std::string tuple;
    int k = 0;
    for (const char* op : ops) {
      text += "  r" + std::to_string(k) + " = " + type + "[6] " + op + "(p0)\n";
      tuple += (k > 0 ? ", r" : "r") + std::to_string(k);
      ++k;
    }
    std::string shapes;
    for (int i = 0; i < k; ++i) shapes += (i > 0 ? ", " : "") + std::string(type) + "[6]";
    text += "  ROOT out = (" + shapes + ") tuple(" + tuple + ")\n}\n";
    auto module = hlo::ParseHloModule(text, "formulas");
    ASSERT_TRUE(module.has_value()) << module.error().message;
    const hlo::HloComputation& fusion = *(*module)->fusion();
    auto arg = hlo::ParseLiteral(
        "{(0.5, 0.25), (-0.3, 0.7), (1.5, -0.5), (0.1, -0.2), "
        "(-2, 1), (0.75, 0.125)}",
        fusion.parameter(0)->shape());
    ASSERT_TRUE(arg.has_value()) << arg.error().message;
    std::vector<hlo::Literal> args;
    args.push_back(std::move(*arg));
    auto expected = hlo::Evaluate(fusion, args);
    ASSERT_TRUE(expected.has_value()) << expected.error().message;
    auto comparisons = CheckOnHost(fusion, args, *expected, HostOptions{.complex_library = false});
    ASSERT_TRUE(comparisons.has_value()) << comparisons.error().message;
    for (size_t i = 0; i < comparisons->size(); ++i) {
      EXPECT_TRUE((*comparisons)[i].matches)
          << type << " " << ops[i] << ": " << (*comparisons)[i].first_mismatch;
    }
  }
}

}  // namespace
}  // namespace tilesmith::codegen
