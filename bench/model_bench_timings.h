// model_bench's sampling of a fusion's space and its saved timings: what `--save-timings`
// writes and `--timings` replays (bench/model_bench.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "costmodel/host_model.h"
#include "support/status.h"
#include "tuner/space.h"

namespace tilesmith::bench {

/// A kernel this short gets four times the runs in a round: its best of few runs still
/// carries the pool's wake-up jitter (tens of microseconds), so configs compare, not wake-ups.
inline constexpr double kShortKernelSeconds = 200e-6;

/// Times compiled kernels in `rounds` interleaved rounds: every round times each kernel (best
/// of `repetitions` runs from memory) in a fresh order, round r counting for run r % `runs`,
/// and each run keeps a kernel's best of its rounds. A burst of other work on the machine
/// then costs a kernel one round, not its only timing; with two runs, each run's rounds are
/// spread over the whole measurement, so the runs differ by noise, not by when they ran.
/// In µs, by run, then by kernel.
inline std::vector<std::vector<double>> TimeInterleavedRuns(std::vector<PreparedKernel>& prepared,
                                                            int repetitions, int rounds, int runs) {
  std::vector<std::vector<double>> best(
      runs, std::vector<double>(prepared.size(), std::numeric_limits<double>::infinity()));
  std::vector<size_t> order(prepared.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 shuffle(7);
  for (int round = 0; round < rounds; ++round) {
    if (round > 0) std::shuffle(order.begin(), order.end(), shuffle);
    for (size_t k : order) {
      double seconds = prepared[k].TimeFromMemory(repetitions);
      if (seconds < kShortKernelSeconds) {
        seconds = std::min(seconds, prepared[k].TimeFromMemory(4 * repetitions));
      }
      best[round % runs][k] = std::min(best[round % runs][k], seconds * 1e6);
    }
  }
  return best;
}

// Up to `cap` candidates spread evenly over the space, the default always among them.
inline std::vector<int64_t> Sample(const tuner::Space& space, int64_t cap) {
  int64_t n = static_cast<int64_t>(space.candidates.size());
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < std::min(n, cap); ++i) picked.push_back(i * n / std::min(n, cap));
  if (std::find(picked.begin(), picked.end(), space.default_index) == picked.end()) {
    picked.back() = space.default_index;
  }
  return picked;
}

// Measured times by fusion name, then by config (its JSON text): what --save-timings writes
// and --timings replays, with the host calibration of the measuring run (predictions depend
// on it, and a replay must not measure the machine afresh).
using SavedTimings = std::map<std::string, std::map<std::string, double>>;

inline Expected<costmodel::HostCalibration> ReadCalibration(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json file = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!file.is_object() || !file.contains("calibration")) {
    return InvalidArgument("timings '" + path + "': no 'calibration'");
  }
  return costmodel::HostCalibration::FromJson(file["calibration"]);
}

inline Expected<SavedTimings> ReadTimings(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot read timings '" + path + "'");
  nlohmann::json file = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!file.is_object() || !file.contains("fusions") || !file["fusions"].is_object()) {
    return InvalidArgument("timings '" + path + "': no 'fusions' object");
  }
  SavedTimings timings;
  for (const auto& [fusion, configs] : file["fusions"].items()) {
    for (const nlohmann::json& entry : configs) {
      if (!entry.contains("config") || !entry.contains("us") || !entry["us"].is_number()) {
        return InvalidArgument("timings '" + path + "': bad entry in " + fusion);
      }
      timings[fusion][entry["config"].dump()] = entry["us"].get<double>();
    }
  }
  return timings;
}

// `flush`: how each run started from memory ("buffers" evicted, or the "cache" overwritten).
inline nlohmann::json TimingsToJson(const SavedTimings& timings, bool quick,
                                    const costmodel::HostCalibration& calibration,
                                    const std::string& flush) {
  nlohmann::json fusions = nlohmann::json::object();
  for (const auto& [fusion, configs] : timings) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& [config, us] : configs) {
      entries.push_back({{"config", nlohmann::json::parse(config)}, {"us", us}});
    }
    fusions[fusion] = std::move(entries);
  }
  return {{"quick", quick},
          {"flush", flush},
          {"calibration", calibration.ToJson()},
          {"fusions", std::move(fusions)}};
}

