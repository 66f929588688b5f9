// Layout-free parameters and outputs: the menu of layouts, naming what is free, applying a
// choice to a fusion, the space that multiplies with them, kernels that read a parameter
// in a chosen layout, and real tunes whose every layout choice is verified.
#include "tuner/layouts.h"

#include <gtest/gtest.h>

#include <set>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/host_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/canonical.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/literal_compare.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "db/sqlite_store.h"
#include "tests/tuner/tuner_test_util.h"
#include "tuner/session.h"
#include "tuner/space.h"

namespace tilesmith::tuner {
namespace {

// A transpose called from an entry computation, as XLA dumps a fusion with its caller.
constexpr char kCalledTranspose[] = R"(HloModule called
fused {
  p0 = f32[16,32]{1,0} parameter(0)
  p1 = f32[32,16]{1,0} parameter(1)
  t = f32[32,16]{1,0} transpose(p0), dimensions={1,0}
  ROOT a = f32[32,16]{1,0} add(t, p1)
}
ENTRY e {
  x = f32[16,32]{1,0} parameter(0)
  y = f32[32,16]{1,0} parameter(1)
  ROOT f = f32[32,16]{1,0} fusion(x, y), kind=kInput, calls=fused
}
)";

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

std::string ErrorOf(const Expected<FreeLayouts>& parsed) {
  return parsed ? "" : parsed.error().message;
}

TEST(LayoutMenuTest, OwnLayoutFirstThenPermutationsThenTiles) {
  std::vector<std::string> menu = LayoutMenu(*hlo::ParseShape("f32[100,64,32]{1,2,0}"));
  ASSERT_EQ(menu.size(), 7u);
  EXPECT_EQ(menu[0], "{1,2,0}");
  EXPECT_EQ(std::set<std::string>(menu.begin(), menu.end()).size(), 7u);
  EXPECT_EQ(menu.back(), "{2,1,0:T(8,128)}");
  std::vector<std::string> bf16 = LayoutMenu(*hlo::ParseShape("bf16[16,256]{1,0}"));
  EXPECT_EQ(bf16,
            (std::vector<std::string>{"{1,0}", "{0,1}", "{1,0:T(8,128)}", "{1,0:T(8,128)(2,1)}"}));
}

TEST(LayoutsTest, FreeLayoutsNameRealParametersAndOutputs) {
  auto module = Parse(kCalledTranspose);
  ASSERT_NE(module, nullptr);
  const hlo::HloComputation& fusion = *module->fusion();
  auto both = ParseFreeLayouts("p1,out0,p0,p1", fusion);
  ASSERT_TRUE(both.has_value()) << both.error().message;
  EXPECT_EQ(both->parameters, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(both->outputs, std::vector<int64_t>{0});
  EXPECT_TRUE(ParseFreeLayouts("", fusion)->empty());
  EXPECT_NE(ErrorOf(ParseFreeLayouts("out0,out3", fusion)).find("'out3' is not an output (out0"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ParseFreeLayouts("p7", fusion)).find("'p7' is not a parameter (p0 … p1)"),
            std::string::npos)
      << ErrorOf(ParseFreeLayouts("p7", fusion));
  EXPECT_NE(ErrorOf(ParseFreeLayouts("x0", fusion))
                .find("'x0' names neither a parameter (p0 … p1) nor an output (out0 … out0)"),
            std::string::npos)
      << ErrorOf(ParseFreeLayouts("x0", fusion));
  EXPECT_FALSE(ParseFreeLayouts("p", fusion).has_value());
  EXPECT_FALSE(ParseFreeLayouts("p-1", fusion).has_value());
}

TEST(LayoutsTest, TupleParametersAndBitcastsCannotBeFree) {
  auto tuple = Parse(R"(fusion {
  p0 = (f32[4,8], f32[4,8]) parameter(0)
  a = f32[4,8] get-tuple-element(p0), index=0
  ROOT n = f32[4,8] negate(a)
})");
  ASSERT_NE(tuple, nullptr);
  EXPECT_NE(ErrorOf(ParseFreeLayouts("p0", *tuple->fusion())).find("p0 is a tuple"),
            std::string::npos)
      << ErrorOf(ParseFreeLayouts("p0", *tuple->fusion()));
  // A bitcast's result depends on its operand's layout: another layout would change what
  // the fusion computes.
  auto bitcast = Parse(R"(fusion {
  p0 = f32[4,8]{1,0} parameter(0)
  ROOT b = f32[8,4]{1,0} bitcast(p0)
})");
  ASSERT_NE(bitcast, nullptr);
  EXPECT_NE(ErrorOf(ParseFreeLayouts("p0", *bitcast->fusion())).find("read by bitcast 'b'"),
            std::string::npos)
      << ErrorOf(ParseFreeLayouts("p0", *bitcast->fusion()));
  // The same holds for a bitcast's own layout when it is an output, alone or in a tuple.
  EXPECT_NE(ErrorOf(ParseFreeLayouts("out0", *bitcast->fusion())).find("out0 is bitcast 'b'"),
            std::string::npos)
      << ErrorOf(ParseFreeLayouts("out0", *bitcast->fusion()));
  auto outputs = Parse(R"(fusion {
  p0 = f32[4,8]{1,0} parameter(0)
  b = f32[8,4]{1,0} bitcast(p0)
  n = f32[4,8]{1,0} negate(p0)
  ROOT t = (f32[4,8]{1,0}, f32[8,4]{1,0}) tuple(n, b)
})");
  ASSERT_NE(outputs, nullptr);
  EXPECT_EQ(ParseFreeLayouts("out0", *outputs->fusion())->outputs, std::vector<int64_t>{0});
  EXPECT_NE(ErrorOf(ParseFreeLayouts("out1", *outputs->fusion())).find("out1 is bitcast 'b'"),
            std::string::npos)
      << ErrorOf(ParseFreeLayouts("out1", *outputs->fusion()));
  // Scalars and vectors have one layout: nothing to choose.
  auto vector = Parse("fusion {\n  p0 = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p0)\n}");
  ASSERT_NE(vector, nullptr);
  EXPECT_TRUE(ParseFreeLayouts("p0,out0", *vector->fusion())->empty());
}

