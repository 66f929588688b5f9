#include "compiler/codegen/nvptx_cubin.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "compiler/codegen/cuda_toolkit.h"

#ifdef TILESMITH_HAVE_NVJITLINK
#include <nvJitLink.h>
#endif

extern char** environ;

namespace tilesmith::codegen {
namespace {

namespace fs = std::filesystem;

// The number written just before `pos` in `line` ("… 24 bytes smem": pos at " bytes").
std::optional<int64_t> NumberBefore(std::string_view line, size_t pos) {
  size_t begin = pos;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == pos) return std::nullopt;
  int64_t value = 0;
  std::from_chars(line.data() + begin, line.data() + pos, value);
  return value;
}

// The largest number written before an occurrence of `key` in `line` whose next character
// is not a letter (so " stack" does not match " stack frame" … but " stack," does).
void TakeMax(std::string_view line, std::string_view key, int64_t& field, bool whole_word = false) {
  for (size_t pos = line.find(key); pos != std::string_view::npos; pos = line.find(key, pos + 1)) {
    size_t after = pos + key.size();
    if (whole_word && after < line.size() && line[after] == ' ') continue;
    if (std::optional<int64_t> value = NumberBefore(line, pos)) field = std::max(field, *value);
  }
}

// The kernel a report line starts describing, if any: `Compiling entry function 'k' for
// 'sm_90'`, `Function properties for k`, `Function properties for 'k':`.
std::optional<std::string_view> SubjectOf(std::string_view line) {
  for (std::string_view marker : {"Compiling entry function ", "Function properties for "}) {
    size_t pos = line.find(marker);
    if (pos == std::string_view::npos) continue;
    std::string_view rest = line.substr(pos + marker.size());
    while (!rest.empty() && (rest.back() == ':' || rest.back() == ' ' || rest.back() == '\r')) {
      rest.remove_suffix(1);
    }
    if (rest.starts_with('\'')) {
      rest.remove_prefix(1);
      rest = rest.substr(0, rest.find('\''));
    }
    return rest;
  }
  return std::nullopt;
}

#ifdef TILESMITH_HAVE_NVJITLINK
std::string NvJitLinkLog(nvJitLinkHandle handle, bool errors) {
  size_t size = 0;
  if ((errors ? nvJitLinkGetErrorLogSize(handle, &size) : nvJitLinkGetInfoLogSize(handle, &size)) !=
          NVJITLINK_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string log(size, '\0');
  if (errors) {
    nvJitLinkGetErrorLog(handle, log.data());
  } else {
    nvJitLinkGetInfoLog(handle, log.data());
  }
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

Expected<Cubin> CompileWithNvJitLink(std::string_view ptx, int sm_version) {
  std::string arch = "-arch=sm_" + std::to_string(sm_version);
  const char* options[] = {arch.c_str(), "-O3", "-verbose"};
  nvJitLinkHandle handle = nullptr;
  nvJitLinkResult result = nvJitLinkCreate(&handle, 3, options);
  if (result != NVJITLINK_SUCCESS) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "nvJitLinkCreate failed (" + std::to_string(result) + ") for " + arch);
  }
  struct Destroy {
    nvJitLinkHandle& handle;
    ~Destroy() { nvJitLinkDestroy(&handle); }
  } destroy{handle};
  result = nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "kernel.ptx");
  if (result == NVJITLINK_SUCCESS) result = nvJitLinkComplete(handle);
  if (result != NVJITLINK_SUCCESS) {
    return MakeError(ErrorCode::kInternal, "nvJitLink failed (" + std::to_string(result) +
                                               "): " + NvJitLinkLog(handle, true));
  }
  size_t size = 0;
  if (nvJitLinkGetLinkedCubinSize(handle, &size) != NVJITLINK_SUCCESS || size == 0) {
    return MakeError(ErrorCode::kInternal, "nvJitLink produced no cubin");
  }
  Cubin cubin;
  cubin.bytes.resize(size);
  if (nvJitLinkGetLinkedCubin(handle, cubin.bytes.data()) != NVJITLINK_SUCCESS) {
    return MakeError(ErrorCode::kInternal, "nvJitLink could not return the cubin");
  }
  unsigned major = 0, minor = 0;
  nvJitLinkVersion(&major, &minor);
  cubin.compiler = "nvJitLink " + std::to_string(major) + "." + std::to_string(minor);
  cubin.info_log = NvJitLinkLog(handle, false);
  return cubin;
}
#endif

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

// A private scratch directory, removed with everything in it when this goes away.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::error_code error;
    fs::path base = fs::temp_directory_path(error);
    if (error) base = "/tmp";
    std::string pattern = (base / "tilesmith-ptxas-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path = pattern;
  }
  ~ScratchDir() {
    std::error_code error;
    if (!path.empty()) fs::remove_all(path, error);
  }
};

