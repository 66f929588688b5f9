// The XLA corpus folders of the concatenate, input slices, in-place dynamic-update-slice,
// scatter and reduction emitters, through the `tilesmith` binary: `analyze --json` names the
// folder's emitter and reduction variant (each exception says why), `compile` dispatches to that
// emitter (or to the loop fallback where none exists), and `check` passes on the host, also on a
// sample of configs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

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

// The reduction variant each reduce_* folder is named after.
const std::map<std::string, std::string>& FolderVariants() {
  static const std::map<std::string, std::string> variants = {
      {"reduce_row", "row"},
      {"reduce_multirow", "multi-row"},
      {"reduce_column", "column"},
      {"reduce_column_small", "small column"}};
  return variants;
}

// Reduction files whose variant differs from their folder's: XLA's own choice for them.
const std::map<std::string, std::string>& VariantExceptions() {
  static const std::map<std::string, std::string> exceptions = {
      // W = 4 divides the warp: XLA's small-column test (32 % W == 0) picks it, whatever the
      // folder the test was written in.
      {"reduce_column/small.hlo", "small column"},
      // A power-of-two row of 4 (2) elements fits a warp even at vector 1, so XLA's
      // multi-row emitter takes these; they test row-reduction regressions in XLA's suite.
      {"reduce_row/inefficient_codegen.hlo", "multi-row"},
      {"reduce_row/mof_variadic_variadic.hlo", "multi-row"},
      // Reduces the middle dim of f32[128,288,32]: the kept dims are not adjacent, so it
      // is a column reduction [128,288,32], and W = 32 divides the warp.
      {"reduce_row/reduction_groups_two_in_same_group.hlo", "small column"},
  };
  return exceptions;
}

// Files whose emitter differs from their folder's, and why.
const std::map<std::string, std::string>& Exceptions() {
  static const std::map<std::string, std::string> exceptions = {
      // The spec sends types narrower than 8 bits to the loop emitter (or input slices);
      // XLA has since taught these emitters packed types.
      {"concatenate/concat_s4.hlo", "loop"},
      {"scatter/scatter_s4_unique_indices.hlo", "loop"},
      {"reduce_row/side_output_s4.hlo", "loop"},
  };
  return exceptions;
}

// Scatters the scatter emitter leaves to the loop emitter's in-order kernel, and why
// (ScatterFallbackReason).
const std::map<std::string, std::string>& LoopKernels() {
  static const std::map<std::string, std::string> files = {
      // s8 add: no 8-bit atomics on every target, and the indices are not unique.
      {"scatter/scatter_s8.hlo", "loop"},
      // s32 multiply with non-unique indices: no atomic multiply; updates apply in order.
      {"scatter/sorted_indices_large.hlo", "loop"},
      // Two outputs combined by one reducer.
      {"scatter/variadic_scatter_simple.hlo", "loop"},
  };
  return files;
}

std::string KernelEmitter(const std::string& name, const std::string& kind) {
  auto loop = LoopKernels().find(name);
  return loop != LoopKernels().end() ? loop->second : kind;
}

TEST(EmitterCorpusTest, FoldersGetTheirEmitterAndCheckOnTheHost) {
  fs::path corpus = CorpusDir();
  if (corpus.empty()) GTEST_SKIP() << "no corpus (set TILESMITH_CORPUS_DIR)";
  int files = 0;
  for (std::string folder :
       {"concatenate", "input_slices", "dynamic_update_slice", "scatter", "reduce_row",
        "reduce_multirow", "reduce_column", "reduce_column_small"}) {
    // The corpus has no input_slices folder yet; its emitter is tested on written cases.
    if (!fs::is_directory(corpus / "xla" / folder)) continue;
    for (const auto& entry : fs::directory_iterator(corpus / "xla" / folder)) {
      if (entry.path().extension() != ".hlo") continue;
      std::string name = folder + "/" + entry.path().filename().string();
      std::string path = entry.path().string();
      auto exception = Exceptions().find(name);
      bool reduction = FolderVariants().count(folder) > 0;
      std::string kind = exception != Exceptions().end() ? exception->second
                         : reduction                     ? "reduction"
                                                         : folder;

      auto [analyze_code, analyze_out] = Tilesmith("analyze " + path + " --json");
      ASSERT_EQ(analyze_code, 0) << name;
      nlohmann::json analyzed = nlohmann::json::parse(analyze_out);
      EXPECT_EQ(analyzed["emitter"], kind) << name;
      if (kind == "reduction") {
        auto variant = VariantExceptions().find(name);
        EXPECT_EQ(analyzed["reduction"]["variant"], variant != VariantExceptions().end()
                                                        ? variant->second
                                                        : FolderVariants().at(folder))
            << name;
      }

      auto [compile_code, compile_out] =
          Tilesmith("compile " + path + " --target host --emit kernel-ir --json");
      ASSERT_EQ(compile_code, 0) << name;
      EXPECT_EQ(nlohmann::json::parse(compile_out)["emitter"], KernelEmitter(name, kind)) << name;

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