TEST(LayoutsTest, AChoiceChangesTheFusionOutputAndOnlyIt) {
  TS_SKIP_WITHOUT_CORPUS();
  auto module = testing::LoadModule(testing::TransposePath());
  ASSERT_NE(module, nullptr);
  auto changed = WithLayouts(*module, {{"out0", "{0,1,2}"}});
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_EQ(hlo::ShapeToString((*changed)->fusion()->root()->shape()), "f32[100,64,32]{0,1,2}");
  EXPECT_EQ(hlo::ShapeToString((*changed)->fusion()->parameter(0)->shape()),
            hlo::ShapeToString(module->fusion()->parameter(0)->shape()));
  auto invalid = WithLayouts(*module, {{"out0", "{0,0,2}"}});
  EXPECT_FALSE(invalid.has_value());
}

TEST(LayoutsTest, AParameterChoiceChangesTheParameterAndTheEntryArgument) {
  auto module = Parse(kCalledTranspose);
  ASSERT_NE(module, nullptr);
  auto changed = WithLayouts(*module, {{"p0", "{0,1}"}, {"p1", "{1,0:T(8,128)}"}});
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  const hlo::HloComputation& fusion = *(*changed)->fusion();
  EXPECT_EQ(hlo::ShapeToString(fusion.parameter(0)->shape()), "f32[16,32]{0,1}");
  EXPECT_EQ(hlo::ShapeToString(fusion.parameter(1)->shape()), "f32[32,16]{1,0:T(8,128)}");
  EXPECT_EQ(hlo::ShapeToString(fusion.root()->shape()), "f32[32,16]{1,0}");
  // The caller passes its parameters in the layouts the fusion now takes.
  const hlo::HloComputation& entry = *(*changed)->entry();
  EXPECT_EQ(hlo::ShapeToString(entry.parameter(0)->shape()), "f32[16,32]{0,1}");
  EXPECT_EQ(hlo::ShapeToString(entry.parameter(1)->shape()), "f32[32,16]{1,0:T(8,128)}");
  // The request's module is left as it was.
  EXPECT_EQ(hlo::ShapeToString(module->fusion()->parameter(0)->shape()), "f32[16,32]{1,0}");
  EXPECT_FALSE(WithLayouts(*module, {{"p0", "{0,0}"}}).has_value());
  EXPECT_FALSE(WithLayouts(*module, {{"p2", "{0,1}"}}).has_value());
  EXPECT_FALSE(WithLayouts(*module, {{"p0", 3}}).has_value());
}

