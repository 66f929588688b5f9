#include "report/model.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace tilesmith::report {
namespace {

using nlohmann::json;

bool Verified(const db::MeasurementRecord& m) {
  return m.status == db::TrialStatus::kOk && m.timing.has_value();
}

std::string KeyText(const db::ResultKey& key) {
  return key.fingerprint + '\n' + key.device_key + '\n' + key.compiler_version;
}

}  // namespace

std::optional<double> KeyTrials::DefaultMedian() const {
  if (best && best->default_median_us) return best->default_median_us;
  std::optional<double> fastest;
  for (const db::MeasurementRecord& m : trials) {
    if (m.is_default && Verified(m)) {
      fastest = std::min(fastest.value_or(m.timing->median_us), m.timing->median_us);
    }
  }
  return fastest;
}

std::optional<double> KeyTrials::BestMedian() const {
  if (best && best->measurement.timing) return best->measurement.timing->median_us;
  return std::nullopt;
}

std::optional<double> KeyTrials::Speedup() const {
  std::optional<double> base = DefaultMedian();
  std::optional<double> tuned = BestMedian();
  if (!base || !tuned || *base <= 0 || *tuned <= 0) return std::nullopt;
  return *base / *tuned;
}

Expected<std::vector<KeyTrials>> LoadTrials(db::ResultStore& store,
                                            const db::ResultFilter& filter) {
  TS_ASSIGN_OR_RETURN(std::vector<db::MeasurementRecord> measurements, store.Measurements(filter));
  TS_ASSIGN_OR_RETURN(std::vector<db::BestResult> best, store.ListBest(filter));
  std::map<std::string, size_t> index;
  std::vector<KeyTrials> keys;
  for (db::MeasurementRecord& m : measurements) {
    auto [it, added] = index.emplace(KeyText(m.key), keys.size());
    if (added) {
      keys.emplace_back();
      keys.back().key = m.key;
    }
    KeyTrials& entry = keys[it->second];
    if (entry.emitter.empty()) entry.emitter = m.emitter;
    entry.trials.push_back(std::move(m));
  }
  for (db::BestResult& result : best) {
    auto it = index.find(KeyText(result.measurement.key));
    if (it != index.end()) keys[it->second].best = std::move(result);
  }
  std::map<std::string, std::optional<db::KernelRecord>> kernels;
  for (KeyTrials& entry : keys) {
    auto known = kernels.find(entry.key.fingerprint);
    if (known == kernels.end()) {
      TS_ASSIGN_OR_RETURN(std::optional<db::KernelRecord> kernel,
                          store.GetKernel(entry.key.fingerprint));
      known = kernels.emplace(entry.key.fingerprint, std::move(kernel)).first;
    }
    if (known->second) {
      entry.kernel_name = known->second->name;
      entry.source_format = known->second->source_format;
    }
    std::set<std::string> hashes;
    for (const db::MeasurementRecord& m : entry.trials) {
      hashes.insert(m.config_hash);
      if (m.status != db::TrialStatus::kOk) ++entry.failures;
    }
    entry.configs = static_cast<int64_t>(hashes.size());
  }
  std::sort(keys.begin(), keys.end(), [](const KeyTrials& a, const KeyTrials& b) {
    return std::tie(a.kernel_name, a.key.fingerprint, a.key.device_key, a.key.compiler_version) <
           std::tie(b.kernel_name, b.key.fingerprint, b.key.device_key, b.key.compiler_version);
  });
  return keys;
}

std::vector<std::string> VaryingParameters(const std::vector<db::MeasurementRecord>& trials) {
  // Every field name seen, with the distinct values it takes ("absent" counts as a value).
  std::map<std::string, std::set<std::string>> values;
  std::vector<const json*> configs;
  for (const db::MeasurementRecord& m : trials) {
    if (!Verified(m) || !m.config.is_object()) continue;
    configs.push_back(&m.config);
    for (const auto& [name, value] : m.config.items()) values[name];
  }
  for (const json* config : configs) {
    for (auto& [name, seen] : values) {
      auto field = config->find(name);
      seen.insert(field == config->end() ? std::string("(absent)") : field->dump());
    }
  }
  std::vector<std::string> varying;
  for (const auto& [name, seen] : values) {
    if (seen.size() > 1) varying.push_back(name);
  }
  return varying;
}

std::optional<std::pair<std::string, std::string>> HeatMapAxes(
    const std::vector<db::MeasurementRecord>& trials) {
  std::vector<std::string> varying = VaryingParameters(trials);
  if (varying.size() != 2) return std::nullopt;
  std::set<double> distinct[2];
  for (const db::MeasurementRecord& m : trials) {
    if (!Verified(m) || !m.config.is_object()) continue;
    for (int i = 0; i < 2; ++i) {
      auto field = m.config.find(varying[i]);
      if (field == m.config.end() || !field->is_number()) return std::nullopt;
      distinct[i].insert(field->get<double>());
    }
  }
  if (distinct[1].size() > distinct[0].size()) return std::pair(varying[1], varying[0]);
  return std::pair(varying[0], varying[1]);
}

}  // namespace tilesmith::report
