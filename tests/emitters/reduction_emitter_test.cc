// The reduction emitter: config validation, the space's pruning reasons, and splits refused
// where atomics cannot combine the parts. XLA's default launch for each variant (the spec's
// row example), shared partials, atomics of split reductions, and host runs of every
// variant, variadic reducers, inits that are not identities, epilogues, side outputs and
// partial tiles are data: tests/data/emitters/reduction/.
#include "compiler/emitters/reduction_emitter.h"

#include <gtest/gtest.h>

#include "tests/emitters/emitter_test_util.h"

namespace tilesmith::emitters {
namespace {

using testing::H100;
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

}  // namespace
}  // namespace tilesmith::emitters

namespace tilesmith::emitters {
namespace {

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
