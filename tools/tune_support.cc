#include "tools/tune_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace tilesmith::tools {

std::string SelfPath() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return length > 0 ? std::string(path, length) : "tilesmith";
}

std::string Micros(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", value);
  return text;
}

std::string ResolveDbPath(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* from_environment = std::getenv("TILESMITH_DB");
  return from_environment && *from_environment ? from_environment : "tilesmith.db";
}

std::vector<std::string> WorkerArgv(const std::string& path, const tuner::Device& device,
                                    const std::vector<std::string>& input_flags) {
  std::vector<std::string> argv = {
      SelfPath(), "--log-level", "warning", "worker", path, "--target", device.target.ToString(),
      "--device", device.id};
  argv.insert(argv.end(), input_flags.begin(), input_flags.end());
  return argv;
}

bool CanTime(const tuner::Device& device, const tuner::CudaDriverProbe& driver) {
  return !device.target.is_cuda() || (driver.loaded && driver.device_count > 0);
}

std::string CompiledOnlyMessage(const tuner::TuneResult& result, const tuner::Device& device,
                                const tuner::CudaDriverProbe& driver) {
  return "compiled " + std::to_string(result.compiled) + " of " +
         std::to_string(result.compiled + result.compile_failed) + " candidates for " +
         device.target.ToString() +
         " (cubin + resource usage) and predicted their times; none was timed: " +
         (driver.loaded ? driver.message + " found, but no GPU to time on" : driver.message);
}

nlohmann::json SummaryJson(const std::optional<tuner::TrialSummary>& summary) {
  if (!summary) return nullptr;
  return {{"config", summary->config},
          {"median_us", summary->median_us},
          {"p20_us", summary->p20_us},
          {"p80_us", summary->p80_us}};
}

}  // namespace tilesmith::tools
