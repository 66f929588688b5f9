#include "db/export.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "db/verdicts.h"

namespace tilesmith::db {
namespace {

using nlohmann::json;

json DeviceToJson(const DeviceRecord& device) {
  return {{"key", device.Key()},
          {"target", device.target},
          {"compute_capability", device.compute_capability},
          {"name", device.name},
          {"cores", device.cores},
          {"clock_mhz", device.clock_mhz},
          {"memory_bandwidth_gbps", device.memory_bandwidth_gbps},
          {"cache_bytes", device.cache_bytes},
          {"driver_version", device.driver_version},
          {"toolkit_version", device.toolkit_version}};
}

json KernelToJson(const KernelRecord& kernel) {
  return {{"fingerprint", kernel.fingerprint},
          {"source_format", kernel.source_format},
          {"name", kernel.name},
          {"canonical_text", kernel.canonical_text}};
}

// Reads the fields of one JSON object. The first problem is kept, named by its path
// (`measurements[3].status: …`); later reads return defaults so a caller checks once.
class FieldReader {
 public:
  FieldReader(const json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object()) Fail("", "expected an object");
  }

  std::string String(std::string_view name) {
    const json* value = Find(name);
    if (value == nullptr || value->is_null()) return "";
    if (!value->is_string()) {
      Fail(name, "expected a string");
      return "";
    }
    return value->get<std::string>();
  }
  std::string RequiredString(std::string_view name) {
    std::string value = String(name);
    if (value.empty() && status_) Fail(name, "missing");
    return value;
  }
  int64_t Int(std::string_view name) {
    const json* value = Find(name);
    if (value == nullptr || !value->is_number_integer()) {
      Fail(name, "expected an integer");
      return 0;
    }
    return value->get<int64_t>();
  }
  std::optional<double> OptionalNumber(std::string_view name) {
    const json* value = Find(name);
    if (value == nullptr || value->is_null()) return std::nullopt;
    if (!value->is_number()) {
      Fail(name, "expected a number");
      return std::nullopt;
    }
    return value->get<double>();
  }
  double Number(std::string_view name) {
    std::optional<double> value = OptionalNumber(name);
    if (!value) Fail(name, "expected a number");
    return value.value_or(0);
  }
  bool Bool(std::string_view name) {
    const json* value = Find(name);
    if (value == nullptr) return false;
    if (!value->is_boolean()) {
      Fail(name, "expected true or false");
      return false;
    }
    return value->get<bool>();
  }
  json Value(std::string_view name, json fallback) {
    const json* value = Find(name);
    return value == nullptr ? fallback : *value;
  }
  // Adopts an error found while interpreting a field.
  void Check(const Status& status, std::string_view name) {
    if (!status && status_) Fail(name, status.error().message);
  }
  const Status& status() const { return status_; }

 private:
  const json* Find(std::string_view name) const {
    if (!object_.is_object()) return nullptr;
    auto it = object_.find(name);
    return it == object_.end() ? nullptr : &*it;
  }
  void Fail(std::string_view name, const std::string& message) {
    if (!status_) return;
    std::string where = name.empty() ? path_ : path_ + "." + std::string(name);
    status_ = InvalidArgument(where + ": " + message);
  }

