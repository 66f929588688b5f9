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
  return tuner::WorkerCommand(SelfPath(), path, device, input_flags);
}

bool CanTime(const tuner::Device& device, const tuner::CudaDriverProbe& driver) {
  return tuner::MakeBackend(device)->CanMeasure(driver);
}

bool TimedOnlyWithDevice(const tuner::Device& device) {
  return !tuner::MakeBackend(device)->MeasuresWithoutDevice();
}

std::string MeasureDefault(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string CompiledOnlyMessage(const tuner::TuneResult& result, const tuner::Device& device,
                                const tuner::CudaDriverProbe& driver) {
  return "compiled " + std::to_string(result.compiled) + " of " +
         std::to_string(result.compiled + result.compile_failed) + " candidates for " +
         device.target.ToString() +
         " (cubin + resource usage) and predicted their times; none was timed: " +
         (driver.loaded ? driver.message + " found, but no GPU to time on" : driver.message);
}

}  // namespace tilesmith::tools
