// Bad graphs give errors that name the node (or axis) and the field. Each file in
// tests/data/ascgraph/invalid/ is one case; its header says what must appear in the error:
//   # error: <text the message contains>     (one or more)
//   # code: unimplemented                    (default: invalid argument)
//   # sizes: s0=4                            (size bindings, as --sizes)
// A new case is a new file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ascgraph/lower.h"
#include "compiler/ascgraph/reader.h"
#include "tests/ascgraph/test_util.h"

namespace tilesmith::ascgraph {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> InvalidFiles() {
  std::vector<std::string> files;
  fs::path folder = testing::SourcePath("tests/data/ascgraph/invalid");
  if (!fs::exists(folder)) return files;
  for (const auto& entry : fs::directory_iterator(folder)) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

class InvalidGraphTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InvalidGraphTest, FailsWithTheExpectedMessage) {
  std::ifstream file(GetParam());
  std::vector<std::string> expected;
  std::string code = "invalid argument";
  ReadOptions options;
  for (std::string line; std::getline(file, line) && line.starts_with("#");) {
    if (line.starts_with("# error: ")) expected.push_back(line.substr(9));
    if (line.starts_with("# code: ")) code = line.substr(8);
    if (line.starts_with("# sizes: ")) options.sizes = *ParseSizeBindings(line.substr(9));
  }
  ASSERT_FALSE(expected.empty()) << "no '# error:' line";
  // Reading, validating or lowering must fail; which one depends on the problem.
  Error error;
  auto request = ReadRequestFile(GetParam(), options);
  if (!request) {
    error = request.error();
  } else {
    auto module = LowerToHlo(*request);
    ASSERT_FALSE(module.has_value()) << "lowered without error";
    error = module.error();
  }
  for (const std::string& text : expected) {
    EXPECT_NE(error.message.find(text), std::string::npos)
        << "message: " << error.message << "\nexpected to contain: " << text;
  }
  EXPECT_EQ(ErrorCodeName(error.code), code) << error.message;
}

INSTANTIATE_TEST_SUITE_P(Files, InvalidGraphTest, ::testing::ValuesIn(InvalidFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return fs::path(info.param).stem().stem().string();
                         });

}  // namespace
}  // namespace tilesmith::ascgraph