  const json& object_;
  std::string path_;
  Status status_;
};

// The list under `name`, or an error naming it; a missing list is empty.
Expected<json> List(const json& document, std::string_view name) {
  auto it = document.find(name);
  if (it == document.end()) return json::array();
  if (!it->is_array()) return InvalidArgument(std::string(name) + ": expected a list");
  return *it;
}

Expected<DeviceRecord> ParseDevice(const json& item, const std::string& path) {
  FieldReader read(item, path);
  DeviceRecord device{read.RequiredString("target"), read.String("compute_capability"),
                      read.RequiredString("name"),   read.Int("cores"),
                      read.Int("clock_mhz"),         read.Number("memory_bandwidth_gbps"),
                      read.Int("cache_bytes"),       read.String("driver_version"),
                      read.String("toolkit_version")};
  std::string key = read.RequiredString("key");
  if (read.status() && key != device.Key()) {
    read.Check(InvalidArgument("'" + key + "' is not the key of the device's fields ('" +
                               device.Key() + "')"),
               "key");
  }
  read.Check(ValidateDevice(device), "");
  TS_RETURN_IF_ERROR(read.status());
  return device;
}

Expected<KernelRecord> ParseKernel(const json& item, const std::string& path) {
  FieldReader read(item, path);
  KernelRecord kernel{read.RequiredString("fingerprint"), read.RequiredString("source_format"),
                      read.String("name"), read.RequiredString("canonical_text")};
  if (read.status()) read.Check(ValidateKernel(kernel), "");
  TS_RETURN_IF_ERROR(read.status());
  return kernel;
}

struct StoredConfig {
  std::string emitter;
  json config;
};
using ConfigTable = std::map<std::string, StoredConfig>;  // by "fingerprint/config_hash"

Status ParseConfig(const json& item, const std::string& path, ConfigTable& configs) {
  FieldReader read(item, path);
  std::string fingerprint = read.RequiredString("fingerprint");
  std::string hash = read.RequiredString("config_hash");
  StoredConfig config{read.RequiredString("emitter"), read.Value("config", json())};
  if (read.status()) {
    Expected<std::string> actual = ConfigHash(config.config);
    if (!actual) {
      read.Check(std::unexpected(actual.error()), "config");
    } else if (*actual != hash) {
      read.Check(InvalidArgument(hash + " is not the hash of the config (" + *actual + ")"),
                 "config_hash");
    }
  }
  TS_RETURN_IF_ERROR(read.status());
  configs[fingerprint + "/" + hash] = std::move(config);
  return OkStatus();
}

Expected<MeasurementRecord> ParseMeasurement(const json& item, const std::string& path,
                                             const ConfigTable& configs) {
  FieldReader read(item, path);
  MeasurementRecord m;
  m.uid = read.RequiredString("uid");
  m.key = {read.RequiredString("fingerprint"), read.RequiredString("device_key"),
           read.RequiredString("compiler_version")};
  m.config_hash = read.RequiredString("config_hash");
  m.is_default = read.Bool("is_default");
  std::string status_name = read.RequiredString("status");
  if (read.status()) {
    Expected<TrialStatus> status = ParseTrialStatus(status_name);
    if (status) {
      m.status = *status;
    } else {
      read.Check(std::unexpected(status.error()), "status");
    }
  }
  m.message = read.String("message");
  if (read.OptionalNumber("median_us")) {
    Timing timing{read.Number("median_us"), read.Number("p20_us"), read.Number("p80_us"),
                  read.Number("min_us"),    read.Number("max_us"), {}};
    json times = read.Value("times_us", json::array());
    if (!times.is_array()) read.Check(InvalidArgument("expected a list of numbers"), "times_us");
    for (const json& time : times.is_array() ? times : json::array()) {
      if (!time.is_number()) {
        read.Check(InvalidArgument("expected a list of numbers"), "times_us");
        break;
      }
      timing.times_us.push_back(time.get<double>());
    }
    m.timing = std::move(timing);
  }
  m.compile_stats = read.Value("compile_stats", json::object());
  m.verification_error = read.OptionalNumber("verification_error");
  m.measured_at = read.RequiredString("measured_at");
  m.job_id = read.String("job_id");
  auto config = configs.find(m.key.fingerprint + "/" + m.config_hash);
  if (read.status() && config == configs.end()) {
    read.Check(InvalidArgument("config " + m.config_hash + " of kernel " + m.key.fingerprint +
                               " is not in the document's configs"),
               "config_hash");
  } else if (config != configs.end()) {
    m.emitter = config->second.emitter;
    m.config = config->second.config;
  }
  if (read.status()) read.Check(ValidateMeasurement(m), "");
  TS_RETURN_IF_ERROR(read.status());
  return m;
}

// A bound of a verdict's interval; an infinite one (too few rounds) travels as null.
json BoundJson(double bound) { return std::isfinite(bound) ? json(bound) : json(nullptr); }

json VerdictToJson(const VerdictRecord& v) {
  return {{"fingerprint", v.key.fingerprint},
          {"device_key", v.key.device_key},
          {"compiler_version", v.key.compiler_version},
          {"best_config", v.best_config},
          {"chosen_config", v.chosen_config},
          {"chosen_is_default", v.chosen_is_default},
          {"chosen_median_us", v.chosen_median_us},
          {"default_median_us", v.default_median_us},
          {"speedup", v.speedup},
          {"speedup_low", BoundJson(v.speedup_low)},
          {"speedup_high", BoundJson(v.speedup_high)},
          {"confidence", v.confidence},
          {"significant", v.significant},
          {"rounds", v.rounds},
          {"method", v.method},
          {"reason", v.reason},
          {"details", v.details},
          {"decided_at", v.decided_at},
          {"job_id", v.job_id}};
}

Expected<VerdictRecord> ParseVerdict(const json& item, const std::string& path) {
  FieldReader read(item, path);
  VerdictRecord v;
  v.key = {read.RequiredString("fingerprint"), read.RequiredString("device_key"),
           read.RequiredString("compiler_version")};
  v.best_config = read.Value("best_config", json::object());
  v.chosen_config = read.Value("chosen_config", json::object());
  v.chosen_is_default = read.Bool("chosen_is_default");
  v.chosen_median_us = read.Number("chosen_median_us");
  v.default_median_us = read.Number("default_median_us");
  v.speedup = read.Number("speedup");
  v.speedup_low = read.OptionalNumber("speedup_low").value_or(0);
  v.speedup_high =
      read.OptionalNumber("speedup_high").value_or(std::numeric_limits<double>::infinity());
  v.confidence = read.Number("confidence");
  v.significant = read.Bool("significant");
  v.rounds = read.Int("rounds");
  v.method = read.String("method");
  v.reason = read.String("reason");
  v.details = read.Value("details", json::object());
  v.decided_at = read.RequiredString("decided_at");
  v.job_id = read.String("job_id");
  if (read.status()) read.Check(ValidateVerdict(v), "");
  TS_RETURN_IF_ERROR(read.status());
  return v;
}

Status CheckHeader(const json& document) {
  if (!document.is_object()) return InvalidArgument("a results export must be a JSON object");
  auto format = document.find("format");
  if (format == document.end() || *format != kExportFormat) {
    return InvalidArgument("not a tilesmith results export (\"format\" is " +
                           (format == document.end() ? std::string("missing") : format->dump()) +
                           ", expected \"" + std::string(kExportFormat) + "\")");
  }
  auto version = document.find("schema_version");
  if (version == document.end() || !version->is_number_integer()) {
    return InvalidArgument("the export has no integer \"schema_version\"");
  }
  // Version 2 added only the jobs table, which exports do not carry: a version-1 export
  // holds the same records.
  if (version->get<int64_t>() < 1 || version->get<int64_t>() > kSchemaVersion) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the export has schema version " + version->dump() +
                         " but this tilesmith's results schema is version " +
                         std::to_string(kSchemaVersion) +
                         "; export it again with a tilesmith of schema version " +
                         std::to_string(kSchemaVersion));
  }
  return OkStatus();
}

