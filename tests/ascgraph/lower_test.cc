// Facts about the lowered fusion that the NumPy cases do not pin down: what the fingerprint
// covers, which HLO ops an AscIR op becomes, result order, names.
#include "compiler/ascgraph/lower.h"

#include <gtest/gtest.h>

#include "compiler/ascgraph/reader.h"
#include "compiler/ascgraph/validate.h"
#include "compiler/hlo/canonical.h"
#include "tests/ascgraph/test_util.h"

namespace tilesmith::ascgraph {
namespace {

using testing::SourcePath;

Request Read(const std::string& relative, SizeBindings sizes = {}) {
  auto request = ReadRequestFile(SourcePath(relative), {.sizes = std::move(sizes)});
  EXPECT_TRUE(request.has_value()) << request.error().message;
  return request.value_or(Request{});
}

std::unique_ptr<hlo::HloModule> Lower(const Request& request) {
  auto module = LowerToHlo(request);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

std::string Fingerprint(const Request& request) {
  auto module = Lower(request);
  return module ? *hlo::FusionFingerprint(*module) : "";
}

// The fusion's opcodes in post order (parameters and constants included).
std::vector<std::string> Opcodes(const hlo::HloModule& module) {
  std::vector<std::string> opcodes;
  for (const hlo::HloInstruction* instruction : module.fusion()->PostOrder()) {
    opcodes.emplace_back(hlo::HloOpcodeName(instruction->opcode()));
  }
  return opcodes;
}

constexpr char kSoftmax[] = "configs/examples/ascgraph/softmax_last_axis.ascgraph.txt";

TEST(LowerTest, TheFingerprintCoversTheGraphAndTheSizeBindings) {
  std::string small = Fingerprint(Read(kSoftmax, {{"s0", 8}, {"s1", 128}}));
  EXPECT_EQ(Fingerprint(Read(kSoftmax, {{"s0", 8}, {"s1", 128}})), small);
  EXPECT_NE(Fingerprint(Read(kSoftmax, {{"s0", 8}, {"s1", 256}})), small);
  // Node names are not part of the key; the computation is.
  Request renamed = Read(kSoftmax, {{"s0", 8}, {"s1", 128}});
  for (Node& node : renamed.graph.nodes) {
    node.name = "renamed/" + node.name;
    for (InputSource& input : node.inputs) input.node = "renamed/" + input.node;
  }
  renamed.graph.name = "other_name";
  EXPECT_EQ(Fingerprint(renamed), small);
  Request changed = Read(kSoftmax, {{"s0", 8}, {"s1", 128}});
  for (Node& node : changed.graph.nodes) {
    if (node.type == "Exp") node.type = "Abs";
  }
  EXPECT_NE(Fingerprint(changed), small);
}

TEST(LowerTest, SoftmaxIsReduceBroadcastElementwise) {
  auto module = Lower(Read(kSoftmax, {{"s0", 4}, {"s1", 16}}));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Opcodes(*module),
            (std::vector<std::string>{"parameter", "constant", "reduce", "broadcast", "subtract",
                                      "exponential", "constant", "reduce", "broadcast", "divide"}));
  EXPECT_EQ(module->fusion()->name(), "softmax_last_axis");
  EXPECT_EQ(module->entry()->root()->opcode(), hlo::HloOpcode::kFusion);
}

TEST(LowerTest, MaxAndMinAreReductionsWithOneInputAndElementwiseWithTwo) {
  auto reduce = Lower(Read("tests/data/ascgraph/ops/reduce_max_inner.ascgraph.txt"));
  auto elementwise = Lower(Read("tests/data/ascgraph/ops/max_elementwise.ascgraph.txt"));
  ASSERT_NE(reduce, nullptr);
  ASSERT_NE(elementwise, nullptr);
  EXPECT_EQ(reduce->fusion()->root()->opcode(), hlo::HloOpcode::kReshape);
  EXPECT_EQ(Opcodes(*reduce)[2], "reduce");
  EXPECT_EQ(elementwise->fusion()->root()->opcode(), hlo::HloOpcode::kMaximum);
}

TEST(LowerTest, OutputsComeInIndexOrder) {
  Request request = Read("tests/data/ascgraph/ops/two_outputs.ascgraph.txt");
  auto bound = BindAndValidate(request);
  ASSERT_TRUE(bound.has_value());
  ASSERT_EQ(bound->results.size(), 2u);
  EXPECT_EQ(bound->results[0]->name, "two_outputs/Output_0");
  auto module = Lower(request);
  ASSERT_NE(module, nullptr);
  const hlo::HloInstruction* root = module->fusion()->root();
  ASSERT_EQ(root->opcode(), hlo::HloOpcode::kTuple);
  EXPECT_EQ(root->operand(0)->opcode(), hlo::HloOpcode::kNegate);  // Output index 0
  EXPECT_EQ(root->operand(1)->opcode(), hlo::HloOpcode::kAbs);
}

TEST(LowerTest, InstructionsAreNamedAfterNodesAndCarryTheirFullName) {
  auto text = LowerToHloText(
      Read("configs/examples/ascgraph/cast_f16_exp.ascgraph.txt", {{"s0", 2}, {"s1", 3}}));
  ASSERT_TRUE(text.has_value()) << text.error().message;
  EXPECT_NE(text->find("Cast_0 = f32[2,3] convert(Data_0), "
                       "metadata={op_name=\"cast_f16_exp/Cast_0\"}"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("ROOT fusion = f32[2,3] fusion(p0), kind=kLoop, calls=cast_f16_exp"),
            std::string::npos)
      << *text;
}

TEST(LowerTest, ValidationErrorsComeBeforeLowering) {
  Request request = Read(kSoftmax);  // s0 and s1 unbound
  auto module = LowerToHlo(request);
  ASSERT_FALSE(module.has_value());
  EXPECT_EQ(module.error().message,
            "axis 'z0' (id 0) size: size variable 's0' is not bound (in 's0')");
  EXPECT_EQ(ValidateRequest(request).error().message, module.error().message);
}

TEST(LowerTest, LongChainsValidateWithoutDeepRecursion) {
  Request request;
  Axis axis;
  axis.name = "z0";
  axis.size = SizeExpr::Constant(8);
  request.graph.axes.push_back(axis);
  TensorAttr tensor;
  tensor.axis_ids = {0};
  tensor.repeats = {SizeExpr::Constant(8)};
  tensor.strides = {SizeExpr::Constant(1)};
  auto add = [&](std::string name, std::string type, std::string input) {
    Node node;
    node.name = std::move(name);
    node.type = std::move(type);
    node.outputs = {tensor};
    if (!input.empty()) node.inputs.push_back({std::move(input), 0});
    if (node.type == "Data" || node.type == "Output") node.ir_attrs["index"] = int64_t{0};
    request.graph.nodes.push_back(std::move(node));
  };
  constexpr int kLength = 100000;
  add("x", "Data", "");
  for (int i = 0; i < kLength; ++i)
    add("n" + std::to_string(i), "Abs", i ? "n" + std::to_string(i - 1) : "x");
  add("out", "Output", "n" + std::to_string(kLength - 1));
  auto bound = BindAndValidate(request);
  ASSERT_TRUE(bound.has_value()) << bound.error().message;
  EXPECT_EQ(bound->order.size(), kLength + 2u);
  EXPECT_EQ(bound->order.front()->name, "x");
}

}  // namespace
}  // namespace tilesmith::ascgraph
