#include "tuner/cuda_driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace tilesmith::tuner {
namespace {

// The three driver entry points the probe needs; CUresult is an int-sized enum.
using CuInit = int (*)(unsigned int);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);

// The first line nvidia-smi prints for `query` about GPU 0, or "".
std::string NvidiaSmiLine(const std::string& query) {
  std::string command =
      "nvidia-smi --query-gpu=" + query + " --format=csv,noheader -i 0 2>/dev/null";
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[128];
    while (fgets(buffer, sizeof(buffer), pipe)) output += buffer;
    pclose(pipe);
  }
  output = output.substr(0, output.find('\n'));
  while (!output.empty() && std::isspace(static_cast<unsigned char>(output.back()))) {
    output.pop_back();
  }
  return output;
}

CudaDriverProbe Probe() {
  CudaDriverProbe probe;
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    probe.message = std::string("no CUDA driver on this machine (") +
                    (why ? why : "libcuda.so.1 not found") + ")";
    return probe;
  }
  auto init = reinterpret_cast<CuInit>(dlsym(library, "cuInit"));
  auto version = reinterpret_cast<CuDriverGetVersion>(dlsym(library, "cuDriverGetVersion"));
  auto count = reinterpret_cast<CuDeviceGetCount>(dlsym(library, "cuDeviceGetCount"));
  if (init == nullptr || version == nullptr || count == nullptr) {
    probe.message = "libcuda.so.1 lacks cuInit, cuDriverGetVersion or cuDeviceGetCount";
    return probe;
  }
  if (int error = init(0); error != 0) {
    // 34 is CUDA_ERROR_STUB_LIBRARY (the toolkit's link stub), 100 CUDA_ERROR_NO_DEVICE.
    probe.message = "the CUDA driver did not initialise (CUresult " + std::to_string(error) +
                    (error == 34    ? ": the toolkit's stub library, not a driver"
                     : error == 100 ? ": no CUDA-capable device"
                                    : "") +
                    ")";
    return probe;
  }
  version(&probe.driver_version);
  count(&probe.device_count);
  probe.loaded = true;
  probe.message = "CUDA driver " + std::to_string(probe.driver_version / 1000) + "." +
                  std::to_string(probe.driver_version % 1000 / 10) + " with " +
                  std::to_string(probe.device_count) + " GPU(s)";
  return probe;
}

}  // namespace

CudaDriverProbe ProbeCudaDriver() {
  static const CudaDriverProbe probe = Probe();
  return probe;
}

std::string GpuDriverVersion() {
  static const std::string version = []() -> std::string {
    CudaDriverProbe driver = ProbeCudaDriver();
    if (!driver.loaded || driver.device_count < 1) return "";
    std::string smi = NvidiaSmiLine("driver_version");
    if (!smi.empty() && std::isdigit(static_cast<unsigned char>(smi[0]))) return smi;
    return "CUDA " + std::to_string(driver.driver_version / 1000) + "." +
           std::to_string(driver.driver_version % 1000 / 10);
  }();
  return version;
}

Expected<std::string> GpuTargetOf(const std::string& target) {
  if (!target.starts_with("cuda:") || target.size() == 5 ||
      !std::all_of(target.begin() + 5, target.end(), [](char c) { return std::isdigit(c); })) {
    return target;
  }
  std::string ordinal = target.substr(5);
  if (ordinal != "0") {
    return InvalidArgument("target '" + target + "': candidates are timed on GPU 0; use cuda:0");
  }
  tuner::CudaDriverProbe driver = tuner::ProbeCudaDriver();
  if (driver.device_count < 1) {
    return InvalidArgument("target '" + target + "': no GPU here (" + driver.message +
                           "); name the architecture instead, e.g. cuda:sm_90");
  }
  std::string digits;
  for (char c : NvidiaSmiLine("compute_cap")) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  if (digits.size() < 2) {
    return InvalidArgument("target '" + target +
                           "': cannot read the GPU's architecture with nvidia-smi; name it "
                           "instead, e.g. cuda:sm_90");
  }
  return "cuda:sm_" + digits;
}

}  // namespace tilesmith::tuner
