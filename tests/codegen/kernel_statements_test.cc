// The Kernel IR statements beyond call/store, written by hand and lowered for both targets:
// shared memory across a barrier, predicated stores, warp shuffles and atomics. On the host
// the kernels run and their outputs are checked element by element; on NVPTX the PTX must
// hold the instructions they stand for.
#include <gtest/gtest.h>

#include "compiler/codegen/host_backend.h"
#include "compiler/codegen/nvptx_backend.h"
#include "compiler/hlo/parser.h"
#include "tests/codegen/nvptx_test_util.h"

namespace tilesmith::codegen {
namespace {

using analysis::AffineExpr;
using analysis::Interval;
using emitters::KernelIR;

constexpr int64_t kThreads = 128;
constexpr int64_t kBlocks = 4;
constexpr int64_t kElements = kThreads * kBlocks;

// `p0` of `type`[kElements], read by function 0 at its index.
struct Fixture {
  std::unique_ptr<hlo::HloModule> module;
  KernelIR kernel;
};

Fixture MakeKernel(std::string_view type, int64_t outputs = 1,
                   int64_t output_elements = kElements) {
  std::string shape = std::string(type) + "[" + std::to_string(kElements) + "]";
  auto module = hlo::ParseHloModule("f {\n  p = " + shape + " parameter(0)\n  ROOT n = " + shape +
                                    " negate(p)\n}\n");
  EXPECT_TRUE(module.has_value()) << module.error().message;
  Fixture fixture{std::move(*module), {}};
  const hlo::HloComputation& fusion = *fixture.module->fusion();
  KernelIR& kernel = fixture.kernel;
  kernel.name = "statements";
  kernel.fusion = &fusion;
  kernel.emitter = "test";
  kernel.config_json = "{}";
  kernel.buffers.push_back({"p0", fusion.parameter(0)->shape(), false, 0});
  hlo::Shape output =
      hlo::Shape::Array(fusion.parameter(0)->shape().element_type(), {output_elements});
  for (int64_t i = 0; i < outputs; ++i) {
    kernel.buffers.push_back({"out" + std::to_string(i), output, true, i});
  }
  kernel.functions.push_back({"param", {fusion.parameter(0)}, {fusion.parameter(0)}});
  kernel.launch.blocks = {kBlocks, 1, 1};
  kernel.launch.threads = {kThreads, 1, 1};
  return fixture;
}

// A loop over one element per thread with results (global index, thread id).
emitters::LoopStmt ThreadLoop(AffineExpr local) {
  std::vector<Interval> dims = {Interval::ForSize(kThreads), Interval::Point(0),
                                Interval::Point(0),          Interval::ForSize(kBlocks),
                                Interval::Point(0),          Interval::Point(0)};
  AffineExpr thread = AffineExpr::Dim(emitters::kThreadIdX);
  AffineExpr global = AffineExpr::Dim(emitters::kBlockIdX) * kThreads + thread;
  return {analysis::IndexingMap(dims, {}, {global, local}), {}};
}

AffineExpr D(int64_t i) { return AffineExpr::Dim(i); }

// Every block reverses its 128 elements through shared memory: thread t reads what thread
// 127 - t wrote, so the barrier and per-block scratch must hold. Elements from 300 on are
// not stored (a predicated store), so they keep the output's initial zeros.
Fixture ReverseThroughShared() {
  Fixture fixture = MakeKernel("s32");
  KernelIR& kernel = fixture.kernel;
  kernel.shared.push_back({"tile", hlo::PrimitiveType::kS32, {kThreads}});
  emitters::LoopStmt write = ThreadLoop(AffineExpr::Dim(emitters::kThreadIdX));
  write.body.push_back(emitters::CallStmt{0, {D(0)}, 0});
  write.body.push_back(emitters::SharedStoreStmt{0, {D(1)}, 0});
  emitters::LoopStmt read =
      ThreadLoop(AffineExpr::Constant(kThreads - 1) - AffineExpr::Dim(emitters::kThreadIdX));
  read.body.push_back(emitters::SharedLoadStmt{0, {D(1)}, 1});
  read.body.push_back(emitters::StoreStmt{1, {D(0)}, 1, {{D(0), Interval{0, 299}}}});
  kernel.phases.push_back({{std::move(write)}});
  kernel.phases.push_back({{std::move(read)}});
  return fixture;
}

// out0[i] = p[i ^ 1], out1[i] = p[i ^ 1 ^ 16] (butterflies), out2[i] = p[i] after both
// shuffles (a value kept across the host's segments), out3[i] = tile[i] loaded before them.
Fixture Butterflies(std::string_view type = "f32") {
  Fixture fixture = MakeKernel(type, 4);
  KernelIR& kernel = fixture.kernel;
  kernel.shared.push_back(
      {"tile", fixture.module->fusion()->parameter(0)->shape().element_type(), {kThreads}});
  emitters::LoopStmt fill = ThreadLoop(AffineExpr::Dim(emitters::kThreadIdX));
  fill.body.push_back(emitters::CallStmt{0, {D(0)}, 0});
  fill.body.push_back(emitters::SharedStoreStmt{0, {D(1)}, 0});
  emitters::LoopStmt loop = ThreadLoop(AffineExpr::Dim(emitters::kThreadIdX));
  loop.body.push_back(emitters::CallStmt{0, {D(0)}, 0});
  loop.body.push_back(emitters::SharedLoadStmt{0, {D(1)}, 4});
  loop.body.push_back(emitters::ShuffleStmt{0, 1, 1});
  loop.body.push_back(emitters::StoreStmt{1, {D(0)}, 1});
  loop.body.push_back(emitters::ShuffleStmt{1, 16, 2});
  loop.body.push_back(emitters::StoreStmt{2, {D(0)}, 2});
  loop.body.push_back(emitters::StoreStmt{3, {D(0)}, 0});
  loop.body.push_back(emitters::StoreStmt{4, {D(0)}, 4});
  kernel.phases.push_back({{std::move(fill)}});
  kernel.phases.push_back({{std::move(loop)}});
  return fixture;
}

// out0[i mod 8] += p[i] atomically, and out1[i mod 8] = max(out1[i mod 8], p[i]).
Fixture Atomics(std::string_view type = "s32") {
  Fixture fixture = MakeKernel(type, 2, 8);
  KernelIR& kernel = fixture.kernel;
  emitters::LoopStmt loop = ThreadLoop(AffineExpr::Dim(emitters::kThreadIdX).Mod(8));
  loop.body.push_back(emitters::CallStmt{0, {D(0)}, 0});
  loop.body.push_back(emitters::AtomicStmt{emitters::AtomicOp::kAdd, 1, {D(1)}, 0});
  loop.body.push_back(emitters::AtomicStmt{emitters::AtomicOp::kMax, 2, {D(1)}, 0});
  kernel.phases.push_back({{std::move(loop)}});
  return fixture;
}

hlo::Literal Iota(hlo::PrimitiveType type) {
  hlo::Literal input(hlo::Shape::Array(type, {kElements}));
  for (int64_t i = 0; i < kElements; ++i) input.SetDouble(i, static_cast<double>((i * 37) % 1000));
  return input;
}

std::vector<hlo::Literal> RunOnHost(const Fixture& fixture, const hlo::Literal& input) {
  auto compiled = CompileForHost(fixture.kernel);
  EXPECT_TRUE(compiled.has_value()) << compiled.error().message;
  if (!compiled) return {};
  auto outputs = (*compiled)->Run(std::span<const hlo::Literal>(&input, 1));
  EXPECT_TRUE(outputs.has_value()) << outputs.error().message;
  return outputs ? std::move(*outputs) : std::vector<hlo::Literal>{};
}

TEST(KernelStatementsTest, SharedMemoryAcrossTheBarrierReversesEachBlock) {
  Fixture fixture = ReverseThroughShared();
  hlo::Literal input = Iota(hlo::PrimitiveType::kS32);
  std::vector<hlo::Literal> outputs = RunOnHost(fixture, input);
  ASSERT_EQ(outputs.size(), 1u);
  for (int64_t i = 0; i < kElements; ++i) {
    int64_t source = i / kThreads * kThreads + (kThreads - 1 - i % kThreads);
    int64_t expected = i < 300 ? input.GetInt(source) : 0;
    ASSERT_EQ(outputs[0].GetInt(i), expected) << "element " << i;
  }
  std::string text = fixture.kernel.ToString();
  EXPECT_NE(text.find("shared %tile: s32[128]"), std::string::npos) << text;
  EXPECT_NE(text.find("(512 bytes)"), std::string::npos) << text;
  EXPECT_NE(text.find("store_shared %tile[%i1] = %v0"), std::string::npos) << text;
  EXPECT_NE(text.find("%v1 = load_shared %tile[%i1]"), std::string::npos) << text;
  EXPECT_NE(text.find("store %out0[%i0] = %v1 if %i0 in [0, 299]"), std::string::npos) << text;
}

TEST(KernelStatementsTest, ButterflyShufflesExchangeLanesOnTheHost) {
  for (auto [name, type] :
       {std::pair{"f32", hlo::PrimitiveType::kF32}, std::pair{"f64", hlo::PrimitiveType::kF64}}) {
    Fixture fixture = Butterflies(name);
    hlo::Literal input = Iota(type);
    std::vector<hlo::Literal> outputs = RunOnHost(fixture, input);
    ASSERT_EQ(outputs.size(), 4u) << name;
    for (int64_t i = 0; i < kElements; ++i) {
      ASSERT_EQ(outputs[0].GetDouble(i), input.GetDouble(i ^ 1)) << name << " element " << i;
      ASSERT_EQ(outputs[1].GetDouble(i), input.GetDouble(i ^ 1 ^ 16)) << name << " element " << i;
      ASSERT_EQ(outputs[2].GetDouble(i), input.GetDouble(i)) << name << " element " << i;
      ASSERT_EQ(outputs[3].GetDouble(i), input.GetDouble(i)) << name << " element " << i;
    }
    EXPECT_NE(fixture.kernel.ToString().find("%v2 = shfl.bfly %v1, 16"), std::string::npos);
  }
}

TEST(KernelStatementsTest, AtomicsCombineEveryBlocksValues) {
  Fixture fixture = Atomics();
  hlo::Literal input = Iota(hlo::PrimitiveType::kS32);
  std::vector<hlo::Literal> outputs = RunOnHost(fixture, input);
  ASSERT_EQ(outputs.size(), 2u);
  for (int64_t slot = 0; slot < 8; ++slot) {
    int64_t sum = 0;
    int64_t max = 0;  // outputs start at zero; the inputs are not negative
    for (int64_t i = slot; i < kElements; i += 8) {
      sum += input.GetInt(i);
      max = std::max(max, input.GetInt(i));
    }
    EXPECT_EQ(outputs[0].GetInt(slot), sum) << "slot " << slot;
    EXPECT_EQ(outputs[1].GetInt(slot), max) << "slot " << slot;
  }
  EXPECT_NE(fixture.kernel.ToString().find("atomic_max %out1[%i1] = %v0"), std::string::npos);
}

std::string Ptx(const Fixture& fixture) {
  auto compiled =
      CompileForNvptx(fixture.kernel, *emitters::Target::Parse("cuda:sm_90"), NvptxStage::kPtx);
  EXPECT_TRUE(compiled.has_value()) << compiled.error().message;
  return compiled ? compiled->ptx : "";
}

TEST(KernelStatementsTest, NvptxLowersSharedMemoryBarriersShufflesAndAtomics) {
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();
  std::string reverse = Ptx(ReverseThroughShared());
  EXPECT_NE(reverse.find(".shared .align 64 .b8"), std::string::npos) << reverse;
  EXPECT_NE(reverse.find("bar.sync"), std::string::npos) << reverse;
  EXPECT_NE(reverse.find("st.shared"), std::string::npos) << reverse;
  EXPECT_NE(reverse.find("ld.shared"), std::string::npos) << reverse;
  std::string butterflies = Ptx(Butterflies());
  EXPECT_EQ(testing::CountLines(butterflies, "shfl.sync.bfly"), 2) << butterflies;
  std::string atomics = Ptx(Atomics());
  EXPECT_NE(atomics.find("atom.global.add"), std::string::npos) << atomics;
  EXPECT_NE(atomics.find("atom.global.max.s32"), std::string::npos) << atomics;
  // f32 add is one instruction; f32 max (no PTX atomic) a compare-and-swap loop.
  std::string float_atomics = Ptx(Atomics("f32"));
  EXPECT_NE(float_atomics.find("atom.global.add.f32"), std::string::npos) << float_atomics;
  EXPECT_NE(float_atomics.find("atom.global.cas.b32"), std::string::npos) << float_atomics;
  std::string wide_shuffles = Ptx(Butterflies("f64"));
  EXPECT_EQ(testing::CountLines(wide_shuffles, "shfl.sync.bfly"), 4) << wide_shuffles;
}

}  // namespace
}  // namespace tilesmith::codegen
