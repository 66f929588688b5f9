// Runs every tests/data/eval/*.hlo case: the module's entry is evaluated (arguments come
// from `// ARG <n>: <literal>` lines) and its value compared with `// EXPECT: <literal>`.
// `// TOLERANCE: <relative>` allows a relative error for floats (default 0: bit-exact,
// with every NaN equal to every NaN). A new case is a new file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::hlo {
namespace {

struct EvalCase {
  std::string path;
  std::string text;
  std::string expect;
  std::map<int64_t, std::string> args;
  double tolerance = 0;
};

std::vector<EvalCase> LoadCases() {
  std::vector<EvalCase> cases;
  std::filesystem::path dir = std::filesystem::path(TILESMITH_TEST_DATA_DIR) / "eval";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".hlo") continue;
    EvalCase c;
    c.path = entry.path().string();
    std::ifstream file(entry.path());
    std::stringstream contents;
    contents << file.rdbuf();
    c.text = contents.str();
    std::istringstream lines(c.text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.starts_with("// EXPECT:")) {
        c.expect = line.substr(10);
      } else if (line.starts_with("// TOLERANCE:")) {
        c.tolerance = std::stod(line.substr(13));
      } else if (line.starts_with("// ARG ")) {
        size_t colon = line.find(':');
        c.args[std::stoll(line.substr(7, colon - 7))] = line.substr(colon + 1);
      }
    }
    cases.push_back(std::move(c));
  }
  std::sort(cases.begin(), cases.end(),
            [](const EvalCase& a, const EvalCase& b) { return a.path < b.path; });
  return cases;
}

// Element-by-element comparison that reports the first mismatch.
::testing::AssertionResult SameValue(const Literal& actual, const Literal& expected,
                                     double tolerance, const std::string& where = "") {
  if (!actual.shape().EqualsIgnoringLayout(expected.shape())) {
    return ::testing::AssertionFailure() << where << "shape " << ShapeToString(actual.shape())
                                         << " != " << ShapeToString(expected.shape());
  }
  if (actual.shape().IsTuple()) {
    for (size_t i = 0; i < actual.tuple_elements().size(); ++i) {
      auto result = SameValue(actual.tuple_elements()[i], expected.tuple_elements()[i], tolerance,
                              where + "tuple element " + std::to_string(i) + ": ");
      if (!result) return result;
    }
    return ::testing::AssertionSuccess();
  }
  PrimitiveType type = actual.element_type();
  for (int64_t i = 0; i < actual.element_count(); ++i) {
    bool same;
    if (IsFloatingPoint(type) || IsComplex(type)) {
      auto close = [&](double a, double e) {
        if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
        if (tolerance == 0) return a == e && std::signbit(a) == std::signbit(e);
        return a == e || std::fabs(a - e) <= tolerance * std::fabs(e);
      };
      std::complex<double> a = actual.GetComplex(i);
      std::complex<double> e = expected.GetComplex(i);
      same = close(a.real(), e.real()) && close(a.imag(), e.imag());
    } else {
      same = actual.GetInt(i) == expected.GetInt(i);
    }
    if (!same) {
      return ::testing::AssertionFailure()
             << where << "element " << i << " is " << ScalarToString(actual, i) << ", expected "
             << ScalarToString(expected, i) << "\n  actual:   " << actual.ToString()
             << "\n  expected: " << expected.ToString();
    }
  }
  return ::testing::AssertionSuccess();
}

class EvaluatorDataTest : public ::testing::TestWithParam<EvalCase> {};

TEST_P(EvaluatorDataTest, MatchesExpectation) {
  const EvalCase& c = GetParam();
  ASSERT_FALSE(c.expect.empty()) << c.path << " has no '// EXPECT:' line";
  auto module = ParseHloModule(c.text, c.path);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const HloComputation& entry = *(*module)->entry();
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry.parameter_count(); ++i) {
    ASSERT_TRUE(c.args.contains(i)) << c.path << " needs '// ARG " << i << ": <literal>'";
    auto arg = ParseLiteral(c.args.at(i), entry.parameter(i)->shape());
    ASSERT_TRUE(arg.has_value()) << arg.error().message;
    args.push_back(std::move(*arg));
  }
  auto result = Evaluate(entry, args);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  auto expected = ParseLiteral(c.expect, entry.root()->shape());
  ASSERT_TRUE(expected.has_value()) << c.path << ": bad EXPECT: " << expected.error().message;
  EXPECT_TRUE(SameValue(*result, *expected, c.tolerance)) << c.path;
}

INSTANTIATE_TEST_SUITE_P(Cases, EvaluatorDataTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<EvalCase>& info) {
                           std::string name = std::filesystem::path(info.param.path).stem();
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace tilesmith::hlo
