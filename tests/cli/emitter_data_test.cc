// Emitter tests as data: every tests/data/emitters/**/*.hlo file is one case whose leading
// `// KEY: value` comment lines say what `tilesmith analyze`, `compile` and `check` must show
// for it (the format is tests/data/emitters/README.md). A new case is a new file; this driver
// runs the real binary on each and names the file, the directive and the output it read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/cli_run.h"

namespace tilesmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path DataDir() { return fs::path(TILESMITH_TEST_DATA_DIR) / "emitters"; }

/// One `// KEY: value` line of a case, with its line number for messages.
struct Directive {
  std::string key;
  std::string value;
  int line = 0;
};

std::string Trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return "";
  size_t end = text.find_last_not_of(" \t\r");
  return std::string(text.substr(begin, end - begin + 1));
}

/// The directives of the file's leading comment block (blank lines and free comments allowed).
std::vector<Directive> ReadDirectives(const fs::path& path) {
  std::ifstream file(path);
  std::vector<Directive> directives;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    std::string text = Trim(line);
    if (text.empty()) continue;
    if (!text.starts_with("//")) break;
    text = Trim(std::string_view(text).substr(2));
    size_t colon = text.find(':');
    if (colon == std::string::npos || colon == 0) continue;
    std::string key = text.substr(0, colon);
    bool is_key = std::all_of(key.begin(), key.end(),
                              [](char c) { return (c >= 'A' && c <= 'Z') || c == '-'; });
    if (is_key) directives.push_back({key, Trim(std::string_view(text).substr(colon + 1)), number});
  }
  return directives;
}

const std::set<std::string>& KnownKeys() {
  static const std::set<std::string> keys = {
      "EMITTER",        "VARIANT",     "HERO",          "DEFAULT-CONFIG", "TARGET",
      "CONFIG",         "LAUNCH",      "CHECK",         "CHECK-NOT",      "CHECK-LLVM",
      "CHECK-LLVM-NOT", "CHECK-PTX",   "CHECK-PTX-NOT", "CHECK-ANALYZE",  "CHECK-ANALYZE-NOT",
      "SAMPLES",        "HOST-CONFIG", "NO-HOST-CHECK", "STATS"};
  return keys;
}

/// Every case file, relative to the data folder, sorted.
std::vector<std::string> CaseFiles() {
  std::vector<std::string> files;
  if (!fs::is_directory(DataDir())) return files;
  for (const auto& entry : fs::recursive_directory_iterator(DataDir())) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") {
      files.push_back(fs::relative(entry.path(), DataDir()).string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// `reduction/row_spec.hlo` -> `reduction_row_spec`.
std::string CaseName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).replace_extension().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// Where a directive's expectation failed: the file and line, the directive, the output read
/// (its first 12,000 characters).
std::string Where(const std::string& file, const Directive& d, const std::string& what,
                  const std::string& output) {
  constexpr size_t kShown = 12000;  // a PTX listing can be long
  std::string shown = output.size() <= kShown
                          ? output
                          : output.substr(0, kShown) + "\n… (" +
                                std::to_string(output.size() - kShown) + " more bytes)\n";
  return file + ":" + std::to_string(d.line) + ": // " + d.key + ": " + d.value + "\n  " + what +
         "\n--- output ---\n" + shown + "--- end ---";
}

/// FileCheck's core: each positive pattern is found after the previous one's match; a
/// negative pattern must not occur between the matches around it.
void MatchInOrder(const std::string& file, const std::vector<Directive>& checks,
                  const std::string& positive, const std::string& output) {
  size_t position = 0;
  std::vector<const Directive*> pending_not;
  auto check_nots = [&](size_t end) {
    for (const Directive* d : pending_not) {
      size_t found = output.find(d->value, position);
      EXPECT_TRUE(found == std::string::npos || found >= end)
          << Where(file, *d, "found where it must not be", output);
    }
    pending_not.clear();
  };
  for (const Directive& d : checks) {
    if (d.key != positive) {
      pending_not.push_back(&d);
      continue;
    }
    size_t found = output.find(d.value, position);
    if (found == std::string::npos) {
      ADD_FAILURE() << Where(
          file, d, position == 0 ? "not found" : "not found after the previous CHECK", output);
      return;
    }
    check_nots(found);
    position = found + d.value.size();
  }
  check_nots(std::string::npos);
}

class EmitterDataTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tilesmith_emitter_data_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs `tilesmith ARGS` on the case file; fails (naming the command) unless it exits 0.
  std::optional<std::string> Run(const std::string& arguments) {
    std::string path = (DataDir() / GetParam()).string();
    size_t space = arguments.find(' ');
    std::string command = arguments.substr(0, space) + " " + Quote(path) +
                          (space == std::string::npos ? "" : arguments.substr(space));
    cli_testing::CommandRun run = cli_testing::RunTilesmithIn(dir_, command);
    if (run.exit_code != 0) {
      ADD_FAILURE() << GetParam() << ": `tilesmith " << command << "` exited " << run.exit_code
                    << "\n--- stdout ---\n"
                    << run.out << "--- stderr ---\n"
                    << run.err;
      return std::nullopt;
    }
    return run.out;
  }

  fs::path dir_;
};