TEST(LayoutsTest, TheSpaceHoldsEveryConfigUnderEveryLayout) {
  auto module = testing::LoadModule(testing::GeluPath());
  ASSERT_NE(module, nullptr);
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  auto fixed = BuildSpace(*module, host.info, {});
  auto free = BuildSpace(*module, host.info, {.parameters = {}, .outputs = {0}});
  ASSERT_TRUE(fixed.has_value() && free.has_value());
  EXPECT_EQ(free->variants.size(), 3u);  // {1,0}, {0,1}, {1,0:T(8,128)}
  EXPECT_EQ(free->candidates.size(), 3 * fixed->candidates.size());
  EXPECT_FALSE(fixed->candidates[0].config.contains(kLayoutsField));
  for (const Candidate& candidate : free->candidates) {
    ASSERT_TRUE(candidate.config.contains(kLayoutsField));
    EXPECT_EQ(EmitterConfig(candidate.config).contains(kLayoutsField), false);
  }
  const Candidate& default_candidate = free->candidates[free->default_index];
  EXPECT_EQ(default_candidate.config[kLayoutsField]["out0"], "{1,0}");
  EXPECT_EQ(default_candidate.variant, 0);
}

TEST(LayoutsTest, FreeParametersAndOutputsMultiplyTheSpace) {
  auto module = Parse(kCalledTranspose);
  ASSERT_NE(module, nullptr);
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  auto fixed = BuildSpace(*module, host.info, {});
  auto free = BuildSpace(*module, host.info, {.parameters = {0}, .outputs = {0}});
  ASSERT_TRUE(fixed.has_value()) << fixed.error().message;
  ASSERT_TRUE(free.has_value()) << free.error().message;
  EXPECT_EQ(free->variants.size(), 9u);  // 3 layouts of p0 times 3 of out0
  const Candidate& default_candidate = free->candidates[free->default_index];
  EXPECT_EQ(default_candidate.config[kLayoutsField],
            (nlohmann::json{{"p0", "{1,0}"}, {"out0", "{1,0}"}}));
  std::set<std::string> parameter_layouts;
  for (const LayoutVariant& variant : free->variants) {
    const hlo::Shape& p0 = variant.module->fusion()->parameter(0)->shape();
    EXPECT_EQ(hlo::LayoutToString(p0.layout()), variant.layouts["p0"].get<std::string>());
    parameter_layouts.insert(variant.layouts["p0"].get<std::string>());
  }
  EXPECT_EQ(parameter_layouts, (std::set<std::string>{"{1,0}", "{0,1}", "{1,0:T(8,128)}"}));
}

