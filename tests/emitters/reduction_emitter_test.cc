// The reduction emitter: XLA's default launch for each variant (the spec's row example),
// config validation and the space's pruning reasons, and kernels run on the host against the
// evaluator for every variant, variadic reducers, inits that are not identities, epilogues,
// side outputs and partial tiles.
#include "compiler/emitters/reduction_emitter.h"

#include <gtest/gtest.h>

#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::H100;
using testing::Host;
using testing::HostMismatch;
using testing::Parse;
using testing::Reason;

constexpr char kAdd[] = R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::string RowFusion(const std::string& shape, const std::string& dims, const std::string& out) {
  return std::string(kAdd) + "f {\n  p0 = f32" + shape +
         " parameter(0)\n  c0 = f32[] constant(0)\n" + "  ROOT r = f32" + out +
         " reduce(p0, c0), dimensions={" + dims + "}, to_apply=add\n}\n";
}

TEST(ReductionEmitterTest, SpecRowExampleGetsXlasLaunch) {
  auto module = Parse(RowFusion("[8,2048]", "1", "[8]"));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  ASSERT_EQ(analysis.emitter, analysis::EmitterKind::kReduction);
  EXPECT_EQ(analysis.reduction_variant, analysis::ReductionVariant::kRow);
  ReductionConfig config = DefaultReductionConfig(analysis, H100());
  EXPECT_EQ(config.threads_x, 128);
  EXPECT_EQ(config.vector, 2);
  EXPECT_EQ(config.elements_per_thread, 16);
  auto kernel = EmitKernel(analysis, nullptr, H100());
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  EXPECT_EQ(kernel->launch.block_count(), 4);
  EXPECT_EQ(kernel->launch.threads_per_block(), 256);
  // Shuffles within each warp, then one partial per warp through shared memory.
  ASSERT_EQ(kernel->phases.size(), 2u);
  EXPECT_EQ(kernel->shared.size(), 1u);
  EXPECT_EQ(kernel->SharedBytes(), 2 * 4 * 4);
  std::string text = kernel->ToString();
  EXPECT_NE(text.find("reduce @r over"), std::string::npos) << text;
  EXPECT_NE(text.find(", 16\n"), std::string::npos) << "a butterfly from distance 16\n" << text;
  EXPECT_NE(text.find("from shared %partials0"), std::string::npos) << text;
  EXPECT_EQ(HostMismatch(*module->fusion(), nullptr), "");
}

TEST(ReductionEmitterTest, VariantsFollowXlasChoice) {
  struct Case {
    std::string shape, dims, out;
    analysis::ReductionVariant variant;
  };
  std::vector<Case> cases = {
      {"[4096,16]", "1", "[4096]", analysis::ReductionVariant::kMultiRow},
      {"[100,1000]", "1", "[100]", analysis::ReductionVariant::kRow},
      {"[1000,300]", "0", "[300]", analysis::ReductionVariant::kColumn},
      {"[1000,8]", "0", "[8]", analysis::ReductionVariant::kSmallColumn},
  };
  for (const Case& c : cases) {
    auto module = Parse(RowFusion(c.shape, c.dims, c.out));
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    ASSERT_EQ(analysis.emitter, analysis::EmitterKind::kReduction) << c.shape;
    EXPECT_EQ(analysis.reduction_variant, c.variant) << c.shape;
    ReductionConfig config = DefaultReductionConfig(analysis, H100());
    EXPECT_EQ(Reason(ValidateReductionConfig(config, analysis, H100())), "") << c.shape;
    EXPECT_EQ(HostMismatch(*module->fusion(), nullptr, 1), "") << c.shape;
  }
  // Multi-row: one row of 16 per W / vector threads, several rows per warp.
  auto module = Parse(RowFusion("[4096,16]", "1", "[4096]"));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  ReductionConfig multi_row = DefaultReductionConfig(analysis, H100());
  EXPECT_EQ(multi_row.threads_x * multi_row.vector, 16);
  EXPECT_LT(multi_row.threads_x, 32);
  // Column: 32 x 32 threads; small column: W / vector threads along W, 128 in all.
  auto column = Parse(RowFusion("[1000,8]", "0", "[8]"));
  analysis::FusionAnalysis small = analysis::AnalyzeFusion(*column->fusion());
  ReductionConfig small_column = DefaultReductionConfig(small, H100());
  EXPECT_EQ(small_column.threads(), 128);
  EXPECT_EQ(small_column.threads_x * small_column.vector, 8);
}

