#include "db/records.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <random>

#include "support/sha256.h"

namespace tilesmith::db {
namespace {

struct StatusName {
  TrialStatus status;
  std::string_view name;
};

constexpr StatusName kStatusNames[] = {
    {TrialStatus::kOk, "ok"},
    {TrialStatus::kCompile, "compile"},
    {TrialStatus::kLaunch, "launch"},
    {TrialStatus::kTimeout, "timeout"},
    {TrialStatus::kCrash, "crash"},
    {TrialStatus::kWrongResult, "wrong_result"},
    {TrialStatus::kConstraint, "constraint"},
    {TrialStatus::kRedZone, "red_zone"},
};

// Shortest text that reads back to the same double, so keys are stable across runs.
std::string ShortestDouble(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return error == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

Status CheckFinite(double value, std::string_view field) {
  if (!std::isfinite(value) || value < 0) {
    return InvalidArgument(std::string(field) + " must be a finite, non-negative time, got " +
                           ShortestDouble(value));
  }
  return OkStatus();
}

Status ValidateTiming(const Timing& timing) {
  TS_RETURN_IF_ERROR(CheckFinite(timing.median_us, "median_us"));
  TS_RETURN_IF_ERROR(CheckFinite(timing.p20_us, "p20_us"));
  TS_RETURN_IF_ERROR(CheckFinite(timing.p80_us, "p80_us"));
  TS_RETURN_IF_ERROR(CheckFinite(timing.min_us, "min_us"));
  TS_RETURN_IF_ERROR(CheckFinite(timing.max_us, "max_us"));
  for (double time : timing.times_us) TS_RETURN_IF_ERROR(CheckFinite(time, "times_us"));
  return OkStatus();
}

Status RequireText(std::string_view value, std::string_view field) {
  if (value.empty()) return InvalidArgument(std::string(field) + " must not be empty");
  return OkStatus();
}

}  // namespace

std::string_view TrialStatusName(TrialStatus status) {
  for (const StatusName& entry : kStatusNames) {
    if (entry.status == status) return entry.name;
  }
  return "unknown";
}

Expected<TrialStatus> ParseTrialStatus(std::string_view name) {
  for (const StatusName& entry : kStatusNames) {
    if (entry.name == name) return entry.status;
  }
  return InvalidArgument("unknown trial status '" + std::string(name) +
                         "' (ok, compile, launch, timeout, crash, wrong_result, constraint, "
                         "red_zone)");
}

const std::vector<TrialStatus>& AllTrialStatuses() {
  static const std::vector<TrialStatus> statuses = [] {
    std::vector<TrialStatus> all;
    for (const StatusName& entry : kStatusNames) all.push_back(entry.status);
    return all;
  }();
  return statuses;
}

std::string DeviceRecord::Key() const {
  std::string target_part = compute_capability.empty() || compute_capability == target
                                ? target
                                : target + ":" + compute_capability;
  auto or_none = [](const std::string& text) { return text.empty() ? std::string("none") : text; };
  return target_part + ", " + name + ", " + std::to_string(cores) + " cores, " +
         std::to_string(clock_mhz) + " MHz, " + ShortestDouble(memory_bandwidth_gbps) + " GB/s, " +
         std::to_string(cache_bytes) + " B cache, driver " + or_none(driver_version) +
         ", toolkit " + or_none(toolkit_version);
}

Expected<std::string> CanonicalConfig(const nlohmann::json& config) {
  if (!config.is_object()) {
    return InvalidArgument("a config must be a JSON object, got " +
                           std::string(config.type_name()));
  }
  // nlohmann::json keeps object keys in a std::map, so dump() sorts them; without an indent
  // it writes no spaces.
  try {
    return config.dump();
  } catch (const nlohmann::json::exception& error) {
    return InvalidArgument(std::string("config is not valid JSON text: ") + error.what());
  }
}

Expected<std::string> ConfigHash(const nlohmann::json& config) {
  TS_ASSIGN_OR_RETURN(std::string canonical, CanonicalConfig(config));
  return Sha256Hex(canonical);
}

Status ValidateDevice(const DeviceRecord& device) {
  TS_RETURN_IF_ERROR(RequireText(device.target, "device target"));
  TS_RETURN_IF_ERROR(RequireText(device.name, "device name"));
  if (device.cores < 0 || device.clock_mhz < 0 || device.cache_bytes < 0 ||
      !std::isfinite(device.memory_bandwidth_gbps) || device.memory_bandwidth_gbps < 0) {
    return InvalidArgument("device '" + device.name +
                           "': cores, clock, bandwidth and cache must be non-negative");
  }
  return OkStatus();
}

Status ValidateKernel(const KernelRecord& kernel) {
  if (!IsSha256Hex(kernel.fingerprint)) {
    return InvalidArgument("kernel fingerprint '" + kernel.fingerprint +
                           "' is not 64 lowercase hex digits");
  }
  if (kernel.source_format != "hlo" && kernel.source_format != "ascgraph") {
    return InvalidArgument("kernel " + kernel.fingerprint + ": source format '" +
                           kernel.source_format + "' is neither 'hlo' nor 'ascgraph'");
  }
  TS_ASSIGN_OR_RETURN(std::string hash, Sha256Hex(kernel.canonical_text));
  if (hash != kernel.fingerprint) {
    return InvalidArgument("kernel " + kernel.fingerprint +
                           ": the fingerprint is not the SHA-256 of its canonical text (" + hash +
                           ")");
  }
  return OkStatus();
}

Expected<std::string> PrepareMeasurement(MeasurementRecord& row, const std::string& context) {
  Status valid = ValidateMeasurement(row);
  if (!valid) return std::unexpected(valid.error().WithContext(context));
  TS_ASSIGN_OR_RETURN(std::string config_json, CanonicalConfig(row.config));
  TS_ASSIGN_OR_RETURN(std::string hash, ConfigHash(row.config));
  if (!row.config_hash.empty() && row.config_hash != hash) {
    return InvalidArgument(context + ": config_hash " + row.config_hash +
                           " is not the hash of its config (" + hash + ")");
  }
  row.config_hash = hash;
  if (row.uid.empty()) row.uid = NewUid();
  if (row.measured_at.empty()) row.measured_at = UtcNow();
  return config_json;
}

Status ValidateMeasurement(const MeasurementRecord& measurement) {
  const ResultKey& key = measurement.key;
  if (!IsSha256Hex(key.fingerprint)) {
    return InvalidArgument("measurement fingerprint '" + key.fingerprint +
                           "' is not 64 lowercase hex digits");
  }
  TS_RETURN_IF_ERROR(RequireText(key.device_key, "measurement device key"));
  TS_RETURN_IF_ERROR(RequireText(key.compiler_version, "measurement compiler version"));
  TS_RETURN_IF_ERROR(RequireText(measurement.emitter, "measurement emitter"));
  TS_RETURN_IF_ERROR(CanonicalConfig(measurement.config));
  if (!measurement.compile_stats.is_object()) {
    return InvalidArgument("compile_stats must be a JSON object");
  }
  if (measurement.status == TrialStatus::kOk && !measurement.timing) {
    return InvalidArgument("a measurement with status ok must carry its timing");
  }
  if (measurement.timing) TS_RETURN_IF_ERROR(ValidateTiming(*measurement.timing));
  if (measurement.verification_error && std::isnan(*measurement.verification_error)) {
    return InvalidArgument("verification_error must be a number, got NaN");
  }
  if (measurement.uid.size() > 128) return InvalidArgument("measurement uid is too long");
  return OkStatus();
}

std::string UtcNow() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &utc);
  char with_millis[40];
  std::snprintf(with_millis, sizeof(with_millis), "%s.%03dZ", buffer, static_cast<int>(millis));
  return with_millis;
}

std::string NewUid() {
  // random_device reads the kernel's entropy, so forked writers never collide.
  static thread_local std::random_device device;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string uid;
  for (int i = 0; i < 4; ++i) {
    uint32_t bits = device();
    for (int nibble = 0; nibble < 8; ++nibble) uid += kHex[(bits >> (4 * nibble)) & 0xF];
  }
  return uid;
}

}  // namespace tilesmith::db
