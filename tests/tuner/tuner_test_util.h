// Shared helpers of the tuner tests: fusions from files, temp dirs, the worker command.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"

namespace tilesmith::tuner::testing {

inline std::string CorpusDir() {
  const char* dir = std::getenv("TILESMITH_CORPUS_DIR");
  return dir && *dir ? dir : TILESMITH_DEFAULT_CORPUS_DIR;
}

/// Skips the current test where the shared corpus is not checked out beside the repo.
#define TS_SKIP_WITHOUT_CORPUS()                                                   \
  if (!std::filesystem::exists(::tilesmith::tuner::testing::CorpusDir() + "/xla")) \
  GTEST_SKIP() << "no corpus at " << ::tilesmith::tuner::testing::CorpusDir()      \
               << " (set TILESMITH_CORPUS_DIR)"

/// The small fusions the tuner is tested on: GELU f32 (ours), and a transpose, a row
/// reduction and a column reduction read from the shared XLA corpus in place.
inline std::string GeluPath() { return TILESMITH_TEST_DATA_DIR "/tuner/gelu_f32.hlo"; }
inline std::string TransposePath() { return CorpusDir() + "/xla/transpose/transpose_021.hlo"; }
inline std::string RowReductionPath() { return CorpusDir() + "/xla/reduce_row/small_s32.hlo"; }
inline std::string ColumnReductionPath() { return CorpusDir() + "/xla/reduce_column/small.hlo"; }
/// A dynamic-update-slice: its output is updated in place, so it must start as the input.
inline std::string InPlaceUpdatePath() {
  return CorpusDir() + "/xla/dynamic_update_slice/out_of_bounds.hlo";
}

inline std::unique_ptr<hlo::HloModule> LoadModule(const std::string& path) {
  auto module = hlo::ParseHloModuleFile(path);
  EXPECT_TRUE(module.has_value()) << path << ": " << (module ? "" : module.error().message);
  return module ? std::move(*module) : nullptr;
}

/// A fresh directory under the system temp dir, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tilesmith-tuner-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// `tilesmith worker FILE`: the real worker process the measurer starts.
inline std::vector<std::string> WorkerArgv(const std::string& fusion_path) {
  return {TILESMITH_CLI, "--log-level", "error", "worker", fusion_path};
}

}  // namespace tilesmith::tuner::testing
