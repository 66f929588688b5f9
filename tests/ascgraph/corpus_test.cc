// The real AscGraph of the shared corpus (an Abs chain on f32[1024,1025,10] from the public
// AutoFuse test data) reads with the schema alone, validates, lowers, prints as HLO and
// evaluates to abs of its input.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/ascgraph/lower.h"
#include "compiler/ascgraph/reader.h"
#include "compiler/ascgraph/validate.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "tests/ascgraph/test_util.h"

namespace tilesmith::ascgraph {
namespace {

std::string CorpusGraph() {
  std::string dir = testing::CorpusDir();
  std::string path = dir + "/ascgraph/abs_chain_f32_1024x1025x10.ascgraph.txt";
  return !dir.empty() && std::filesystem::exists(path) ? path : "";
}

TEST(AscGraphCorpusTest, AbsChainReadsValidatesLowersAndEvaluates) {
  std::string path = CorpusGraph();
  if (path.empty())
    GTEST_SKIP() << "no corpus: set TILESMITH_CORPUS_DIR to the shared corpus folder";
  // Every field of the real file is in our schema: strict reading succeeds.
  auto request = ReadRequestFile(path, {.allow_unknown_fields = false});
  ASSERT_TRUE(request.has_value()) << request.error().message;
  EXPECT_EQ(request->graph.name, "Abs_5_out0_graph");
  ASSERT_EQ(request->graph.axes.size(), 3u);
  EXPECT_EQ(request->graph.axes[2].name, "z2");
  EXPECT_EQ(request->graph.axes[2].align, 1);
  EXPECT_TRUE(request->graph.axes[2].allow_unaligned_tail);
  ASSERT_EQ(request->graph.nodes.size(), 10u);

  auto bound = BindAndValidate(*request);
  ASSERT_TRUE(bound.has_value()) << bound.error().message;
  EXPECT_EQ(bound->axis_sizes, (std::map<int64_t, int64_t>{{0, 1024}, {1, 1025}, {2, 10}}));
  ASSERT_EQ(bound->inputs.size(), 1u);
  EXPECT_EQ(bound->inputs[0]->name, "Abs_5_out0_graph/Data_0");
  ASSERT_EQ(bound->results.size(), 1u);
  EXPECT_EQ(bound->results[0]->name, "Abs_5_out0_graph/Output_0");
  EXPECT_EQ(bound->order.back()->name, "Abs_5_out0_graph/Output_0");

  auto module = LowerToHlo(*request);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  ASSERT_EQ(fusion.parameter_count(), 1);
  EXPECT_EQ(hlo::ShapeToString(fusion.parameter(0)->shape()), "f32[1024,1025,10]{2,1,0}");
  EXPECT_EQ(hlo::ShapeToString(fusion.root()->shape()), "f32[1024,1025,10]{2,1,0}");
  int abs_count = 0;
  for (const auto& instruction : fusion.instructions()) {
    abs_count += hlo::HloOpcodeName(instruction->opcode()) == "abs";
  }
  EXPECT_EQ(abs_count, 6);

  std::string text = hlo::PrintModule(**module);
  auto reparsed = hlo::ParseHloModule(text, "printed");
  ASSERT_TRUE(reparsed.has_value()) << reparsed.error().message;
  EXPECT_EQ(hlo::PrintModule(**reparsed), text);

  auto arguments = hlo::MakeRandomArguments(fusion, 7);
  ASSERT_TRUE(arguments.has_value()) << arguments.error().message;
  auto result = hlo::Evaluate(fusion, *arguments);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  const hlo::Literal& input = (*arguments)[0];
  ASSERT_EQ(result->element_count(), 1024 * 1025 * 10);
  const float* in = input.data<float>();
  const float* out = result->data<float>();
  int64_t mismatches = 0;
  for (int64_t i = 0; i < result->element_count(); ++i) mismatches += out[i] != std::abs(in[i]);
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace tilesmith::ascgraph
