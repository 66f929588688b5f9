// What the scheduler sees of a graph: merged loop axes, x/y/r groups, alignment, the nodes
// on each pipe and the buffer plan.
#include "costmodel/ascend/loop_nest.h"

#include <gtest/gtest.h>

#include "tests/costmodel/test_graphs.h"

namespace tilesmith::costmodel::ascend {
namespace {

using hlo::PrimitiveType;
using testing::GraphBuilder;

Expected<LoopNest> Analyse(ascgraph::Request& request) {
  TS_ASSIGN_OR_RETURN(ascgraph::BoundGraph bound, ascgraph::BindAndValidate(request));
  return BuildLoopNest(bound);
}

std::vector<std::string> AxisNames(const LoopNest& nest) {
  std::vector<std::string> names;
  for (const LoopAxis& axis : nest.axes) names.push_back(axis.name);
  return names;
}

TEST(LoopNestTest, ContiguousElementwiseAxesMergeIntoOne) {
  GraphBuilder b("abs_chain");
  std::vector<int64_t> axes = {b.Axis(1024), b.Axis(1025), b.Axis(10)};
  std::string x = b.Input(b.Tensor(PrimitiveType::kF32, axes));
  for (int i = 0; i < 3; ++i) x = b.Node("Abs", {x}, b.Tensor(PrimitiveType::kF32, axes));
  b.Result(x);
  auto nest = Analyse(b.request());
  ASSERT_TRUE(nest) << nest.error().message;
  ASSERT_EQ(nest->axes.size(), 1u);
  EXPECT_EQ(nest->axes[0].name, "z0z1z2");
  EXPECT_EQ(nest->axes[0].size, 1024 * 1025 * 10);
  EXPECT_EQ(nest->axes[0].group, GroupKind::kY);
  EXPECT_EQ(nest->axes[0].align, 8);  // 32 bytes of f32
  EXPECT_EQ(nest->axes[0].from, (std::vector<std::string>{"z0", "z1", "z2"}));
  // Load, 3 x Abs, Store; Data and Output cost nothing.
  ASSERT_EQ(nest->nodes.size(), 5u);
  EXPECT_EQ(nest->nodes.front().role, NodeRole::kLoad);
  EXPECT_EQ(nest->nodes.back().role, NodeRole::kStore);
  // The load's queue, two calc buffers the Abs results alternate in, the output queue.
  ASSERT_EQ(nest->buffers.size(), 4u);
  EXPECT_EQ(nest->buffers[0].name, "q0");
  EXPECT_EQ(nest->buffers[0].kind, BufferKind::kInQueue);
  EXPECT_EQ(nest->buffers[0].count, 2);
  EXPECT_EQ(nest->buffers[1].name, "b0");
  EXPECT_EQ(nest->buffers[1].tensors.size(), 1u);
  EXPECT_EQ(nest->buffers[2].name, "b1");
  EXPECT_EQ(nest->buffers[3].name, "q1");
  EXPECT_EQ(nest->buffers[3].kind, BufferKind::kOutQueue);
  EXPECT_EQ(nest->assumptions.size(), 1u);  // Abs has no published coefficient
}

TEST(LoopNestTest, ABroadcastKeepsItsAxesApart) {
  GraphBuilder b("broadcast_add");
  int64_t z0 = b.Axis(64), z1 = b.Axis(100);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF16, {z0, z1}));
  std::string row = b.Input(b.Tensor(PrimitiveType::kF16, {z0, z1}, {z0}));
  std::string wide = b.Node("Broadcast", {row}, b.Tensor(PrimitiveType::kF16, {z0, z1}));
  b.Result(b.Node("Add", {x, wide}, b.Tensor(PrimitiveType::kF16, {z0, z1})));
  auto nest = Analyse(b.request());
  ASSERT_TRUE(nest) << nest.error().message;
  EXPECT_EQ(AxisNames(*nest), (std::vector<std::string>{"z0", "z1"}));
  EXPECT_EQ(nest->axes[0].align, 1);
  EXPECT_EQ(nest->axes[1].align, 16);  // 32 bytes of f16
  // The row is loaded once per tile with repeat 1 on z0.
  const UbTensor& row_tensor = nest->tensors[nest->nodes[1].tensors[0]];
  EXPECT_EQ(row_tensor.repeats, (std::vector<int64_t>{1, 100}));
}

TEST(LoopNestTest, ReducedAxesFormTheRGroup) {
  GraphBuilder b("arar");
  int64_t a0 = b.Axis(8), r0 = b.Axis(30), a1 = b.Axis(16), r1 = b.Axis(50);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {a0, r0, a1, r1}));
  b.Result(b.Node("Sum", {x}, b.Tensor(PrimitiveType::kF32, {a0, r0, a1, r1}, {r0, r1})));
  auto nest = Analyse(b.request());
  ASSERT_TRUE(nest) << nest.error().message;
  ASSERT_EQ(nest->axes.size(), 4u);
  std::vector<GroupKind> groups;
  for (const LoopAxis& axis : nest->axes) groups.push_back(axis.group);
  EXPECT_EQ(groups,
            (std::vector<GroupKind>{GroupKind::kY, GroupKind::kR, GroupKind::kY, GroupKind::kR}));
  EXPECT_TRUE(nest->reduce_splittable);         // only the Store follows the Sum
  EXPECT_TRUE(nest->nodes[0].in_reduce_loop);   // Load
  EXPECT_TRUE(nest->nodes[1].in_reduce_loop);   // Sum accumulates
  EXPECT_FALSE(nest->nodes[2].in_reduce_loop);  // Store of the reduced result
  EXPECT_EQ(nest->buffers.back().kind, BufferKind::kTmp);
  // The stored result [a0, 1, a1, 1] is contiguous over a1: its tiles are 8 floats.
  EXPECT_EQ(nest->axes[2].align, 8);
}

