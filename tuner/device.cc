#include "tuner/device.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "compiler/codegen/cuda_toolkit.h"
#include "compiler/codegen/host_backend.h"
#include "support/exe_path.h"
#include "tuner/cuda_driver.h"

namespace tilesmith::tuner {
namespace {

namespace fs = std::filesystem;

// The first line of a /proc or /sys file, or "".
std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "32768K", "1M", "524288" as bytes; 0 when unreadable.
int64_t ParseCacheSize(const std::string& text) {
  if (text.empty()) return 0;
  char* end = nullptr;
  int64_t value = std::strtoll(text.c_str(), &end, 10);
  if (*end == 'K') value *= 1024;
  if (*end == 'M') value *= 1024 * 1024;
  return value;
}

// The largest cache /sys lists for cpu0: the last level.
int64_t HostLastLevelCacheBytes() {
  int64_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    largest = std::max(largest, ParseCacheSize(ReadFirstLine(base + "/size")));
  }
  return largest;
}

std::string HostModelName() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("model name")) {
      std::string name = line.substr(line.find(':') + 1);
      name.erase(0, name.find_first_not_of(' '));
      return name;
    }
  }
  return "";
}

// Device keys must be stable between runs, so the host clock is the nominal maximum from
// cpufreq, never the current (scaled) frequency /proc/cpuinfo shows.
int64_t HostMaxClockMhz() {
  std::string khz = ReadFirstLine("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  return khz.empty() ? 0 : std::strtoll(khz.c_str(), nullptr, 10) / 1000;
}

template <typename T>
Status ReadField(const nlohmann::json& json, const char* field, const std::string& path, T* out) {
  if (!json.contains(field)) return OkStatus();
  const nlohmann::json& value = json[field];
  if (!value.is_number() || value.get<double>() < 0) {
    return InvalidArgument(path + ": '" + field + "' must be a non-negative number");
  }
  *out = value.get<T>();
  return OkStatus();
}

void FillHostFacts(Device& device) {
  int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  device.info.sm_count = cores;
  device.record.cores = cores;
  if (std::string model = HostModelName(); !model.empty()) device.record.name = model;
  if (int64_t clock = HostMaxClockMhz(); clock > 0) device.record.clock_mhz = clock;
  if (int64_t cache = HostLastLevelCacheBytes(); cache > 0) device.cache_bytes = cache;
  device.record.cache_bytes = device.cache_bytes;
  device.info.clock_ghz = device.record.clock_mhz / 1000.0;
}

}  // namespace

std::string DefaultDevicesDir() {
  if (const char* dir = std::getenv("TILESMITH_DEVICES_DIR"); dir && *dir) return dir;
  // An unpacked bundle (scripts/device-bundle) carries its descriptions beside the binary.
  return BundledPathOr("configs/devices", TILESMITH_SOURCE_DIR "/configs/devices").string();
}