TEST(ReductionEmitterTest, ValidationNamesTheField) {
  auto module = Parse(RowFusion("[8,2048]", "1", "[8]"));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto reason = [&](const nlohmann::json& config) {
    return Reason(FindEmitter("reduction")->Validate(analysis, config, H100()));
  };
  EXPECT_EQ(reason({{"vector", 4}}), "");
  EXPECT_NE(reason({{"vector", 3}}).find("vector=3 is not 1, 2, 4 or 8"), std::string::npos);
  EXPECT_NE(reason({{"threads_x", 48}}).find("multiple of 32"), std::string::npos);
  EXPECT_NE(reason({{"threads_x", 12}, {"threads_y", 8}}).find("power of two"), std::string::npos);
  EXPECT_NE(reason({{"threads_x", 1024}, {"threads_y", 2}}).find("over the limit 1024"),
            std::string::npos);
  EXPECT_NE(reason({{"elements_per_thread", 15}}).find("not a multiple of vector=2"),
            std::string::npos);
  EXPECT_NE(reason({{"threads", 1}}).find("unknown reduction config field 'threads'"),
            std::string::npos);
  EXPECT_EQ(reason({{"threads_x", 64}, {"vector", 1}}), "");
}

TEST(ReductionEmitterTest, SpaceKeepsTheDefaultAndSaysWhyOthersArePruned) {
  auto module = Parse(RowFusion("[8,2048]", "1", "[8]"));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  std::vector<SpaceEntry> space = ConfigSpace(analysis, H100());
  nlohmann::json default_config = DefaultConfig(analysis, H100());
  int valid = 0;
  bool default_valid = false;
  std::map<std::string, int> reasons;
  for (const SpaceEntry& entry : space) {
    valid += entry.valid();
    if (entry.config == default_config) default_valid = entry.valid();
    if (!entry.valid()) reasons[entry.pruned_reason.substr(0, entry.pruned_reason.find('='))]++;
  }
  EXPECT_TRUE(default_valid);
  EXPECT_GT(valid, 50);
  EXPECT_GT(reasons["threads_y"], 0) << "8 rows leave threads idle past 8 rows per block";
}

TEST(ReductionEmitterTest, SampledConfigsOfEachVariantMatchTheEvaluator) {
  for (const auto& [shape, dims, out] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"[3,100,130]", "0,2", "[100]"},  // row with D > 1 and a ragged W
           {"[37,8]", "1", "[37]"},          // multi-row with a partial block
           {"[70,45]", "0", "[45]"},         // column with partial tiles
           {"[5,300,4]", "1", "[5,4]"},      // small column with D > 1
           {"[4097]", "0", "[]"}}) {         // to a scalar
    auto module = Parse(RowFusion(shape, dims, out));
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    ASSERT_EQ(analysis.emitter, analysis::EmitterKind::kReduction) << shape;
    std::vector<nlohmann::json> valid;
    for (const SpaceEntry& entry : ConfigSpace(analysis, Host())) {
      if (entry.valid()) valid.push_back(entry.config);
    }
    ASSERT_GT(valid.size(), 4u) << shape;
    for (size_t i = 0; i < 5; ++i) {
      const nlohmann::json& config = valid[i * (valid.size() - 1) / 4];
      EXPECT_EQ(HostMismatch(*module->fusion(), config, i), "") << shape << " " << config;
    }
  }
}

TEST(ReductionEmitterTest, InitThatIsNotAnIdentityIsFoldedOnce) {
  // XLA's emitters fold the init into every partial; HLO's evaluator folds it once. A
  // parameter init (or add with init 1) must come out as the evaluator's.
  for (const char* init : {"p1 = f32[] parameter(1)", "p1 = f32[] constant(1)"}) {
    std::string text = std::string(kAdd) + "f {\n  p0 = f32[16,1000] parameter(0)\n  " + init +
                       "\n  ROOT r = f32[16] reduce(p0, p1), dimensions={1}, to_apply=add\n}\n";
    auto module = Parse(text);
    for (const nlohmann::json& config :
         {nlohmann::json(nullptr), nlohmann::json{{"threads_x", 256}, {"vector", 1}}}) {
      EXPECT_EQ(HostMismatch(*module->fusion(), config, 2), "") << init << " " << config;
    }
    auto kernel = EmitKernel(analysis::AnalyzeFusion(*module->fusion()), nullptr, H100());
    ASSERT_TRUE(kernel.has_value());
    EXPECT_NE(kernel->ToString().find("reduce_present"), std::string::npos);
  }
}