TEST(LoopNestTest, ASoftmaxKeepsTheReduceAxisWhole) {
  GraphBuilder b("softmax");
  int64_t z0 = b.Axis(64), z1 = b.Axis(1000);
  auto full = [&] { return b.Tensor(PrimitiveType::kF32, {z0, z1}); };
  auto reduced = [&] { return b.Tensor(PrimitiveType::kF32, {z0, z1}, {z1}); };
  std::string x = b.Input(full());
  std::string max = b.Node("Max", {x}, reduced());
  std::string shifted = b.Node("Sub", {x, b.Node("Broadcast", {max}, full())}, full());
  std::string exp = b.Node("Exp", {shifted}, full());
  std::string sum = b.Node("Sum", {exp}, reduced());
  b.Result(b.Node("Div", {exp, b.Node("Broadcast", {sum}, full())}, full()));
  auto nest = Analyse(b.request());
  ASSERT_TRUE(nest) << nest.error().message;
  EXPECT_FALSE(nest->reduce_splittable);
  EXPECT_EQ(nest->axes[1].group, GroupKind::kR);
  // The row maxima are one row in the buffer: no alignment is forced on z0.
  EXPECT_EQ(nest->axes[0].align, 1);
}

TEST(LoopNestTest, ATransposeSplitsIntoXAndYGroups) {
  GraphBuilder b("transpose");
  int64_t z0 = b.Axis(256), z1 = b.Axis(512);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {z0, z1}));
  b.Result(b.Node("Transpose", {x}, b.Tensor(PrimitiveType::kF32, {z1, z0})));
  auto nest = Analyse(b.request());
  ASSERT_TRUE(nest) << nest.error().message;
  ASSERT_EQ(nest->axes.size(), 2u);
  EXPECT_EQ(nest->axes[0].group, GroupKind::kX);
  EXPECT_EQ(nest->axes[1].group, GroupKind::kY);
  // Each axis is the contiguous one of one side of the transpose.
  EXPECT_EQ(nest->axes[0].align, 8);
  EXPECT_EQ(nest->axes[1].align, 8);
}

TEST(LoopNestTest, MixedWidthsAlignToTheNarrowest) {
  GraphBuilder b("cast_exp");
  int64_t z0 = b.Axis(33), z1 = b.Axis(77);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF16, {z0, z1}));
  std::string wide = b.Node("Cast", {x}, b.Tensor(PrimitiveType::kF32, {z0, z1}));
  b.Result(b.Node("Exp", {wide}, b.Tensor(PrimitiveType::kF32, {z0, z1})));
  auto nest = Analyse(b.request());
  ASSERT_TRUE(nest) << nest.error().message;
  ASSERT_EQ(nest->axes.size(), 1u);
  EXPECT_EQ(nest->axes[0].align, 16);  // lcm(32/2, 32/4)
  EXPECT_EQ(nest->tensors[0].elem_bytes, 2);
}

TEST(LoopNestTest, SizeOneAxesMergeOnlyWhereTheRestAgrees) {
  // z1 has size 1; the row input broadcasts over z0 but not z2, so z0 and z2 must not
  // merge through z1.
  GraphBuilder b("size_one");
  int64_t z0 = b.Axis(16), z1 = b.Axis(1), z2 = b.Axis(64);
  std::string x = b.Input(b.Tensor(PrimitiveType::kF32, {z0, z1, z2}));
  std::string row = b.Input(b.Tensor(PrimitiveType::kF32, {z0, z1, z2}, {z0}));
  std::string wide = b.Node("Broadcast", {row}, b.Tensor(PrimitiveType::kF32, {z0, z1, z2}));
  b.Result(b.Node("Mul", {x, wide}, b.Tensor(PrimitiveType::kF32, {z0, z1, z2})));
  auto nest = Analyse(b.request());
  ASSERT_TRUE(nest) << nest.error().message;
  EXPECT_EQ(AxisNames(*nest), (std::vector<std::string>{"z0z1", "z2"}));
}

TEST(LoopNestTest, ErrorsNameTheNode) {
  GraphBuilder direct("direct");
  int64_t z0 = direct.Axis(64);
  std::string data = direct.Node("Data", {}, direct.Tensor(PrimitiveType::kF32, {z0}));
  direct.Result(direct.Node("Abs", {data}, direct.Tensor(PrimitiveType::kF32, {z0})));
  auto nest = Analyse(direct.request());
  ASSERT_FALSE(nest);
  EXPECT_NE(nest.error().message.find("node 'Abs_1' (Abs) reads graph input 'Data_0' directly"),
            std::string::npos)
      << nest.error().message;

  GraphBuilder impl("impl");
  int64_t z = impl.Axis(64);
  impl.Result(impl.Input(impl.Tensor(PrimitiveType::kF32, {z})));
  impl.request().graph.type = 1;
  nest = Analyse(impl.request());
  ASSERT_FALSE(nest);
  EXPECT_NE(nest.error().message.find("ImplGraph"), std::string::npos) << nest.error().message;
}

TEST(LoopNestTest, SaturatingMulStaysOrdered) {
  EXPECT_EQ(SaturatingMul(3, 4), 12);
  EXPECT_EQ(SaturatingMul(int64_t{1} << 40, int64_t{1} << 40), int64_t{1} << 62);
  EXPECT_EQ(SaturatingMul(0, int64_t{1} << 62), 0);
}

}  // namespace
}  // namespace tilesmith::costmodel::ascend