Expected<Device> LoadDeviceFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return MakeError(ErrorCode::kNotFound, path + ": no device description there");
  nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return InvalidArgument(path + ": not a JSON object");
  if (!json.contains("target") || !json["target"].is_string() || !json.contains("name") ||
      !json["name"].is_string()) {
    return InvalidArgument(path + ": 'target' and 'name' must be strings");
  }
  Device device;
  device.id = fs::path(path).stem().string();
  auto target = emitters::Target::Parse(json["target"].get<std::string>());
  if (!target) return std::unexpected(target.error().WithContext(path));
  device.target = *target;
  device.info = emitters::DeviceInfo::ForTarget(device.target);
  device.info.name = json["name"].get<std::string>();
  emitters::DeviceInfo& info = device.info;
  int64_t clock_mhz = 0;
  double bandwidth = 0;
  TS_RETURN_IF_ERROR(ReadField(json, "sm_count", path, &info.sm_count));
  TS_RETURN_IF_ERROR(ReadField(json, "threads_per_sm", path, &info.threads_per_sm));
  TS_RETURN_IF_ERROR(ReadField(json, "max_threads_per_block", path, &info.max_threads_per_block));
  TS_RETURN_IF_ERROR(ReadField(json, "warp_size", path, &info.warp_size));
  TS_RETURN_IF_ERROR(
      ReadField(json, "shared_memory_per_block", path, &info.shared_memory_per_block));
  TS_RETURN_IF_ERROR(
      ReadField(json, "shared_memory_per_block_optin", path, &info.shared_memory_per_block_optin));
  TS_RETURN_IF_ERROR(ReadField(json, "registers_per_sm", path, &info.registers_per_sm));
  TS_RETURN_IF_ERROR(
      ReadField(json, "max_registers_per_thread", path, &info.max_registers_per_thread));
  TS_RETURN_IF_ERROR(ReadField(json, "simd_bytes", path, &info.simd_bytes));
  TS_RETURN_IF_ERROR(ReadField(json, "clock_mhz", path, &clock_mhz));
  TS_RETURN_IF_ERROR(ReadField(json, "memory_bandwidth_gbps", path, &bandwidth));
  TS_RETURN_IF_ERROR(ReadField(json, "cache_bytes", path, &device.cache_bytes));
  TS_RETURN_IF_ERROR(ReadField(json, "memory_latency_ns", path, &info.memory_latency_ns));
  TS_RETURN_IF_ERROR(ReadField(json, "max_blocks_per_sm", path, &info.max_blocks_per_sm));
  info.clock_ghz = clock_mhz / 1000.0;
  info.memory_bandwidth_gbs = bandwidth;

  db::DeviceRecord& record = device.record;
  record.target = device.target.is_cuda() ? "cuda" : "host";
  record.compute_capability =
      device.target.is_cuda() ? "sm_" + std::to_string(device.target.sm_version) : "host";
  record.name = info.name;
  record.cores = info.sm_count;
  record.clock_mhz = clock_mhz;
  record.memory_bandwidth_gbps = bandwidth;
  record.cache_bytes = device.cache_bytes;
  // The compiler and driver belong in the key (results never load under another driver):
  // the toolkit that makes the code, and the driver only where this GPU is the one timed.
  if (device.target.is_cuda()) {
    record.toolkit_version = codegen::CubinToolkitVersion();
    static const std::string present = GpuTargetOf("cuda:0").value_or("");
    if (present == "cuda:sm_" + std::to_string(device.target.sm_version)) {
      record.driver_version = GpuDriverVersion();
    }
  } else {
    record.toolkit_version = codegen::HostToolchainVersion();
    FillHostFacts(device);
  }
  return device;
}

std::vector<std::string> ListDeviceIds(const std::string& devices_dir) {
  std::vector<std::string> ids;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(devices_dir, error)) {
    if (entry.path().extension() != ".json") continue;
    if (auto device = LoadDeviceFile(entry.path().string())) ids.push_back(device->id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Expected<Device> ResolveDevice(std::string_view target_text, std::string_view device,
                               const std::string& devices_dir) {
  TS_ASSIGN_OR_RETURN(emitters::Target target, emitters::Target::Parse(target_text));
  std::string name(device);
  if (name.empty()) {
    switch (target.sm_version) {
      case 0:
        name = "host";
        break;
      case 80:
        name = "a100";
        break;
      case 89:
        name = "l4";
        break;
      default:
        name = target.sm_version >= 90 ? "h100_sxm" : "";
        break;
    }
  }
  if (name.empty()) {
    return MakeError(ErrorCode::kNotFound, "no device description for " + target.ToString() +
                                               "; pass --device with one of " + devices_dir);
  }
  std::string path = name.find('/') != std::string::npos || name.ends_with(".json")
                         ? name
                         : devices_dir + "/" + name + ".json";
  TS_ASSIGN_OR_RETURN(Device loaded, LoadDeviceFile(path));
  if (loaded.target.is_cuda() != target.is_cuda() ||
      (target.is_cuda() && loaded.target.sm_version / 10 != target.sm_version / 10)) {
    return InvalidArgument("device '" + loaded.id + "' is " + loaded.target.ToString() + ", not " +
                           target.ToString());
  }
  // The key and the compile target are what was asked for (sm_90a-style variants share a
  // description with their base architecture).
  loaded.target = target;
  if (target.is_cuda())
    loaded.record.compute_capability = "sm_" + std::to_string(target.sm_version);
  return loaded;
}

}  // namespace tilesmith::tuner