// Runs `parse(item, path)` over every entry of the list `name`.
template <typename Parse>
Status ForEachEntry(const json& document, std::string_view name, Parse&& parse) {
  TS_ASSIGN_OR_RETURN(json list, List(document, name));
  for (size_t i = 0; i < list.size(); ++i) {
    TS_RETURN_IF_ERROR(parse(list[i], std::string(name) + "[" + std::to_string(i) + "]"));
  }
  return OkStatus();
}

// Every measurement's kernel and device must be in the document or already stored, so a
// document that would fail half-way is refused before anything is written.
Status CheckReferences(ResultStore& store, const std::vector<DeviceRecord>& devices,
                       const std::vector<KernelRecord>& kernels,
                       const std::vector<MeasurementRecord>& measurements) {
  std::set<std::string> device_keys, fingerprints;
  for (const DeviceRecord& device : devices) device_keys.insert(device.Key());
  for (const KernelRecord& kernel : kernels) fingerprints.insert(kernel.fingerprint);
  for (size_t i = 0; i < measurements.size(); ++i) {
    const ResultKey& key = measurements[i].key;
    std::string path = "measurements[" + std::to_string(i) + "]";
    if (!device_keys.contains(key.device_key)) {
      TS_ASSIGN_OR_RETURN(std::optional<DeviceRecord> stored, store.GetDevice(key.device_key));
      if (!stored) {
        return InvalidArgument(path + ".device_key: device '" + key.device_key +
                               "' is neither in the document nor in the store");
      }
      device_keys.insert(key.device_key);
    }
    if (!fingerprints.contains(key.fingerprint)) {
      TS_ASSIGN_OR_RETURN(std::optional<KernelRecord> stored, store.GetKernel(key.fingerprint));
      if (!stored) {
        return InvalidArgument(path + ".fingerprint: kernel " + key.fingerprint +
                               " is neither in the document nor in the store");
      }
      fingerprints.insert(key.fingerprint);
    }
  }
  return OkStatus();
}

}  // namespace

