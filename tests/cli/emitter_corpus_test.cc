// The XLA corpus folders of the concatenate, input slices, in-place dynamic-update-slice,
// scatter and reduction emitters, through the `tilesmith` binary: `analyze --json` names the
// emitter and reduction variant tests/data/emitters/corpus_expectations.txt gives the file or
// its folder (each exception says why there), `compile` dispatches to that emitter (or to the
// loop fallback where none exists), and `check` passes on the host, also on a sample of
// configs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace tilesmith {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() {
  if (const char* env = std::getenv("TILESMITH_CORPUS_DIR")) return env;
  for (fs::path candidate :
       {fs::path(TILESMITH_DEFAULT_CORPUS_DIR), fs::path("/work/shared/corpus")}) {
    if (fs::is_directory(candidate / "xla")) return candidate;
  }
  return {};
}

// Runs `tilesmith arguments`, stderr discarded; its exit code and stdout.
std::pair<int, std::string> Tilesmith(const std::string& arguments) {
  std::string command = std::string(TILESMITH_CLI) + " " + arguments + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

/// What analyze and compile must say for one corpus file or folder.
struct Expectation {
  std::string emitter;
  std::string variant;  // reductions only
  std::string kernel;   // compile's emitter where it differs (a fallback)
  int line = 0;
};

/// tests/data/emitters/corpus_expectations.txt: `FOLDER/: EMITTER [VARIANT]` and
/// `FOLDER/FILE.hlo: EMITTER [VARIANT] [kernel=K]` lines, keyed by what precedes the colon.
std::map<std::string, Expectation> ReadExpectations() {
  std::ifstream file(fs::path(TILESMITH_TEST_DATA_DIR) / "emitters" / "corpus_expectations.txt");
  std::map<std::string, Expectation> expectations;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    EXPECT_NE(colon, std::string::npos) << "corpus_expectations.txt:" << number << ": " << line;
    if (colon == std::string::npos) continue;
    Expectation expectation;
    expectation.line = number;
    std::istringstream words(line.substr(colon + 1));
    std::string word;
    words >> expectation.emitter;
    while (words >> word) {
      if (word.starts_with("kernel=")) {
        expectation.kernel = word.substr(7);
      } else {
        expectation.variant += (expectation.variant.empty() ? "" : " ") + word;
      }
    }
    if (expectation.kernel.empty()) expectation.kernel = expectation.emitter;
    expectations[line.substr(0, colon)] = expectation;
  }
  return expectations;
}

TEST(EmitterCorpusTest, FoldersGetTheirEmitterAndCheckOnTheHost) {
  fs::path corpus = CorpusDir();
  if (corpus.empty()) GTEST_SKIP() << "no corpus (set TILESMITH_CORPUS_DIR)";
  std::map<std::string, Expectation> expectations = ReadExpectations();
  ASSERT_FALSE(expectations.empty()) << "no corpus_expectations.txt";
  int files = 0;
  for (const auto& [key, folder_expectation] : expectations) {
    if (!key.ends_with("/")) {
      EXPECT_TRUE(fs::is_regular_file(corpus / "xla" / key))
          << "corpus_expectations.txt:" << folder_expectation.line << ": no corpus file " << key;
      continue;
    }
    std::string folder = key.substr(0, key.size() - 1);
    if (!fs::is_directory(corpus / "xla" / folder)) continue;
    for (const auto& entry : fs::directory_iterator(corpus / "xla" / folder)) {
      if (entry.path().extension() != ".hlo") continue;
      std::string name = folder + "/" + entry.path().filename().string();
      std::string path = entry.path().string();
      auto file_expectation = expectations.find(name);
      const Expectation& expected =
          file_expectation != expectations.end() ? file_expectation->second : folder_expectation;
      std::string where = name + " (corpus_expectations.txt:" + std::to_string(expected.line) + ")";

      auto [analyze_code, analyze_out] = Tilesmith("analyze " + path + " --json");
      ASSERT_EQ(analyze_code, 0) << name;
      nlohmann::json analyzed = nlohmann::json::parse(analyze_out);
      EXPECT_EQ(analyzed["emitter"], expected.emitter) << where;
      if (!expected.variant.empty()) {
        EXPECT_EQ(analyzed["reduction"]["variant"], expected.variant) << where;
      }

      auto [compile_code, compile_out] =
          Tilesmith("compile " + path + " --target host --emit kernel-ir --json");
      ASSERT_EQ(compile_code, 0) << name;
      EXPECT_EQ(nlohmann::json::parse(compile_out)["emitter"], expected.kernel) << where;

      auto [check_code, check_out] = Tilesmith("check " + path + " --target host --json");
      EXPECT_EQ(check_code, 0) << name << "\n" << check_out;

      if (folder == "dynamic_update_slice") {
        // `run` starts the aliased output from the parameter's contents: it moves data only,
        // so its outputs equal the evaluator's bit for bit.
        auto [run_code, run_out] = Tilesmith("run " + path + " --target host --json");
        auto [eval_code, eval_out] = Tilesmith("eval " + path + " --random --json");
        ASSERT_EQ(run_code, 0) << name;
        ASSERT_EQ(eval_code, 0) << name;
        nlohmann::json run = nlohmann::json::parse(run_out)["outputs"];
        nlohmann::json eval = nlohmann::json::parse(eval_out)["outputs"];
        ASSERT_EQ(run.size(), eval.size()) << name;
        for (size_t i = 0; i < run.size(); ++i) {
          EXPECT_EQ(run[i]["checksum"], eval[i]["checksum"]) << name << " output " << i;
        }
      }
      ++files;
    }
  }
  EXPECT_GE(files, 45);
}

TEST(EmitterCorpusTest, CheckSaysWhenItSampledTheSpace) {
  fs::path corpus = CorpusDir();
  if (corpus.empty()) GTEST_SKIP() << "no corpus (set TILESMITH_CORPUS_DIR)";
  std::string path = (corpus / "xla" / "dynamic_update_slice" / "out_of_bounds.hlo").string();
  auto [code, out] = Tilesmith("check " + path + " --target host --configs 3 --seed 5 --json");
  ASSERT_EQ(code, 0) << out;
  nlohmann::json result = nlohmann::json::parse(out);
  EXPECT_EQ(result["checked"], 3);
  EXPECT_EQ(result["sampled"], true);
  EXPECT_EQ(result["valid_configs"], 72);
  auto [text_code, text] = Tilesmith("check " + path + " --target host --configs 2");
  EXPECT_EQ(text_code, 0);
  EXPECT_EQ(text.rfind("sampled 2 of 72 valid configs", 0), 0u) << text;
}

}  // namespace
}  // namespace tilesmith
