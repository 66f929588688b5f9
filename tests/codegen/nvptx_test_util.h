// Helpers of the NVPTX tests: compile HLO text or a corpus file for a cuda target, and find
// the shared corpus. Tests that need the CUDA toolkit skip, saying so, when it is absent.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/cuda_toolkit.h"
#include "compiler/codegen/nvptx_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::codegen::testing {

/// A parsed module and its kernel compiled for NVPTX.
struct NvptxCompiled {
  std::unique_ptr<hlo::HloModule> module;
  emitters::KernelIR kernel;
  NvptxKernel compiled;
};

/// Parses `text`, emits its fusion with `config` (null: the default) for `target` and
/// compiles it up to `stage`.
inline Expected<NvptxCompiled> CompileHloForNvptx(std::string_view text,
                                                  NvptxStage stage = NvptxStage::kCubin,
                                                  const nlohmann::json& config = nullptr,
                                                  std::string_view target_name = "cuda:sm_90") {
  NvptxCompiled result;
  TS_ASSIGN_OR_RETURN(result.module, hlo::ParseHloModule(text, "test.hlo"));
  TS_ASSIGN_OR_RETURN(emitters::Target target, emitters::Target::Parse(target_name));
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(*result.module->fusion());
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(target);
  TS_ASSIGN_OR_RETURN(result.kernel, emitters::EmitKernel(analysis, config, device));
  TS_ASSIGN_OR_RETURN(result.compiled, CompileForNvptx(result.kernel, target, stage));
  return result;
}

/// The contents of a file of the repository.
inline std::string ReadSourceFile(const std::string& relative) {
  std::ifstream file(std::filesystem::path(TILESMITH_SOURCE_DIR) / relative);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

/// How many lines of `text` contain `needle`.
inline int CountLines(std::string_view text, std::string_view needle) {
  int count = 0;
  size_t pos = 0;
  while ((pos = text.find(needle, pos)) != std::string_view::npos) {
    ++count;
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) break;
  }
  return count;
}

/// $TILESMITH_CORPUS_DIR, else ../shared/corpus next to the repository; empty if neither has
/// an `xla` folder.
inline std::filesystem::path CorpusDir() {
  std::vector<std::filesystem::path> candidates;
  if (const char* env = std::getenv("TILESMITH_CORPUS_DIR")) candidates.emplace_back(env);
  candidates.emplace_back(TILESMITH_DEFAULT_CORPUS_DIR);
  for (const auto& candidate : candidates) {
    if (std::filesystem::is_directory(candidate / "xla")) return candidate;
  }
  return {};
}

/// Every `.hlo` file under the corpus's `xla` folder, sorted.
inline std::vector<std::string> XlaCorpusFiles() {
  std::vector<std::string> files;
  std::filesystem::path dir = CorpusDir();
  if (dir.empty()) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir / "xla")) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// The corpus files whose path contains one of `folders` (e.g. "/transpose/", "/reduce_").
inline std::vector<std::string> XlaCorpusFilesIn(std::initializer_list<const char*> folders) {
  std::vector<std::string> files;
  for (const std::string& file : XlaCorpusFiles()) {
    for (const char* folder : folders) {
      if (file.find(folder) != std::string::npos) {
        files.push_back(file);
        break;
      }
    }
  }
  return files;
}

/// `folder_stem` of a corpus path, as a test name.
inline std::string CorpusTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::filesystem::path path(info.param);
  std::string name = path.parent_path().filename().string() + "_" + path.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace tilesmith::codegen::testing

/// Skips the current test when libdevice is missing (no CUDA toolkit).
#define TS_SKIP_WITHOUT_CUDA_TOOLKIT()                                                        \
  if (!::tilesmith::codegen::CudaToolkitDir()) {                                              \
    GTEST_SKIP() << "no CUDA toolkit (libdevice) found: set TILESMITH_CUDA_DIR or CUDA_HOME"; \
  }

/// Skips the current test when cubins cannot be made (no nvJitLink, no ptxas).
#define TS_SKIP_WITHOUT_CUBINS()                                                            \
  TS_SKIP_WITHOUT_CUDA_TOOLKIT();                                                           \
  if (!::tilesmith::codegen::CanMakeCubins()) {                                             \
    GTEST_SKIP() << "cubins cannot be made here: neither nvJitLink nor ptxas is available"; \
  }
