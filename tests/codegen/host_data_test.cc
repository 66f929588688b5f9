// Every evaluator data case (tests/data/eval/*.hlo) compiled for the host through the
// default emitter and run: the kernel must produce what the evaluator produces. This is the
// elemental emitter's coverage test: a new evaluator case is a new codegen case too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/host_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/literal_compare.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::codegen {
namespace {

namespace fs = std::filesystem;

struct DataCase {
  std::string path;
  std::string text;
  std::map<int64_t, std::string> args;
};

std::vector<DataCase> LoadCases() {
  std::vector<DataCase> cases;
  for (const auto& entry : fs::directory_iterator(fs::path(TILESMITH_TEST_DATA_DIR) / "eval")) {
    if (entry.path().extension() != ".hlo") continue;
    DataCase c{entry.path().string(), "", {}};
    std::ifstream file(entry.path());
    std::stringstream contents;
    contents << file.rdbuf();
    c.text = contents.str();
    std::istringstream lines(c.text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.starts_with("// ARG ")) {
        size_t colon = line.find(':');
        c.args[std::stoll(line.substr(7, colon - 7))] = line.substr(colon + 1);
      }
    }
    cases.push_back(std::move(c));
  }
  std::sort(cases.begin(), cases.end(), [](const DataCase& a, const DataCase& b) { return a.path < b.path; });
  return cases;
}

void Flatten(const hlo::Literal& value, std::vector<const hlo::Literal*>& out) {
  if (value.shape().IsTuple()) {
    for (const hlo::Literal& element : value.tuple_elements()) Flatten(element, out);
  } else {
    out.push_back(&value);
  }
}

class HostDataTest : public ::testing::TestWithParam<DataCase> {};

TEST_P(HostDataTest, KernelMatchesEvaluator) {
  const DataCase& c = GetParam();
  auto module = hlo::ParseHloModule(c.text, c.path);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  std::vector<hlo::Literal> args;
  for (int64_t i = 0; i < fusion.parameter_count(); ++i) {
    auto arg = hlo::ParseLiteral(c.args.at(i), fusion.parameter(i)->shape());
    ASSERT_TRUE(arg.has_value()) << arg.error().message;
    args.push_back(std::move(*arg));
  }
  auto expected = hlo::Evaluate(fusion, args);
  if (!expected) GTEST_SKIP() << "the evaluator rejects this case: " << expected.error().message;
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  auto kernel = emitters::EmitKernel(analysis, nullptr, device);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  auto compiled = CompileForHost(std::move(*kernel));
  ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
  auto outputs = (*compiled)->Run(args);
  ASSERT_TRUE(outputs.has_value()) << outputs.error().message;
  std::vector<const hlo::Literal*> leaves;
  Flatten(*expected, leaves);
  ASSERT_EQ(outputs->size(), leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    hlo::Comparison comparison = hlo::CompareLiterals((*outputs)[i], *leaves[i]);
    EXPECT_TRUE(comparison.matches) << c.path << " output " << i << ": " << comparison.first_mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(Eval, HostDataTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<DataCase>& info) {
                           std::string name = fs::path(info.param.path).stem();
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace tilesmith::codegen
