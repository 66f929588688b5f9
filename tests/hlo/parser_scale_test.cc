// The parser at scale and at its bounds: the instruction limit, modules built mostly of
// forward references, large generated modules that must round-trip through the printer,
// and the error a module with several problems reports.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"

namespace tilesmith::hlo {
namespace {

// A computation of `count` instructions: two parameters and a chain of adds.
std::string AddChain(int64_t count, std::string_view name = "chain", bool entry = true) {
  std::string text = std::string(entry ? "ENTRY " : "") + std::string(name) + " {\n";
  text += "  x = f32[8,128]{1,0} parameter(0)\n  y = f32[8,128]{1,0} parameter(1)\n";
  std::string previous = "x";
  for (int64_t i = 2; i < count; ++i) {
    std::string next = "add." + std::to_string(i);
    text += "  " + next + " = f32[8,128]{1,0} add(" + previous + ", y)\n";
    previous = next;
  }
  return text + "}\n";
}

TEST(ParserScaleTest, ExactlyAtTheInstructionLimitParses) {
  ParseLimits limits;
  limits.max_instructions = 50;
  auto module = ParseHloModule(AddChain(50), "limit.hlo", limits);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  EXPECT_EQ((*module)->entry()->instruction_count(), 50);
}

TEST(ParserScaleTest, OneOverTheInstructionLimitIsResourceExhausted) {
  ParseLimits limits;
  limits.max_instructions = 49;
  auto module = ParseHloModule(AddChain(50), "limit.hlo", limits);
  ASSERT_FALSE(module.has_value());
  EXPECT_EQ(module.error().code, ErrorCode::kResourceExhausted);
  // The 50th instruction is on line 51.
  EXPECT_EQ(module.error().message,
            "limit.hlo:51:3: error: fusion has more than 49 instructions (the limit; "
            "--max-instructions raises it)");
}

TEST(ParserScaleTest, TheLimitCountsEveryComputationAndStopsBeforeTheRest) {
  // 3 + 3 instructions, then text that is not HLO at all: the parse stops at the limit
  // without reading it.
  std::string text = AddChain(3, "first", false) + AddChain(3, "second") + "}}} not hlo";
  ParseLimits limits;
  limits.max_instructions = 5;
  auto module = ParseHloModule(text, "two.hlo", limits);
  ASSERT_FALSE(module.has_value());
  EXPECT_EQ(module.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(module.error().message.find("more than 5 instructions"), std::string::npos)
      << module.error().message;
  // Without a limit the same text fails on its syntax.
  auto unlimited = ParseHloModule(text, "two.hlo");
  ASSERT_FALSE(unlimited.has_value());
  EXPECT_EQ(unlimited.error().code, ErrorCode::kInvalidArgument);
}

TEST(ParserScaleTest, FilesAreReadWholeAndTheLimitApplies) {
  std::string path = ::testing::TempDir() + "/parser_scale_chain.hlo";
  std::string text = AddChain(1000);
  {
    std::ofstream file(path, std::ios::binary);
    file << text;
  }
  auto module = ParseHloModuleFile(path);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  EXPECT_EQ(PrintModule(**module), PrintModule(**ParseHloModule(text)));
  ParseLimits limits;
  limits.max_instructions = 999;
  auto limited = ParseHloModuleFile(path, limits);
  ASSERT_FALSE(limited.has_value());
  EXPECT_EQ(limited.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(limited.error().message.rfind(path + ":1001:3: error: fusion has more than 999", 0), 0u)
      << limited.error().message;
  auto missing = ParseHloModuleFile(path + ".missing");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
  std::remove(path.c_str());
}

TEST(ParserScaleTest, NoLimitByDefault) {
  auto module = ParseHloModule(AddChain(200'000), "big.hlo");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  EXPECT_EQ((*module)->entry()->instruction_count(), 200'000);
}

// Every instruction names the one defined after it: all operands are forward references.
TEST(ParserScaleTest, ForwardReferenceHeavyModule) {
  constexpr int kCount = 20'000;
  std::string text = "ENTRY backwards {\n";
  for (int i = 0; i < kCount; ++i) {
    text += std::string(i == 0 ? "  ROOT " : "  ") + "n." + std::to_string(i) +
            " = f32[4]{0} negate(n." + std::to_string(i + 1) + ")\n";
  }
  text += "  n." + std::to_string(kCount) + " = f32[4]{0} parameter(0)\n}\n";
  auto module = ParseHloModule(text, "backwards.hlo");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const HloComputation& computation = *(*module)->entry();
  ASSERT_EQ(computation.instruction_count(), kCount + 1);
  const HloInstruction* node = computation.root();
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(node->name(), "n." + std::to_string(i));
    ASSERT_EQ(node->operand_count(), 1);
    node = node->operand(0);
  }
  EXPECT_EQ(node->opcode(), HloOpcode::kParameter);
  // Shapes left out are inferred through the forward references.
  std::string inferred =
      "ENTRY e {\n  ROOT a = negate(b)\n  b = exponential(c)\n"
      "  c = f32[2,3]{0,1} parameter(0)\n}\n";
  auto small = ParseHloModule(inferred, "inferred.hlo");
  ASSERT_TRUE(small.has_value()) << small.error().message;
  EXPECT_EQ(ShapeToStringNoLayout((*small)->entry()->root()->shape()), "f32[2,3]");
}

// Users are recorded in text order whether operands come before or after their users.
TEST(ParserScaleTest, UsersAreInTextOrderWithForwardReferences) {
  auto module = ParseHloModule(R"(
    ENTRY e {
      p = f32[2] parameter(0)
      a = f32[2] negate(p)
      b = f32[2] add(a, later)
      c = f32[2] add(a, p)
      later = f32[2] exponential(p)
      ROOT d = f32[2] add(b, c)
    })",
                               "users.hlo");
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const HloComputation& computation = *(*module)->entry();
  auto names = [](std::span<HloInstruction* const> list) {
    std::string out;
    for (const HloInstruction* i : list) out += i->name() + " ";
    return out;
  };
  EXPECT_EQ(names(computation.instructions()[0]->users()), "a c later ");
  EXPECT_EQ(names(computation.instructions()[1]->users()), "b c ");
}

// With several bad instructions the first in post-order from the root is reported, as the
// checks have always been ordered, whatever the text order.
TEST(ParserScaleTest, ShapeErrorsFollowPostOrder) {
  std::string text = R"(
    ENTRY e {
      p = f32[2] parameter(0)
      a = f32[3] negate(p)
      b = f32[4] exponential(p)
      ROOT t = (f32[4], f32[3]) tuple(b, a)
    })";
  auto module = ParseHloModule(text, "order.hlo");
  ASSERT_FALSE(module.has_value());
  EXPECT_EQ(module.error().message,
            "order.hlo:5:7: error: 'b' is declared as f32[4] but its operands give f32[2]");
}

// A syntax error after a shape error is reported: shapes are checked only once the whole
// text has been read.
TEST(ParserScaleTest, SyntaxErrorsComeBeforeShapeErrors) {
  auto module = ParseHloModule(
      "ENTRY e {\n  p = f32[2] parameter(0)\n  a = f32[3] negate(p)\n"
      "  b = f32[2] tanhh(p)\n}\n",
      "syntax.hlo");
  ASSERT_FALSE(module.has_value());
  EXPECT_EQ(module.error().message, "syntax.hlo:4:14: error: unknown opcode 'tanhh'");
}

// The benchmark's kind of module, smaller: parse, print, parse again, print again.
std::string MixedModule(int computations, int per_computation) {
  std::string text =
      "HloModule mixed, is_scheduled=true\n\nadd {\n  a = f32[] parameter(0)\n"
      "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n";
  const char* unary[] = {"exponential", "tanh", "negate", "log", "sqrt", "abs"};
  const char* binary[] = {"add", "multiply", "subtract", "maximum", "divide"};
  for (int c = 0; c < computations; ++c) {
    text += (c + 1 == computations ? "ENTRY fused." : "fused.") + std::to_string(c) + " {\n";
    text += "  p0 = f32[16,256]{1,0:T(8,128)} parameter(0)\n  p1 = f32[256]{0} parameter(1)\n";
    text += "  zero = f32[] constant(0)\n";
    std::string previous = "p0";
    for (int i = 0; i + 4 < per_computation; i += 4) {
      std::string n = std::to_string(i);
      std::string shape = "f32[16,256]{1,0:T(8,128)}";
      text += "  b." + n + " = " + shape + " broadcast(p1), dimensions={1}\n";
      text += "  u." + n + " = " + shape + " " + unary[i % 6] + "(" + previous +
              "), metadata={op_name=\"layer_" + n + "\"}\n";
      text += "  e." + n + " = " + shape + " " + binary[i % 5] + "(u." + n + ", b." + n + ")\n";
      previous = "e." + n;
      text += "  r." + n + " = f32[16]{0} reduce(" + previous + ", zero), dimensions={1}, " +
              "to_apply=add\n";
    }
    text += "  ROOT t = (f32[16,256]{1,0:T(8,128)}) tuple(" + previous + ")\n}\n\n";
  }
  return text;
}

TEST(ParserScaleTest, LargeGeneratedModuleRoundTrips) {
  std::string text = MixedModule(20, 1000);
  auto first = ParseHloModule(text, "mixed.hlo");
  ASSERT_TRUE(first.has_value()) << first.error().message;
  std::string printed = PrintModule(**first);
  auto second = ParseHloModule(printed, "printed.hlo");
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_EQ(PrintModule(**second), printed);
  ASSERT_EQ((*second)->computations().size(), (*first)->computations().size());
  for (size_t i = 0; i < (*first)->computations().size(); ++i) {
    EXPECT_EQ((*second)->computations()[i]->instruction_count(),
              (*first)->computations()[i]->instruction_count());
  }
}

TEST(ParserScaleTest, DefaultLayoutsAreSharedButBehaveAsStored) {
  auto written = ParseShape("f32[8,128]{1,0}");
  auto left_out = ParseShape("f32[8,128]");
  auto transposed = ParseShape("f32[8,128]{0,1}");
  ASSERT_TRUE(written && left_out && transposed);
  EXPECT_EQ(written->layout(), Layout::Default(2));
  EXPECT_EQ(*written, *left_out);
  EXPECT_FALSE(*written == *transposed);
  EXPECT_EQ(transposed->layout().minor_to_major, (std::vector<int64_t>{0, 1}));
  Shape changed = *written;
  changed.mutable_layout().minor_to_major = {0, 1};
  EXPECT_EQ(changed, *transposed);
  EXPECT_EQ(written->layout(), Layout::Default(2));  // the copy did not share the change
  changed.set_layout(Layout::Default(2));
  EXPECT_EQ(changed, *written);
  EXPECT_EQ(ShapeToString(*ParseShape("f32[<=4,?,3]{2,1,0}")), "f32[<=4,?,3]{2,1,0}");
}

}  // namespace
}  // namespace tilesmith::hlo