json TimingSummaryJson(const Timing& timing) {
  return {{"median_us", timing.median_us},
          {"p20_us", timing.p20_us},
          {"p80_us", timing.p80_us},
          {"min_us", timing.min_us},
          {"max_us", timing.max_us}};
}

json MeasurementToJson(const MeasurementRecord& m) {
  json out = {{"uid", m.uid},
              {"fingerprint", m.key.fingerprint},
              {"config_hash", m.config_hash},
              {"device_key", m.key.device_key},
              {"compiler_version", m.key.compiler_version},
              {"is_default", m.is_default},
              {"status", TrialStatusName(m.status)},
              {"message", m.message},
              {"compile_stats", m.compile_stats},
              {"verification_error", m.verification_error ? json(*m.verification_error) : json()},
              {"measured_at", m.measured_at},
              {"job_id", m.job_id.empty() ? json() : json(m.job_id)}};
  if (m.timing) {
    out.update(TimingSummaryJson(*m.timing));
    out["times_us"] = m.timing->times_us;
  }
  return out;
}

Expected<json> ExportResults(ResultStore& store, const ResultFilter& filter) {
  bool everything = !filter.fingerprint && !filter.device_key && !filter.compiler_version;
  TS_ASSIGN_OR_RETURN(std::vector<MeasurementRecord> measurements, store.Measurements(filter));
  std::set<std::string> device_keys, fingerprints, compiler_versions;
  if (filter.fingerprint) fingerprints.insert(*filter.fingerprint);
  std::map<std::string, json> configs;
  json measurement_list = json::array();
  for (const MeasurementRecord& m : measurements) {
    device_keys.insert(m.key.device_key);
    fingerprints.insert(m.key.fingerprint);
    compiler_versions.insert(m.key.compiler_version);
    configs.emplace(m.key.fingerprint + "/" + m.config_hash,
                    json{{"fingerprint", m.key.fingerprint},
                         {"config_hash", m.config_hash},
                         {"emitter", m.emitter},
                         {"config", m.config}});
    measurement_list.push_back(MeasurementToJson(m));
  }
  json devices = json::array();
  TS_ASSIGN_OR_RETURN(std::vector<DeviceRecord> all_devices, store.ListDevices());
  for (const DeviceRecord& device : all_devices) {
    if (everything || device_keys.contains(device.Key())) devices.push_back(DeviceToJson(device));
  }
  if (everything) {
    TS_ASSIGN_OR_RETURN(std::vector<KernelSummary> all_kernels, store.ListKernels({}));
    for (const KernelSummary& kernel : all_kernels) fingerprints.insert(kernel.fingerprint);
  }
  json kernels = json::array();
  for (const std::string& fingerprint : fingerprints) {
    TS_ASSIGN_OR_RETURN(std::optional<KernelRecord> kernel, store.GetKernel(fingerprint));
    if (kernel) kernels.push_back(KernelToJson(*kernel));
  }
  json config_list = json::array();
  for (auto& [key, config] : configs) config_list.push_back(std::move(config));
  // The newest verdict of every key measured: an answer's `significant` travels with it.
  std::set<std::tuple<std::string, std::string, std::string>> key_set;
  for (const MeasurementRecord& m : measurements) {
    key_set.emplace(m.key.fingerprint, m.key.device_key, m.key.compiler_version);
  }
  std::vector<ResultKey> keys;
  for (const auto& [fingerprint, device_key, compiler_version] : key_set) {
    keys.push_back({fingerprint, device_key, compiler_version});
  }
  TS_ASSIGN_OR_RETURN(std::vector<std::optional<VerdictRecord>> verdicts, store.Verdicts(keys));
  json verdict_list = json::array();
  for (const std::optional<VerdictRecord>& verdict : verdicts) {
    if (verdict) verdict_list.push_back(VerdictToJson(*verdict));
  }
  return json{{"format", kExportFormat},
              {"schema_version", kSchemaVersion},
              {"exported_at", UtcNow()},
              {"compiler_versions", compiler_versions},
              {"devices", std::move(devices)},
              {"kernels", std::move(kernels)},
              {"configs", std::move(config_list)},
              {"measurements", std::move(measurement_list)},
              {"verdicts", std::move(verdict_list)}};
}

