// The host's register transpose of a packed transpose's first phase: each thread's
// vector x vector sub-tile is loaded as vectors, transposed with shuffles and stored as
// vectors, and the kernel still matches the evaluator bit for bit — with whole tiles and
// with hints that do not fit the loop (which code generation must then ignore or undo).
// Partial tiles with a prologue are data: tests/data/emitters/transpose/.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>

#include "compiler/codegen/host_backend.h"
#include "compiler/hlo/evaluator.h"
#include "tests/codegen/host_check.h"
#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

using Hint = emitters::LoopStmt::RegisterTranspose;

std::string Transpose2d(const std::string& type, int64_t rows, int64_t columns) {
  std::string in = type + "[" + std::to_string(rows) + "," + std::to_string(columns) + "]";
  std::string out = type + "[" + std::to_string(columns) + "," + std::to_string(rows) + "]";
  return "t {\n  p = " + in + " parameter(0)\n  ROOT t = " + out +
         " transpose(p), dimensions={1,0}\n}\n";
}

nlohmann::json Packed(int64_t vector, int64_t tile, int64_t rows_per_pass) {
  int64_t threads = (tile / vector) * rows_per_pass;
  return {{"packed", true},    {"vector", vector}, {"shared_padding", vector},
          {"tile_in", tile},   {"tile_out", tile}, {"rows_per_pass", rows_per_pass},
          {"threads", threads}};
}

struct Outcome {
  std::string llvm_ir;
  std::string mismatch;  // "" when every output matches the evaluator
};

// Emits `config` for `hlo`, lets `edit` change the first phase's loop, then returns the host
// LLVM IR and how the kernel's outputs compare with the evaluator's.
Outcome EmitAndRun(const std::string& hlo, const nlohmann::json& config,
                   const std::function<void(emitters::LoopStmt&)>& edit = nullptr,
                   Match match = Match::kBits) {
  auto module = hlo::ParseHloModule(hlo);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  if (!module) return {"", "no module"};
  const hlo::HloComputation& fusion = *(*module)->fusion();
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  auto kernel = emitters::EmitKernel(analysis, config, device);
  EXPECT_TRUE(kernel.has_value()) << config << ": " << kernel.error().message;
  if (!kernel) return {"", "no kernel"};
  if (edit) edit(kernel->phases[0].loops[0]);
  Outcome outcome;
  auto ir = HostLlvmIr(*kernel);
  EXPECT_TRUE(ir.has_value()) << ir.error().message;
  if (ir) outcome.llvm_ir = *ir;
  auto arguments = hlo::MakeRandomArguments(fusion, /*seed=*/7);
  auto expected = hlo::Evaluate(fusion, *arguments);
  EXPECT_TRUE(expected.has_value()) << expected.error().message;
  auto compiled = CompileForHost(std::move(*kernel));
  EXPECT_TRUE(compiled.has_value()) << compiled.error().message;
  if (!compiled || !expected) return {outcome.llvm_ir, "not run"};
  auto outputs = (*compiled)->Run(*arguments);
  EXPECT_TRUE(outputs.has_value()) << outputs.error().message;
  if (!outputs) return {outcome.llvm_ir, "not run"};
  std::vector<const hlo::Literal*> leaves = LiteralLeaves(*expected);
  for (size_t i = 0; i < outputs->size(); ++i) {
    hlo::Comparison comparison = hlo::CompareLiterals((*outputs)[i], *leaves[i]);
    std::string difference = comparison.matches ? "" : comparison.first_mismatch;
    if (difference.empty() && match == Match::kBits) {
      difference = FirstBitDifference((*outputs)[i], *leaves[i]);
    }
    if (!difference.empty()) outcome.mismatch += "output " + std::to_string(i) + ": " + difference;
  }
  return outcome;
}

struct TypeCase {
  std::string type;
  int64_t vector;
  std::string slot;  // the LLVM vector type the tile's rows are stored as
};

void PrintTo(const TypeCase& c, std::ostream* out) { *out << c.type << " vector " << c.vector; }

class RegisterTransposeTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(RegisterTransposeTest, SquaresMoveThroughShufflesAndMatchTheEvaluator) {
  const TypeCase& c = GetParam();
  std::string hlo = Transpose2d(c.type, 256, 192);
  Outcome vectors = EmitAndRun(hlo, Packed(c.vector, 64, 4));
  EXPECT_EQ(vectors.mismatch, "");
  // Without the hint, the same loop runs element by element and computes the same; its
  // vector stores are phase 2's only.
  Outcome elements = EmitAndRun(hlo, Packed(c.vector, 64, 4),
                                [](emitters::LoopStmt& loop) { loop.register_transpose.reset(); });
  EXPECT_EQ(elements.mismatch, "");
  std::string vector_store = "store " + c.slot;
  EXPECT_GT(testing::CountLines(vectors.llvm_ir, vector_store),
            testing::CountLines(elements.llvm_ir, vector_store))
      << vectors.llvm_ir;
}

INSTANTIATE_TEST_SUITE_P(Types, RegisterTransposeTest,
                         ::testing::Values(TypeCase{"f32", 4, "<4 x i32>"},
                                           TypeCase{"f32", 2, "<2 x i32>"},
                                           TypeCase{"bf16", 2, "<2 x i16>"},
                                           TypeCase{"s8", 4, "<4 x i8>"},
                                           TypeCase{"f64", 2, "<2 x i64>"}),
                         [](const ::testing::TestParamInfo<TypeCase>& info) {
                           return info.param.type + "_vector" + std::to_string(info.param.vector);
                         });

TEST(RegisterTransposeEdgesTest, HintsThatDoNotFitTheLoopStillComputeTheTranspose) {
  std::string hlo = Transpose2d("f32", 96, 80);
  // Swapped: the shared stores are not adjacent along the "store" symbol, so the square's
  // values are stored element by element after all.
  Outcome swapped = EmitAndRun(hlo, Packed(4, 32, 4), [](emitters::LoopStmt& loop) {
    loop.register_transpose = Hint{2, 1};
  });
  EXPECT_EQ(swapped.mismatch, "");
  // Not the innermost symbols: ignored.
  Outcome outer = EmitAndRun(hlo, Packed(4, 32, 4), [](emitters::LoopStmt& loop) {
    loop.register_transpose = Hint{0, 1};
  });
  EXPECT_EQ(outer.mismatch, "");
  // No transposing shuffle. LLVM's vectoriser may still splat an address or an index
  // (a shufflevector with a zeroinitializer mask), as it does on CPUs with AVX-512; a splat
  // moves no element of the tile.
  int transposing = 0;
  std::istringstream lines(outer.llvm_ir);
  for (std::string line; std::getline(lines, line);) {
    transposing += line.find("shufflevector") != std::string::npos &&
                   line.find("zeroinitializer") == std::string::npos;
  }
  EXPECT_EQ(transposing, 0) << outer.llvm_ir;
}

}  // namespace
}  // namespace tilesmith::codegen