// A generated fusion's two runs (model_bench --generated), by config (its JSON text): what
// --save-timings writes under "generated" and --timings replays. A generated fusion's text
// depends on the generator's byte cap, so the file keeps it (`max_bytes`) and a replay
// under another cap is refused.
struct SavedGeneratedFusion {
  std::string pattern, type;
  int64_t bytes = 0;
  std::map<std::string, std::pair<double, double>> runs;  // config -> (run A, run B) µs
};
struct SavedGenerated {
  int64_t max_bytes = 0;
  std::map<std::string, SavedGeneratedFusion> fusions;  // by name, gen_<seed>_<index>
};

/// The generated fusions of a timings file; an empty set when it holds none (a corpus run's).
inline Expected<SavedGenerated> ReadGeneratedTimings(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot read timings '" + path + "'");
  nlohmann::json file = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  SavedGenerated saved;
  if (!file.is_object() || !file.contains("generated")) return saved;
  const nlohmann::json& generated = file["generated"];
  if (!generated.is_object() || !generated.contains("max_bytes") ||
      !generated["max_bytes"].is_number_integer() || !generated.contains("fusions") ||
      !generated["fusions"].is_object()) {
    return InvalidArgument("timings '" + path + "': 'generated' needs 'max_bytes' and 'fusions'");
  }
  saved.max_bytes = generated["max_bytes"].get<int64_t>();
  for (const auto& [name, fusion] : generated["fusions"].items()) {
    SavedGeneratedFusion& into = saved.fusions[name];
    into.pattern = fusion.value("pattern", "");
    into.type = fusion.value("type", "");
    into.bytes = fusion.value("bytes", int64_t{0});
    if (!fusion.contains("configs") || !fusion["configs"].is_array()) {
      return InvalidArgument("timings '" + path + "': " + name + " has no 'configs'");
    }
    for (const nlohmann::json& entry : fusion["configs"]) {
      if (!entry.contains("config") || !entry.contains("a") || !entry["a"].is_number() ||
          !entry.contains("b") || !entry["b"].is_number()) {
        return InvalidArgument("timings '" + path + "': bad entry in " + name);
      }
      into.runs[entry["config"].dump()] = {entry["a"].get<double>(), entry["b"].get<double>()};
    }
  }
  return saved;
}

inline nlohmann::json GeneratedTimingsToJson(const SavedGenerated& saved) {
  nlohmann::json fusions = nlohmann::json::object();
  for (const auto& [name, fusion] : saved.fusions) {
    nlohmann::json configs = nlohmann::json::array();
    for (const auto& [config, runs] : fusion.runs) {
      configs.push_back(
          {{"config", nlohmann::json::parse(config)}, {"a", runs.first}, {"b", runs.second}});
    }
    fusions[name] = {{"pattern", fusion.pattern},
                     {"type", fusion.type},
                     {"bytes", fusion.bytes},
                     {"configs", std::move(configs)}};
  }
  return {{"max_bytes", saved.max_bytes}, {"fusions", std::move(fusions)}};
}

// What a replay ranks: the sample a measuring run takes (Sample) when the timings file has a
// time for each of its configs (the space is unchanged since the file was measured). When the
// space gained configs, the sample lands on some the file never measured: they are counted
// in `skipped`, never guessed, and the replay ranks the file's configs that are still in the
// space instead, in space order with the default last (where Sample puts a default it did
// not land on), so that ties keep the order they had when the file was measured.
inline std::vector<int64_t> ReplayedSample(const tuner::Space& space, int64_t cap,
                                           const std::map<std::string, double>& timings,
                                           int64_t& skipped) {
  auto timed = [&](int64_t index) {
    return timings.contains(space.candidates[index].config.dump());
  };
  std::vector<int64_t> sampled = Sample(space, cap);
  skipped = std::count_if(sampled.begin(), sampled.end(), [&](int64_t i) { return !timed(i); });
  if (skipped == 0) return sampled;
  std::vector<int64_t> picked;
  for (int64_t index = 0; index < static_cast<int64_t>(space.candidates.size()); ++index) {
    if (index != space.default_index && timed(index)) picked.push_back(index);
  }
  if (timed(space.default_index)) picked.push_back(space.default_index);
  return picked;
}

}  // namespace tilesmith::bench
