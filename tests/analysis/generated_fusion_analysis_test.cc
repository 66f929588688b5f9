// Generated fusions (compiler/hlo/fusion_generator.h) as the analysis sees them: each gets
// the emitter its pattern was built for, and together they reach every emitter the
// analysis chooses between and both kinds of reduction.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/hlo/fusion_generator.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::analysis {
namespace {

std::string_view ExpectedEmitter(std::string_view pattern) {
  static const std::map<std::string_view, std::string_view> kEmitters = {
      {"loop", "loop"},
      {"broadcast", "loop"},
      {"slice", "loop"},
      {"reduce_window", "loop"},
      {"input_slices", "input_slices"},
      {"concatenate", "concatenate"},
      {"transpose", "transpose"},
      {"row_reduction", "reduction"},
      {"column_reduction", "reduction"},
      {"dynamic_update_slice", "dynamic_update_slice"},
      {"scatter", "scatter"}};
  auto it = kEmitters.find(pattern);
  return it == kEmitters.end() ? "" : it->second;
}

TEST(GeneratedFusionAnalysisTest, EachFusionGetsTheEmitterOfItsPattern) {
  std::set<std::string_view> emitters;
  std::set<std::string> variants;
  for (uint64_t seed : {1, 2, 3}) {
    for (int64_t index = 0; index < 300; ++index) {
      hlo::GeneratedFusion fusion = hlo::GenerateFusion(seed, index);
      SCOPED_TRACE(fusion.text);
      auto module = hlo::ParseHloModule(fusion.text);
      ASSERT_TRUE(module.has_value()) << module.error().message;
      FusionAnalysis analysis = AnalyzeFusion(*(*module)->fusion());
      ASSERT_FALSE(ExpectedEmitter(fusion.pattern).empty()) << fusion.pattern;
      EXPECT_EQ(analysis.emitter, ExpectedEmitter(fusion.pattern)) << analysis.reason;
      emitters.insert(analysis.emitter);
      if (analysis.reduction) {
        EXPECT_EQ(analysis.reduction->is_row_reduction, fusion.pattern == "row_reduction");
        variants.insert(std::string(ReductionVariantName(analysis.reduction_variant)));
      }
      if (analysis.transpose) {
        variants.insert(analysis.transpose->keeps_minor_dimension ? "transpose keeping minor"
                                                                  : "transpose");
      }
    }
  }
  EXPECT_EQ(emitters,
            (std::set<std::string_view>{"loop", "input_slices", "concatenate", "transpose",
                                        "reduction", "dynamic_update_slice", "scatter"}));
  EXPECT_EQ(variants, (std::set<std::string>{"row", "multi-row", "column", "small column",
                                             "transpose", "transpose keeping minor"}));
}

}  // namespace
}  // namespace tilesmith::analysis
