// Every evaluator data case (tests/data/eval/*.hlo) compiled for the host through the
// default emitter and run: the kernel must produce what the evaluator produces. This is the
// elemental emitter's coverage test: a new evaluator case is a new codegen case too.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/parser.h"
#include "tests/codegen/host_check.h"

namespace tilesmith::codegen {
namespace {

namespace fs = std::filesystem;

std::vector<DataCase> LoadCases() {
  std::vector<DataCase> cases;
  for (const auto& entry : fs::directory_iterator(fs::path(TILESMITH_TEST_DATA_DIR) / "eval")) {
    if (entry.path().extension() == ".hlo") cases.push_back(LoadDataCase(entry.path()));
  }
  std::sort(cases.begin(), cases.end(),
            [](const DataCase& a, const DataCase& b) { return a.path < b.path; });
  return cases;
}

class HostDataTest : public ::testing::TestWithParam<DataCase> {};

TEST_P(HostDataTest, KernelMatchesEvaluator) {
  const DataCase& c = GetParam();
  auto module = hlo::ParseHloModule(c.text, c.path);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  auto args = DataCaseArguments(c, fusion);
  ASSERT_TRUE(args.has_value()) << args.error().message;
  auto expected = hlo::Evaluate(fusion, *args);
  if (!expected) GTEST_SKIP() << "the evaluator rejects this case: " << expected.error().message;
  auto comparisons = CheckOnHost(fusion, *args, *expected);
  ASSERT_TRUE(comparisons.has_value()) << comparisons.error().message;
  for (size_t i = 0; i < comparisons->size(); ++i) {
    EXPECT_TRUE((*comparisons)[i].matches)
        << c.path << " output " << i << ": " << (*comparisons)[i].first_mismatch;
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
