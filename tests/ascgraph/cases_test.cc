// The examples of configs/examples/ascgraph/ and one small graph per op and memory feature
// (tests/data/ascgraph/ops/): each is read, lowered, printed as HLO (a fixed point) and
// evaluated on the inputs in tests/data/ascgraph/, and its outputs compared with the
// NumPy-computed expectations there (written by tests/tools/gen_ascgraph_cases.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/ascgraph/lower.h"
#include "compiler/ascgraph/reader.h"
#include "compiler/hlo/canonical.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/npy.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "tests/ascgraph/test_util.h"

namespace tilesmith::ascgraph {
namespace {

using testing::SourcePath;

struct Case {
  std::string name;
  nlohmann::json spec;
};

std::vector<Case> LoadCases() {
  std::ifstream file(SourcePath("tests/data/ascgraph/cases.json"));
  std::vector<Case> cases;
  if (!file) return cases;
  for (const nlohmann::json& spec : nlohmann::json::parse(file)) {
    cases.push_back({spec["name"].get<std::string>(), spec});
  }
  return cases;
}

class AscGraphCaseTest : public ::testing::TestWithParam<Case> {};

TEST_P(AscGraphCaseTest, LowersAndMatchesNumPy) {
  const nlohmann::json& spec = GetParam().spec;
  ReadOptions options;
  for (const auto& [name, value] : spec["sizes"].items())
    options.sizes[name] = value.get<int64_t>();
  std::string path = SourcePath(spec["graph"].get<std::string>());
  auto request = ReadRequestFile(path, options);
  ASSERT_TRUE(request.has_value()) << request.error().message;
  auto module = LowerToHlo(*request);
  ASSERT_TRUE(module.has_value()) << module.error().message << "\n"
                                  << LowerToHloText(*request).value_or("");

  // The lowered module prints as HLO text that parses back to the same text.
  std::string text = hlo::PrintModule(**module);
  auto reparsed = hlo::ParseHloModule(text, "printed");
  ASSERT_TRUE(reparsed.has_value()) << reparsed.error().message << "\n" << text;
  EXPECT_EQ(hlo::PrintModule(**reparsed), text);
  EXPECT_EQ(*hlo::FusionFingerprint(**reparsed), *hlo::FusionFingerprint(**module));

  const hlo::HloComputation& fusion = *(*module)->fusion();
  if (spec.contains("root_shape")) {
    EXPECT_EQ(hlo::ShapeToString(fusion.root()->shape()), spec["root_shape"]);
  }
  if (spec.contains("parameter_shape")) {
    EXPECT_EQ(hlo::ShapeToString(fusion.parameter(0)->shape()), spec["parameter_shape"]);
  }
  ASSERT_EQ(fusion.parameter_count(), static_cast<int64_t>(spec["inputs"].size())) << text;
  std::vector<hlo::Literal> arguments;
  for (int64_t i = 0; i < fusion.parameter_count(); ++i) {
    auto argument = hlo::ReadNpy(SourcePath(spec["inputs"][i].get<std::string>()),
                                 fusion.parameter(i)->shape());
    ASSERT_TRUE(argument.has_value()) << argument.error().message;
    arguments.push_back(std::move(*argument));
  }
  auto result = hlo::Evaluate(fusion, arguments);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  std::vector<const hlo::Literal*> outputs;
  testing::Flatten(*result, outputs);
  ASSERT_EQ(outputs.size(), spec["outputs"].size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i) + " " + hlo::ShapeToString(outputs[i]->shape()));
    auto expected =
        hlo::ReadNpy(SourcePath(spec["outputs"][i].get<std::string>()), outputs[i]->shape());
    ASSERT_TRUE(expected.has_value()) << expected.error().message;
    testing::ExpectNear(*outputs[i], *expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, AscGraphCaseTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(AscGraphCasesTest, EveryExampleHasACase) {
  std::set<std::string> covered;
  for (const Case& c : LoadCases()) covered.insert(c.spec["graph"].get<std::string>());
  ASSERT_FALSE(covered.empty()) << "tests/data/ascgraph/cases.json is missing";
  int examples = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(SourcePath("configs/examples/ascgraph"))) {
    std::string relative = "configs/examples/ascgraph/" + entry.path().filename().string();
    EXPECT_TRUE(covered.contains(relative)) << relative << " has no case in cases.json";
    ++examples;
  }
  EXPECT_GE(examples, 6);
}

}  // namespace
}  // namespace tilesmith::ascgraph
