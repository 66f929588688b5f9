// The tree second pass of split reductions: every block stores its partial results in scratch
// and counts itself in; the block that arrives last for a group of outputs folds the parts and
// writes the outputs, epilogues included. Checked on the host against the evaluator for the
// reducers atomics cannot combine (epilogues, float max, variadic argmax, a non-identity
// init) and run twice on the same buffers (the counters put themselves back). The kernel's
// scratch, arrival and launch, and its sm_90 fence and counter, are data:
// tests/data/emitters/reduction/tree_second_pass_*.hlo.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/hlo/buffer.h"
#include "compiler/hlo/literal_compare.h"
#include "compiler/hlo/tiling.h"
#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::HostMismatch;
using testing::Parse;
using testing::Reason;

constexpr char kReducers[] = R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  g = pred[] compare(a, b), direction=GT
  v = f32[] select(g, a, b)
  k = s32[] select(g, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
)";

std::string Fusion(const std::string& body) {
  return std::string(kReducers) + "f {\n" + body + "}\n";
}

struct Case {
  const char* name;
  std::string text;
};

std::vector<Case> Cases() {
  return {
      {"row add", Fusion("  p0 = f32[16,20000] parameter(0)\n  c0 = f32[] constant(0)\n"
                         "  ROOT r = f32[16] reduce(p0, c0), dimensions={1}, to_apply=add\n")},
      {"column add", Fusion("  p0 = f32[5000,40] parameter(0)\n  c0 = f32[] constant(0)\n"
                            "  ROOT r = f32[40] reduce(p0, c0), dimensions={0}, to_apply=add\n")},
      {"row epilogue", Fusion("  p0 = f32[16,4096] parameter(0)\n  c0 = f32[] constant(0)\n"
                              "  r = f32[16] reduce(p0, c0), dimensions={1}, to_apply=add\n"
                              "  ROOT l = f32[16] log(r)\n")},
      {"column max", Fusion("  p0 = f32[3000,24] parameter(0)\n  c0 = f32[] constant(-inf)\n"
                            "  ROOT r = f32[24] reduce(p0, c0), dimensions={0}, to_apply=max\n")},
      {"row argmax",
       Fusion("  p0 = f32[24,3000] parameter(0)\n  io = s32[24,3000] iota(), iota_dimension=1\n"
              "  c0 = f32[] constant(-inf)\n  c1 = s32[] constant(0)\n"
              "  ROOT r = (f32[24], s32[24]) reduce(p0, io, c0, c1), dimensions={1}, "
              "to_apply=argmax\n")},
      {"row init once", Fusion("  p0 = f32[8,5000] parameter(0)\n  p1 = f32[] parameter(1)\n"
                               "  ROOT r = f32[8] reduce(p0, p1), dimensions={1}, to_apply=add\n")},
      {"row side output",
       Fusion(
           "  p0 = f32[16,4096] parameter(0)\n  c0 = f32[] constant(0)\n"
           "  r = f32[16] reduce(p0, c0), dimensions={1}, to_apply=add\n"
           "  e = f32[16,4096] exponential(p0)\n  ROOT t = (f32[16], f32[16,4096]) tuple(r, e)\n")},
  };
}

nlohmann::json Tree(int64_t split, nlohmann::json config = nlohmann::json::object()) {
  config["split"] = split;
  config["second_pass"] = "tree";
  return config;
}

TEST(ReductionTreeTest, EveryReducerMatchesTheEvaluatorThroughTheTreePass) {
  for (const Case& c : Cases()) {
    auto module = Parse(c.text);
    ASSERT_NE(module, nullptr) << c.name;
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    ASSERT_EQ(analysis.emitter, "reduction") << c.name << analysis.reason;
    bool row = analysis.reduction->is_row_reduction;
    // One warp per row (the first level writes the partial from its loop), and several warps
    // per row or a column tile (the first level goes through shared memory).
    std::vector<nlohmann::json> layouts = {
        row ? nlohmann::json{{"threads_x", 32},
                             {"threads_y", 4},
                             {"vector", 1},
                             {"elements_per_thread", 4}}
            : nlohmann::json{{"threads_x", 8}, {"threads_y", 4}, {"vector", 1}},
        nlohmann::json::object()};
    // Parts of unequal length (3) and more parts than a group of lanes has partials (16).
    for (int64_t split : {3, 16}) {
      for (const nlohmann::json& layout : layouts) {
        nlohmann::json config = Tree(split, layout);
        EXPECT_EQ(Reason(FindEmitter("reduction")->Validate(analysis, config, testing::H100())), "")
            << c.name << config;
        EXPECT_EQ(HostMismatch(*module->fusion(), config, static_cast<uint64_t>(split)), "")
            << c.name << " " << config;
      }
    }
  }
}

// Aligned host memory for one kernel buffer.
struct RawBuffer {
  explicit RawBuffer(size_t bytes)
      : data(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64))),
        size(bytes) {}
  ~RawBuffer() { std::free(data); }
  uint8_t* data;
  size_t size;
};