Expected<Cubin> CompileWithPtxas(std::string_view ptx, int sm_version) {
  TS_ASSIGN_OR_RETURN(fs::path ptxas, PtxasPath());
  ScratchDir scratch;
  if (scratch.path.empty()) return MakeError(ErrorCode::kIo, "cannot create a scratch directory");
  fs::path input = scratch.path / "kernel.ptx";
  fs::path output = scratch.path / "kernel.cubin";
  fs::path log = scratch.path / "ptxas.log";
  {
    std::ofstream file(input, std::ios::binary);
    file.write(ptx.data(), static_cast<std::streamsize>(ptx.size()));
    if (!file) return MakeError(ErrorCode::kIo, "cannot write " + input.string());
  }
  std::vector<std::string> words = {
      ptxas.string(), "-arch=sm_" + std::to_string(sm_version), "-O3", "-v", input.string(), "-o",
      output.string()};
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return MakeError(ErrorCode::kFailedPrecondition, "cannot run " + words[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string report = ReadFile(log);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return MakeError(ErrorCode::kInternal, "ptxas failed: " + report);
  }
  Cubin cubin;
  cubin.bytes = ReadFile(output);
  if (cubin.bytes.empty()) return MakeError(ErrorCode::kInternal, "ptxas wrote no cubin");
  cubin.compiler = words[0];
  cubin.info_log = std::move(report);
  return cubin;
}

}  // namespace

Expected<ResourceUsage> ParsePtxasReport(std::string_view report, std::string_view entry) {
  ResourceUsage usage;
  bool in_entry = false;
  bool found = false;
  int64_t ptxas_shared = -1;
  int64_t linker_shared = -1;
  while (!report.empty()) {
    size_t newline = report.find('\n');
    std::string_view line = report.substr(0, newline);
    report = newline == std::string_view::npos ? std::string_view() : report.substr(newline + 1);
    if (std::optional<std::string_view> subject = SubjectOf(line)) in_entry = *subject == entry;
    if (!in_entry) continue;
    int64_t registers = -1;
    TakeMax(line, " registers", registers);
    if (registers >= 0) {
      found = true;
      usage.registers = std::max(usage.registers, registers);
    }
    TakeMax(line, " bytes stack frame", usage.stack_bytes);
    TakeMax(line, " stack", usage.stack_bytes, /*whole_word=*/true);
    TakeMax(line, " bytes spill stores", usage.spill_store_bytes);
    TakeMax(line, " bytes spill loads", usage.spill_load_bytes);
    // nvJitLink's own summary adds the 1 KiB per block that sm_80+ reserve for the system
    // whenever a kernel uses shared memory; the kernel's allocation (what XLA and the CUDA
    // occupancy calculator, like our GPU model, count before adding that reserve) is
    // ptxas's figure.
    TakeMax(line, " bytes smem", line.starts_with("ptxas") ? ptxas_shared : linker_shared);
    TakeMax(line, " bytes lmem", usage.local_bytes);
    TakeMax(line, " bytes cmem[0]", usage.constant_bytes);
  }
  if (!found) {
    return MakeError(ErrorCode::kNotFound,
                     "the ptxas report has no register count for '" + std::string(entry) + "'");
  }
  usage.shared_bytes = std::max<int64_t>(0, ptxas_shared >= 0 ? ptxas_shared : linker_shared);
  return usage;
}

Expected<Cubin> CompilePtxToCubin(std::string_view ptx, int sm_version, std::string_view entry,
                                  CubinTool tool) {
  Expected<Cubin> cubin = MakeError(ErrorCode::kFailedPrecondition, "nvJitLink is not linked in");
#ifdef TILESMITH_HAVE_NVJITLINK
  if (tool != CubinTool::kPtxas) cubin = CompileWithNvJitLink(ptx, sm_version);
#endif
  if (tool == CubinTool::kPtxas) {
    cubin = CompileWithPtxas(ptx, sm_version);
  } else if (!cubin && tool == CubinTool::kAuto) {
    Expected<Cubin> fallback = CompileWithPtxas(ptx, sm_version);
    if (!fallback) {
      return MakeError(cubin.error().code,
                       cubin.error().message + "; ptxas fallback: " + fallback.error().message);
    }
    cubin = std::move(fallback);
  }
  if (!cubin) return std::unexpected(cubin.error());
  TS_ASSIGN_OR_RETURN(cubin->usage, ParsePtxasReport(cubin->info_log, entry));
  return cubin;
}

}  // namespace tilesmith::codegen
