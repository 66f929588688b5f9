// Size expressions: parsing (precedence, errors with positions), evaluation (exact division
// inside Ceiling/Floor, truncating elsewhere, unbound variables, division by zero), printing.
#include "compiler/ascgraph/size_expr.h"

#include <gtest/gtest.h>

namespace tilesmith::ascgraph {
namespace {

int64_t Eval(std::string_view text, const SizeBindings& sizes = {}) {
  auto expr = SizeExpr::Parse(text);
  EXPECT_TRUE(expr.has_value()) << text << ": " << expr.error().message;
  if (!expr) return INT64_MIN;
  auto value = expr->Evaluate(sizes);
  EXPECT_TRUE(value.has_value()) << text << ": " << value.error().message;
  return value.value_or(INT64_MIN);
}

std::string ParseError(std::string_view text) {
  auto expr = SizeExpr::Parse(text);
  EXPECT_FALSE(expr.has_value()) << text << " parsed as " << expr->ToString();
  return expr ? "" : expr.error().message;
}

std::string EvalError(std::string_view text, const SizeBindings& sizes = {}) {
  auto expr = SizeExpr::Parse(text);
  if (!expr) return "parse error: " + expr.error().message;
  auto value = expr->Evaluate(sizes);
  EXPECT_FALSE(value.has_value()) << text << " = " << *value;
  return value ? "" : value.error().message;
}

TEST(SizeExprTest, IntegersVariablesAndPrecedence) {
  SizeBindings sizes = {{"s0", 2048}, {"s1", 64}, {"s2", 3}};
  EXPECT_EQ(Eval("1024"), 1024);
  EXPECT_EQ(Eval("s0", sizes), 2048);
  EXPECT_EQ(Eval("s0 * s1", sizes), 2048 * 64);
  EXPECT_EQ(Eval("1 + 2 * 3"), 7);
  EXPECT_EQ(Eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(Eval("10 - 4 - 3"), 3);  // left associative
  EXPECT_EQ(Eval("64 / 4 / 2"), 8);
  EXPECT_EQ(Eval("-s2 + 10", sizes), 7);
  EXPECT_EQ(Eval("-(s2 + 1) * 2", sizes), -8);
  EXPECT_EQ(Eval("2 * -3"), -6);
  EXPECT_EQ(Eval("  s1*s2+1 ", sizes), 193);
}

TEST(SizeExprTest, Functions) {
  SizeBindings sizes = {{"s0", 1000}, {"s1", 7}};
  EXPECT_EQ(Eval("Max(s0, 4096)", sizes), 4096);
  EXPECT_EQ(Eval("Min(s0, 4096)", sizes), 1000);
  EXPECT_EQ(Eval("Mod(s0, 7)", sizes), 1000 % 7);
  EXPECT_EQ(Eval("Mod(-7, 3)"), 2);  // the sign of the divisor, as sympy
  EXPECT_EQ(Eval("Mod(7, -3)"), -2);
  EXPECT_EQ(Eval("Floor(-7 / 2)"), -4);
  EXPECT_EQ(Eval("Ceiling(s0 / 16) * 16", sizes), 1008);
  EXPECT_EQ(Eval("Max(1, Min(s1, 3) * 2)", sizes), 6);
}

TEST(SizeExprTest, DivisionIsExactInsideCeilingAndFloorAndTruncatesElsewhere) {
  SizeBindings sizes = {{"s0", 10}, {"s1", 3}};
  EXPECT_EQ(Eval("s0 / s1", sizes), 3);
  EXPECT_EQ(Eval("s0 / s1 * s1", sizes), 9);
  EXPECT_EQ(Eval("-7 / 2"), -3);  // truncation toward zero
  // Ceiling(10/3 * 3) is exactly 10, not Ceiling(3 * 3) = 9.
  EXPECT_EQ(Eval("Ceiling(s0 / s1 * s1)", sizes), 10);
  EXPECT_EQ(Eval("Ceiling(s0 / s1)", sizes), 4);
  EXPECT_EQ(Eval("Floor(s0 / s1)", sizes), 3);
  EXPECT_EQ(Eval("Ceiling(1 / 3 + 2 / 3)"), 1);
  EXPECT_EQ(Eval("Ceiling(Ceiling(7 / 2) / 2)"), 2);
  EXPECT_EQ(Eval("Ceiling(Max(7 / 2, 5 / 3))"), 4);
  EXPECT_EQ(Eval("Ceiling(Mod(7 / 2, 2))"), 2);  // Mod(3.5, 2) = 1.5
}

TEST(SizeExprTest, ParseErrorsSayWhere) {
  EXPECT_EQ(ParseError("s0 + * 2"),
            "size expression 's0 + * 2': col 6: expected an operand, found '*'");
  EXPECT_EQ(ParseError("(s0 + 1"), "size expression '(s0 + 1': col 8: expected ')'");
  EXPECT_EQ(ParseError(""), "size expression '': col 1: expected an operand, found the end");
  EXPECT_EQ(ParseError("s0 s1"), "size expression 's0 s1': col 4: unexpected 's'");
  EXPECT_NE(ParseError("Sqrt(s0)").find("col 1: unknown function 'Sqrt'"), std::string::npos);
  EXPECT_NE(ParseError("Max(s0)").find("col 1: 'Max' takes 2 arguments, got 1"), std::string::npos);
  EXPECT_NE(ParseError("Ceiling(1, 2)").find("'Ceiling' takes 1 argument, got 2"),
            std::string::npos);
  EXPECT_NE(ParseError("Max(1, 2").find("col 9: expected ',' or ')'"), std::string::npos);
  EXPECT_NE(ParseError("99999999999999999999").find("col 1: integer does not fit in 64 bits"),
            std::string::npos);
  EXPECT_NE(ParseError("s0 % 2").find("col 4: unexpected '%'"), std::string::npos);
}

TEST(SizeExprTest, EvaluationErrorsNameTheCause) {
  EXPECT_EQ(EvalError("s0 * s1", {{"s0", 4}}), "size variable 's1' is not bound (in 's0 * s1')");
  EXPECT_EQ(EvalError("s0 / (s1 - 4)", {{"s0", 4}, {"s1", 4}}),
            "division by zero in size expression 's0 / (s1 - 4)'");
  EXPECT_NE(EvalError("Ceiling(1 / 0)").find("division by zero"), std::string::npos);
  EXPECT_NE(EvalError("Mod(5, 0)").find("Mod by zero"), std::string::npos);
  EXPECT_NE(EvalError("9223372036854775807 + 1").find("overflows int64"), std::string::npos);
  EXPECT_NE(EvalError("4294967296 * 4294967296").find("overflows int64"), std::string::npos);
}

TEST(SizeExprTest, VariablesConstantsAndPrinting) {
  auto expr = SizeExpr::Parse("Ceiling((s1 / 16)) * s0 + s1");
  ASSERT_TRUE(expr.has_value());
  EXPECT_EQ(expr->Variables(), (std::vector<std::string>{"s0", "s1"}));
  EXPECT_FALSE(expr->IsConstant());
  EXPECT_EQ(expr->ToString(), "Ceiling(s1 / 16) * s0 + s1");
  EXPECT_TRUE(SizeExpr::Parse("2 * (3 + 4)")->IsConstant());
  EXPECT_EQ(SizeExpr().ToString(), "0");
  EXPECT_EQ(SizeExpr::Constant(-5).ToString(), "-5");
  EXPECT_EQ(*SizeExpr::Constant(-5).Evaluate({}), -5);
  // Printing keeps the parentheses that change the value and drops the others, and the
  // printed text parses back to the same text.
  for (std::string_view text : {"a - (b - c)", "a / (b * c)", "(a + b) * c", "a * (b / c)",
                                "-(a + b)", "Max(a, b) - Mod(c, 2)", "a - b + c", "a * b / c"}) {
    auto parsed = SizeExpr::Parse(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(parsed->ToString(), text);
  }
  EXPECT_EQ(SizeExpr::Parse("((a)) + (b * c)")->ToString(), "a + b * c");
}

}  // namespace
}  // namespace tilesmith::ascgraph