TEST(ReductionTreeTest, CountersPutThemselvesBackSoRepeatedLaunchesAgree) {
  auto module = Parse(Cases()[0].text);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto kernel = EmitKernel(analysis, Tree(16), testing::Host());
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  auto compiled = codegen::CompileForHost(std::move(*kernel));
  ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
  const KernelIR& ir = (*compiled)->kernel();
  auto arguments = hlo::MakeRandomArguments(*module->fusion(), 3);
  ASSERT_TRUE(arguments.has_value());
  std::vector<std::unique_ptr<RawBuffer>> buffers;
  std::vector<void*> pointers;
  int64_t counters = -1;
  int64_t output = -1;
  for (size_t i = 0; i < ir.buffers.size(); ++i) {
    const KernelBuffer& buffer = ir.buffers[i];
    auto physical = hlo::PhysicalLayout::Create(buffer.shape);
    ASSERT_TRUE(physical.has_value());
    buffers.push_back(std::make_unique<RawBuffer>(physical->byte_size()));
    std::memset(buffers.back()->data, 0x5a, buffers.back()->size);
    if (buffer.is_parameter()) {
      auto bytes = hlo::ToPhysicalBuffer((*arguments)[buffer.index]);
      ASSERT_TRUE(bytes.has_value());
      std::memcpy(buffers.back()->data, bytes->data(), bytes->size());
    } else if (buffer.fill) {
      auto bytes = hlo::FilledPhysicalBuffer(buffer.shape, *buffer.fill);
      ASSERT_TRUE(bytes.has_value());
      std::memcpy(buffers.back()->data, bytes->data(), bytes->size());
      if (buffer.is_scratch) counters = static_cast<int64_t>(i);
    }
    if (buffer.is_output) output = static_cast<int64_t>(i);
    pointers.push_back(buffers.back()->data);
  }
  ASSERT_GE(counters, 0);
  ASSERT_GE(output, 0);
  auto read_output = [&] {
    std::span<const uint8_t> bytes(buffers[output]->data, buffers[output]->size);
    return hlo::FromPhysicalBuffer(ir.buffers[output].shape, bytes);
  };
  (*compiled)->Run(pointers);
  auto first = read_output();
  ASSERT_TRUE(first.has_value());
  const RawBuffer& arrivals = *buffers[counters];
  EXPECT_EQ(std::count(arrivals.data, arrivals.data + arrivals.size, 0),
            static_cast<int64_t>(arrivals.size))
      << "every counter is back at 0";
  std::memset(buffers[output]->data, 0x5a, buffers[output]->size);
  (*compiled)->Run(pointers, /*threads=*/2);
  auto second = read_output();
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(hlo::CompareLiterals(*second, *first, 1).matches);
  auto expected = hlo::Evaluate(*module->fusion(), *arguments);
  ASSERT_TRUE(expected.has_value());
  EXPECT_TRUE(hlo::CompareLiterals(*second, *expected, 20000).matches);
}

TEST(ReductionTreeTest, ConfigsSayWhichSecondPassTheyNeed) {
  auto module = Parse(Cases()[2].text);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  const Emitter& emitter = *FindEmitter("reduction");
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"split", 4}}, testing::H100()))
                .find("second_pass=tree combines any reducer's parts"),
            std::string::npos);
  EXPECT_NE(Reason(emitter.Validate(analysis, {{"second_pass", "tree"}}, testing::H100()))
                .find("needs split > 1"),
            std::string::npos);
  EXPECT_NE(Reason(emitter.Validate(analysis, nlohmann::json{{"split", 4}, {"second_pass", "ring"}},
                                    testing::H100()))
                .find("\"atomic\" or \"tree\""),
            std::string::npos);
  // The field is written only for the tree: older configs keep their keys.
  EXPECT_FALSE(emitter.DefaultConfig(analysis, testing::H100()).contains("second_pass"));
  auto read = ReductionConfig::FromJson(Tree(4), ReductionConfig{});
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(read->tree);
  EXPECT_EQ(read->ToJson()["second_pass"], "tree");

  // The space holds tree splits for every reduction, atomic ones only where atomics combine.
  auto count = [&](const analysis::FusionAnalysis& fusion, bool tree) {
    int64_t valid = 0;
    for (const SpaceEntry& entry : emitter.Space(fusion, testing::H100())) {
      bool is_tree = entry.config.value("second_pass", "atomic") == "tree";
      valid += entry.valid() && entry.config["split"] > 1 && is_tree == tree;
    }
    return valid;
  };
  EXPECT_GT(count(analysis, true), 0);
  EXPECT_EQ(count(analysis, false), 0);
  auto add = Parse(Cases()[0].text);
  analysis::FusionAnalysis add_analysis = analysis::AnalyzeFusion(*add->fusion());
  EXPECT_GT(count(add_analysis, true), 0);
  EXPECT_GT(count(add_analysis, false), 0);
}

}  // namespace
}  // namespace tilesmith::emitters