TEST(ReductionEmitterTest, ArgmaxEpilogueAndSideOutputInOneKernel) {
  constexpr char kText[] = R"(argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  eq = pred[] compare(v0, v1), direction=EQ
  lt = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, v0, v1)
  i = s32[] select(pick, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[24,700] parameter(0)
  iota = s32[24,700] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  am = (f32[24], s32[24]) reduce(p0, iota, ninf, zero), dimensions={1}, to_apply=argmax
  c0 = f32[] constant(0)
  sum = f32[24] reduce(p0, c0), dimensions={1}, to_apply=add
  lg = f32[24] log(sum)
  neg = f32[24,700] negate(p0)
  ROOT out = ((f32[24], s32[24]), f32[24], f32[24,700]) tuple(am, lg, neg)
})";
  auto module = Parse(kText);
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  ASSERT_EQ(analysis.emitter, analysis::EmitterKind::kReduction) << analysis.reason;
  for (const nlohmann::json& config :
       {nlohmann::json(nullptr), nlohmann::json{{"threads_x", 64}, {"threads_y", 4}},
        nlohmann::json{
            {"threads_x", 16}, {"threads_y", 8}, {"vector", 1}, {"elements_per_thread", 4}}}) {
    EXPECT_EQ(HostMismatch(*module->fusion(), config, 4), "") << config;
  }
}

TEST(ReductionEmitterTest, RowAndColumnPassPartialsThroughSharedMemory) {
  auto module = Parse(RowFusion("[8,2048]", "1", "[8]"));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
  auto column = Parse(RowFusion("[1000,300]", "0", "[300]"));
  analysis::FusionAnalysis column_analysis = analysis::AnalyzeFusion(*column->fusion());
  for (const analysis::FusionAnalysis* fusion : {&analysis, &column_analysis}) {
    auto kernel = EmitKernel(*fusion, nullptr, H100());
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    EXPECT_EQ(kernel->emitter, "reduction");
    EXPECT_EQ(kernel->phases.size(), 2u);
    EXPECT_GT(kernel->SharedBytes(), 0);
  }
}

}  // namespace
}  // namespace tilesmith::emitters

namespace tilesmith::emitters {
namespace {

TEST(ReductionEmitterTest, SplitReductionsAccumulateWithAtomicsIntoAnIdentityFilledOutput) {
  for (const auto& [shape, dims, out] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"[16,20000]", "1", "[16]"},
                                                                      {"[5000,40]", "0", "[40]"}}) {
    auto module = testing::Parse(RowFusion(shape, dims, out));
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    for (int64_t split : {2, 4, 16}) {
      nlohmann::json config = {{"split", split}};
      auto kernel = EmitKernel(analysis, config, testing::H100());
      ASSERT_TRUE(kernel.has_value()) << shape << " " << kernel.error().message;
      std::string text = kernel->ToString();
      EXPECT_NE(text.find("atomic_add %out0"), std::string::npos) << text;
      EXPECT_NE(text.find("starts at 0"), std::string::npos) << text;
      auto unsplit = EmitKernel(analysis, nullptr, testing::H100());
      ASSERT_TRUE(unsplit.has_value());
      EXPECT_EQ(kernel->launch.block_count(), unsplit->launch.block_count() * split);
      EXPECT_EQ(testing::HostMismatch(*module->fusion(), config, split), "") << shape << split;
    }
  }
}

TEST(ReductionEmitterTest, SplitIsRefusedWhereAtomicsCannotCombineTheParts) {
  auto reason = [](const std::string& text) {
    auto module = testing::Parse(text);
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*module->fusion());
    return testing::Reason(
        FindEmitter("reduction")->Validate(analysis, {{"split", 4}}, testing::H100()));
  };
  std::string epilogue = std::string(kAdd) +
                         "f {\n  p0 = f32[16,4096] parameter(0)\n  c0 = f32[] constant(0)\n"
                         "  r = f32[16] reduce(p0, c0), dimensions={1}, to_apply=add\n"
                         "  ROOT l = f32[16] log(r)\n}\n";
  EXPECT_NE(reason(epilogue).find("applies an epilogue"), std::string::npos) << reason(epilogue);
  std::string not_identity = std::string(kAdd) +
                             "f {\n  p0 = f32[16,4096] parameter(0)\n  p1 = f32[] parameter(1)\n"
                             "  ROOT r = f32[16] reduce(p0, p1), dimensions={1}, to_apply=add\n}\n";
  EXPECT_NE(reason(not_identity).find("not its reducer's identity"), std::string::npos);
  EXPECT_EQ(reason(RowFusion("[16,4096]", "1", "[16]")), "");
}

}  // namespace
}  // namespace tilesmith::emitters