TEST_P(EmitterDataTest, MatchesItsDirectives) {
  const std::string& file = GetParam();
  std::vector<Directive> directives = ReadDirectives(DataDir() / file);
  std::map<std::string, std::vector<Directive>> by_key;
  for (const Directive& d : directives) {
    EXPECT_TRUE(KnownKeys().count(d.key)) << Where(file, d, "unknown directive", "");
    by_key[d.key].push_back(d);
  }
  auto has = [&](const std::string& key) { return by_key.count(key) > 0; };
  auto single = [&](const std::string& key, const std::string& fallback) {
    return has(key) ? by_key[key].back().value : fallback;
  };
  ASSERT_TRUE(has("EMITTER") || has("CHECK") || has("CHECK-PTX") || has("CHECK-LLVM") ||
              has("CHECK-ANALYZE") || has("LAUNCH") || has("STATS"))
      << file << ": no EMITTER, LAUNCH or CHECK directive: nothing would be checked";

  std::string target = single("TARGET", "host");
  std::string config = has("CONFIG") ? " --config " + Quote(single("CONFIG", "")) : "";
  // Directives of each output, in file order.
  auto of = [&](std::initializer_list<const char*> keys) {
    std::vector<Directive> selected;
    for (const Directive& d : directives) {
      for (const char* key : keys) {
        if (d.key == key) selected.push_back(d);
      }
    }
    return selected;
  };

  // analyze --json: the emitter, reduction variant, hero and default config.
  if (has("EMITTER") || has("VARIANT") || has("HERO") || has("DEFAULT-CONFIG")) {
    std::optional<std::string> out = Run("analyze --target " + target + " --json");
    ASSERT_TRUE(out.has_value());
    json analyzed = json::parse(*out);
    for (const Directive& d : of({"EMITTER", "VARIANT", "HERO"})) {
      json actual = d.key == "EMITTER"   ? analyzed["emitter"]
                    : d.key == "VARIANT" ? analyzed["reduction"]["variant"]
                                         : analyzed["hero"];
      EXPECT_EQ(actual, d.value) << Where(file, d, "analyze --json says " + actual.dump(), *out);
    }
    for (const Directive& d : of({"DEFAULT-CONFIG"})) {
      json expected = json::parse(d.value, nullptr, false);
      ASSERT_TRUE(expected.is_object()) << Where(file, d, "not a JSON object", "");
      for (const auto& [key, value] : expected.items()) {
        EXPECT_EQ(analyzed["default_config"][key], value) << Where(
            file, d, "default_config." + key + " is " + analyzed["default_config"][key].dump(),
            analyzed["default_config"].dump() + "\n");
      }
    }
  }
  if (has("CHECK-ANALYZE") || has("CHECK-ANALYZE-NOT")) {
    std::optional<std::string> out = Run("analyze --target " + target);
    ASSERT_TRUE(out.has_value());
    MatchInOrder(file, of({"CHECK-ANALYZE", "CHECK-ANALYZE-NOT"}), "CHECK-ANALYZE", *out);
  }

  // compile --emit kernel-ir: the launch line and CHECK lines.
  if (has("LAUNCH") || has("CHECK") || has("CHECK-NOT")) {
    std::optional<std::string> out =
        Run("compile --target " + target + config + " --emit kernel-ir");
    ASSERT_TRUE(out.has_value());
    for (const Directive& d : of({"LAUNCH"})) {
      size_t at = out->find("\n  launch: ");
      std::string launch = at == std::string::npos
                               ? "(no launch line)"
                               : Trim(out->substr(at + 11, out->find('\n', at + 1) - at - 11));
      EXPECT_EQ(launch, d.value) << Where(file, d, "launch: " + launch, *out);
    }
    MatchInOrder(file, of({"CHECK", "CHECK-NOT"}), "CHECK", *out);
  }
  if (has("CHECK-LLVM") || has("CHECK-LLVM-NOT")) {
    std::optional<std::string> out = Run("compile --target " + target + config + " --emit llvm");
    ASSERT_TRUE(out.has_value());
    MatchInOrder(file, of({"CHECK-LLVM", "CHECK-LLVM-NOT"}), "CHECK-LLVM", *out);
  }
  if (has("CHECK-PTX") || has("CHECK-PTX-NOT")) {
    std::string cuda = target.starts_with("cuda:") ? target : "cuda:sm_90";
    std::optional<std::string> out = Run("compile --target " + cuda + config + " --emit ptx");
    ASSERT_TRUE(out.has_value());
    MatchInOrder(file, of({"CHECK-PTX", "CHECK-PTX-NOT"}), "CHECK-PTX", *out);
  }

  // compile --emit stats --json on a CUDA target: the cubin's resources.
  for (const Directive& d : of({"STATS"})) {
    std::string cuda = target.starts_with("cuda:") ? target : "cuda:sm_90";
    std::optional<std::string> out =
        Run("compile --target " + cuda + config + " --emit stats --json");
    ASSERT_TRUE(out.has_value());
    json stats = json::parse(*out);
    json expected = json::parse(d.value, nullptr, false);
    ASSERT_TRUE(expected.is_object()) << Where(file, d, "not a JSON object", "");
    for (const auto& [key, value] : expected.items()) {
      EXPECT_EQ(stats[key], value) << Where(file, d, key + " is " + stats[key].dump(), *out);
    }
  }

  // check on the host: the default config, then the named and sampled ones.
  std::vector<std::string> checks;
  if (!has("NO-HOST-CHECK")) checks.push_back("default");
  for (const Directive& d : of({"HOST-CONFIG"})) checks.push_back(d.value);
  if (has("SAMPLES")) checks.push_back(single("SAMPLES", "0"));
  for (const std::string& configs : checks) {
    std::optional<std::string> out =
        Run("check --target host --configs " + Quote(configs) + " --json");
    if (!out) continue;
    json result = json::parse(*out);
    EXPECT_GT(result["checked"].get<int>(), 0) << file << ": check --configs " << configs;
    EXPECT_EQ(result["failed"], 0) << file << ": check --configs " << configs << "\n" << *out;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, EmitterDataTest, ::testing::ValuesIn(CaseFiles()), CaseName);

TEST(EmitterDataPresence, TheCasesAreFound) { EXPECT_GE(CaseFiles().size(), 60u); }

}  // namespace
}  // namespace tilesmith
