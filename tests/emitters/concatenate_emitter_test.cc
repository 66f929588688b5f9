// The concatenate emitter: config validation and each operand's loop writing at its offset.
// XLA's default (the loop rule over the largest operand, the vector limited by the gcd of the
// concatenated sizes), launches, shared calls and host runs of unaligned sizes, epilogues and
// side outputs are data: tests/data/emitters/concatenate/.
#include "compiler/emitters/concatenate_emitter.h"

#include <gtest/gtest.h>

#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::H100;
using testing::Parse;
using testing::Reason;

std::string Concat1d(std::vector<int64_t> sizes) {
  std::string text = "f {\n";
  std::string operands;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string name = "p" + std::to_string(i);
    text += "  " + name + " = f32[" + std::to_string(sizes[i]) + "] parameter(" +
            std::to_string(i) + ")\n";
    operands += (i ? ", " : "") + name;
    total += sizes[i];
  }
  return text + "  ROOT c = f32[" + std::to_string(total) + "] concatenate(" + operands +
         "), dimensions={0}\n}\n";
}

TEST(ConcatenateEmitterTest, OneLoopPerOperandAtItsOffset) {
  auto module = Parse(Concat1d({200, 400, 300}));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  const Emitter& emitter = EmitterFor(analysis);
  ASSERT_EQ(emitter.name(), "concatenate");
  auto kernel = emitter.Emit(analysis, nullptr, H100());
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  EXPECT_EQ(kernel->emitter, "concatenate");
  ASSERT_EQ(kernel->phases.size(), 1u);
  const std::vector<LoopStmt>& loops = kernel->phases[0].loops;
  ASSERT_EQ(loops.size(), 3u);
  // Thread 5 of block 1 handles element 133 of each operand: output 133, 333 and 733.
  std::vector<int64_t> dims = {5, 0, 0, 1, 0, 0};
  std::vector<int64_t> first = {0, 0};  // chunk 0, lane 0
  std::vector<int64_t> past = {100, 0, 0, 1, 0, 0};
  EXPECT_EQ(loops[0].map.Evaluate(dims, first), std::vector<int64_t>{133});
  EXPECT_EQ(loops[1].map.Evaluate(dims, first), std::vector<int64_t>{333});
  EXPECT_EQ(loops[2].map.Evaluate(dims, first), std::vector<int64_t>{733});
  // Operand 0 has 200 elements: thread 100 of block 1 (element 228) does nothing there.
  EXPECT_FALSE(loops[0].map.Contains(past, first));
  EXPECT_TRUE(loops[1].map.Contains(past, first));
}

TEST(ConcatenateEmitterTest, InvalidConfigsSayWhy) {
  auto module = Parse(Concat1d({200, 400, 300}));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  const Emitter& emitter = EmitterFor(analysis);
  EXPECT_EQ(Reason(emitter.Validate(analysis, {{"vector", 2}}, H100())), "");
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"threads_per_block", 100}}, H100()))
                .find("threads_per_block=100 is not a multiple of the warp size"),
            std::string::npos);
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"vector", 3}}, H100())).find("vector=3"),
            std::string::npos);
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"unroll", 2}}, H100())).find("'unroll'"),
            std::string::npos);
  auto invalid = emitter.Emit(analysis, {{"blocks_y", 0}}, H100());
  ASSERT_FALSE(invalid.has_value());
  EXPECT_NE(invalid.error().message.find("blocks_y=0"), std::string::npos);
  // Packed outputs would have operand offsets splitting bytes between threads.
  auto packed = Parse(
      "f {\n  a = s4[3]{0:E(4)} parameter(0)\n  b = s4[5]{0:E(4)} parameter(1)\n"
      "  ROOT c = s4[8]{0:E(4)} concatenate(a, b), dimensions={0}\n}\n");
  analysis::FusionAnalysis packed_analysis = analysis::AnalyzeFusion(*packed->fusion());
  EXPECT_NE(Reason(ValidateConcatenateConfig({32, 2, 1, 1}, packed_analysis, H100()))
                .find("narrower than 8 bits"),
            std::string::npos);
}

}  // namespace
}  // namespace tilesmith::emitters