Expected<ImportSummary> ImportResults(ResultStore& store, const json& document) {
  TS_RETURN_IF_ERROR(CheckHeader(document));
  std::vector<DeviceRecord> devices;
  std::vector<KernelRecord> kernels;
  ConfigTable configs;
  std::vector<MeasurementRecord> measurements;
  TS_RETURN_IF_ERROR(
      ForEachEntry(document, "devices", [&](const json& item, const std::string& path) -> Status {
        TS_ASSIGN_OR_RETURN(DeviceRecord device, ParseDevice(item, path));
        devices.push_back(std::move(device));
        return OkStatus();
      }));
  TS_RETURN_IF_ERROR(
      ForEachEntry(document, "kernels", [&](const json& item, const std::string& path) -> Status {
        TS_ASSIGN_OR_RETURN(KernelRecord kernel, ParseKernel(item, path));
        kernels.push_back(std::move(kernel));
        return OkStatus();
      }));
  TS_RETURN_IF_ERROR(
      ForEachEntry(document, "configs", [&](const json& item, const std::string& path) -> Status {
        return ParseConfig(item, path, configs);
      }));
  TS_RETURN_IF_ERROR(ForEachEntry(
      document, "measurements", [&](const json& item, const std::string& path) -> Status {
        TS_ASSIGN_OR_RETURN(MeasurementRecord m, ParseMeasurement(item, path, configs));
        measurements.push_back(std::move(m));
        return OkStatus();
      }));

  std::vector<VerdictRecord> verdicts;
  TS_RETURN_IF_ERROR(
      ForEachEntry(document, "verdicts", [&](const json& item, const std::string& path) -> Status {
        TS_ASSIGN_OR_RETURN(VerdictRecord verdict, ParseVerdict(item, path));
        verdicts.push_back(std::move(verdict));
        return OkStatus();
      }));

  TS_RETURN_IF_ERROR(CheckReferences(store, devices, kernels, measurements));

  ImportSummary summary;
  for (const DeviceRecord& device : devices) {
    TS_ASSIGN_OR_RETURN(bool added, store.PutDevice(device));
    summary.devices_added += added;
  }
  for (const KernelRecord& kernel : kernels) {
    TS_ASSIGN_OR_RETURN(bool added, store.PutKernel(kernel));
    summary.kernels_added += added;
  }
  TS_ASSIGN_OR_RETURN(BatchResult batch, store.RecordBatch(measurements));
  summary.measurements_added = batch.inserted;
  summary.measurements_present = static_cast<int64_t>(measurements.size()) - batch.inserted;
  // A verdict is added when it is newer than its key's newest: importing again adds none.
  std::vector<ResultKey> verdict_keys;
  for (const VerdictRecord& verdict : verdicts) verdict_keys.push_back(verdict.key);
  TS_ASSIGN_OR_RETURN(std::vector<std::optional<VerdictRecord>> newest,
                      store.Verdicts(verdict_keys));
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const VerdictRecord& verdict = verdicts[i];
    if (newest[i] && newest[i]->decided_at >= verdict.decided_at) {
      ++summary.verdicts_present;
      continue;
    }
    TS_RETURN_IF_ERROR(store.RecordVerdict(verdict));
    ++summary.verdicts_added;
  }
  return summary;
}

}  // namespace tilesmith::db