// Every layout of a transpose's parameter: the host kernel, given the same logical
// arguments, computes what the evaluator computes on the fusion as given.
TEST(LayoutsTest, AKernelReadsItsParameterInTheChosenLayout) {
  TS_SKIP_WITHOUT_CORPUS();
  auto module = testing::LoadModule(testing::TransposePath());
  ASSERT_NE(module, nullptr);
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  auto arguments = hlo::MakeRandomArguments(*module->fusion(), /*seed=*/3);
  ASSERT_TRUE(arguments.has_value()) << arguments.error().message;
  auto expected = hlo::Evaluate(*module->fusion(), *arguments);
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  std::vector<std::string> menu = LayoutMenu(module->fusion()->parameter(0)->shape());
  ASSERT_EQ(menu.size(), 7u);
  for (const std::string& layout : menu) {
    SCOPED_TRACE("p0 " + layout);
    auto variant = WithLayouts(*module, {{"p0", layout}});
    ASSERT_TRUE(variant.has_value()) << variant.error().message;
    analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*(*variant)->fusion());
    auto kernel = emitters::EmitKernel(analysis, nullptr, host.info);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    EXPECT_EQ(hlo::LayoutToString(kernel->buffers[0].shape.layout()), layout);
    auto compiled = codegen::CompileForHost(std::move(*kernel));
    ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
    auto outputs = (*compiled)->Run(*arguments);
    ASSERT_TRUE(outputs.has_value()) << outputs.error().message;
    ASSERT_EQ(outputs->size(), 1u);
    hlo::Comparison comparison = hlo::CompareLiterals((*outputs)[0], *expected, 0);
    EXPECT_TRUE(comparison.matches) << comparison.first_mismatch;
  }
}

Expected<TuneResult> TuneTranspose(db::Store* store, const FreeLayouts& free,
                                   int64_t evaluator_max_elements) {
  auto module = testing::LoadModule(testing::TransposePath());
  Device host = *ResolveDevice("host", "", DefaultDevicesDir());
  TuneOptions options;
  options.strategy = "random";
  options.seed = 7;
  options.budget = 10;
  options.free_layouts = free;
  options.evaluator_max_elements = evaluator_max_elements;
  options.measure.warmup_ms = 1;
  options.measure.budget_ms = 2;
  options.measure.flush_bytes = -1;
  options.worker_argv = testing::WorkerArgv(testing::TransposePath());
  return Tune(*module, host, store, "tilesmith-test", options);
}

// Every trial of `result` passed verification; returns the layouts `name` took.
std::set<std::string> VerifiedLayouts(db::Store* store, const TuneResult& result,
                                      const std::string& name) {
  std::set<std::string> layouts;
  auto trials = store->Measurements({result.fingerprint, result.device_key, "tilesmith-test"});
  EXPECT_TRUE(trials.has_value());
  if (!trials) return layouts;
  for (const db::MeasurementRecord& trial : *trials) {
    EXPECT_EQ(trial.status, db::TrialStatus::kOk) << trial.config.dump() << ": " << trial.message;
    layouts.insert(trial.config[kLayoutsField][name].get<std::string>());
  }
  return layouts;
}

TEST(LayoutsTest, ATuneOverLayoutsVerifiesEveryChoice) {
  TS_SKIP_WITHOUT_CORPUS();
  testing::TempDir dir;
  auto store = db::SqliteStore::Open(dir.path() + "/results.db");
  ASSERT_TRUE(store.has_value());
  auto result = TuneTranspose(store->get(), {.parameters = {}, .outputs = {0}}, int64_t{1} << 24);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->measured, 10);
  EXPECT_EQ(result->failed, 0);
  EXPECT_GE(VerifiedLayouts(store->get(), *result, "out0").size(), 3u);
}

// Checked against the first verified candidate rather than the evaluator (as large outputs
// are): every candidate must be fed the same logical values, whatever layout it reads
// them in, or the candidates after the first would differ from it.
TEST(LayoutsTest, ATuneOverParameterLayoutsFeedsEveryCandidateTheSameValues) {
  TS_SKIP_WITHOUT_CORPUS();
  testing::TempDir dir;
  auto store = db::SqliteStore::Open(dir.path() + "/results.db");
  ASSERT_TRUE(store.has_value());
  auto result =
      TuneTranspose(store->get(), {.parameters = {0}, .outputs = {}}, /*evaluator_max_elements=*/0);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  auto module = testing::LoadModule(testing::TransposePath());
  EXPECT_EQ(result->fingerprint, *hlo::FusionFingerprint(*module));
  EXPECT_EQ(result->measured, 10);
  EXPECT_EQ(result->failed, 0);
  EXPECT_GE(VerifiedLayouts(store->get(), *result, "p0").size(), 3u);
}

}  // namespace
}  // namespace tilesmith::tuner
