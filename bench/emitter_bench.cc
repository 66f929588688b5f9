// Transpose and reduction kernels on the host against the machine's copy bandwidth, measured
// side by side in one run: for fusions whose input is 4 to 64 MiB, the default config and the
// best of a random sample of the emitter's valid configs each report the fraction of the copy
// bandwidth they reach (every buffer's bytes over the time, caches flushed before each run so
// that inputs smaller than the last-level cache come from memory too). Goal: the best >= 50%.
//
// `--config JSON` (repeatable) also measures that config (over the default) in every case
// where it is valid, and `--only TEXT` keeps the cases whose name contains TEXT: a change to
// one config family compares side by side with the default in one run.
//
// `--sample N` measures N random configs instead of 48 (12 with --quick).
//
// The best of a sample is biased upwards (the noise of one run picks it), and the copy
// bandwidth drifts during a run. So the default and the sample's best are then measured
// again in `kRounds` rounds, each with its own copy bandwidth measured right before, and the
// reported fractions are the rounds' medians; the sample's own best is reported beside them.
//
//   emitter_bench [--quick] [--only TEXT] [--config JSON]... [--sample N] [--json OUT]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_output.h"
#include "bench/bench_util.h"

namespace {

using tilesmith::bench::PreparedKernel;

constexpr char kAdd[] =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

std::string Transpose(int64_t rows, int64_t columns) {
  std::string in = "f32[" + std::to_string(rows) + "," + std::to_string(columns) + "]";
  std::string out = "f32[" + std::to_string(columns) + "," + std::to_string(rows) + "]";
  return "t {\n  p = " + in + " parameter(0)\n  ROOT t = " + out +
         " transpose(p), dimensions={1,0}\n}\n";
}

std::string Reduce(int64_t rows, int64_t columns, int dim) {
  std::string in = "f32[" + std::to_string(rows) + "," + std::to_string(columns) + "]";
  std::string out = "f32[" + std::to_string(dim == 1 ? rows : columns) + "]";
  return std::string(kAdd) + "r {\n  p = " + in + " parameter(0)\n  z = f32[] constant(0)\n" +
         "  ROOT r = " + out + " reduce(p, z), dimensions={" + std::to_string(dim) +
         "}, to_apply=add\n}\n";
}

struct Case {
  std::string name;
  std::string text;
  int64_t input_mib;
};

constexpr int kRounds = 3;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct Round {
  double copy = 0;  // bytes/s
  double default_fraction = 0;
  double best_fraction = 0;
};

struct Result {
  std::string name;
  std::string emitter;
  int64_t input_mib = 0;
  double default_fraction = 0;  // the rounds' medians
  double best_fraction = 0;
  double sampled_best_fraction = 0;  // the sample's best, against the run's first copy
  std::vector<Round> rounds;
  int64_t configs = 0;
  nlohmann::json best_config;
  std::vector<std::pair<nlohmann::json, double>> named;  // --config fractions, valid ones
};

Result Measure(const Case& c, double copy, int repetitions, int64_t sample,
               const std::vector<nlohmann::json>& named) {
  auto module = tilesmith::hlo::ParseHloModule(c.text, c.name);
  if (!module) tilesmith::bench::Fail(module.error().message);
  const tilesmith::hlo::HloComputation& fusion = *(*module)->fusion();
  auto analysis = tilesmith::analysis::AnalyzeFusion(fusion);
  auto arguments = tilesmith::hlo::MakeRandomArguments(fusion, /*seed=*/1);
  if (!arguments) tilesmith::bench::Fail(arguments.error().message);
  auto device = tilesmith::emitters::DeviceInfo::ForTarget(tilesmith::emitters::Target::Host());
  std::vector<nlohmann::json> valid;
  for (const auto& entry : tilesmith::emitters::ConfigSpace(analysis, device)) {
    if (entry.valid()) valid.push_back(entry.config);
  }
  // The default, then a fixed-seed random sample of the valid space (a stride through the
  // space's nested order would alias with its innermost fields).
  std::vector<nlohmann::json> configs = {tilesmith::emitters::DefaultConfig(analysis, device)};
  std::mt19937_64 random(7);
  std::shuffle(valid.begin(), valid.end(), random);
  int64_t count = std::min<int64_t>(sample, static_cast<int64_t>(valid.size()));
  configs.insert(configs.end(), valid.begin(), valid.begin() + count);
  size_t sampled = configs.size();
  for (const nlohmann::json& config : named) {
    nlohmann::json merged = configs.front();
    merged.merge_patch(config);
    if (tilesmith::emitters::ValidateConfig(analysis, merged, device)) configs.push_back(merged);
  }
  Result result;
  result.name = c.name;
  result.emitter = std::string(tilesmith::emitters::EmitterFor(analysis).name());
  result.input_mib = c.input_mib;
  result.configs = static_cast<int64_t>(configs.size());
  size_t best = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    PreparedKernel prepared = tilesmith::bench::Prepare(fusion, analysis, *arguments, configs[i]);
    double fraction = prepared.bytes / prepared.TimeFromMemory(repetitions) / copy;
    if (i >= sampled) result.named.push_back({configs[i], fraction});
    if (fraction > result.sampled_best_fraction) {
      result.sampled_best_fraction = fraction;
      best = i;
    }
  }
  result.best_config = configs[best];
  PreparedKernel default_kernel =
      tilesmith::bench::Prepare(fusion, analysis, *arguments, configs.front());
  PreparedKernel best_kernel =
      tilesmith::bench::Prepare(fusion, analysis, *arguments, configs[best]);
  std::vector<double> defaults, bests;
  for (int round = 0; round < kRounds; ++round) {
    Round r;
    r.copy = tilesmith::bench::CopyBandwidth(size_t{64} << 20, repetitions);
    r.default_fraction = default_kernel.bytes / default_kernel.TimeFromMemory(repetitions) / r.copy;
    r.best_fraction = best_kernel.bytes / best_kernel.TimeFromMemory(repetitions) / r.copy;
    defaults.push_back(r.default_fraction);
    bests.push_back(r.best_fraction);
    result.rounds.push_back(r);
  }
  result.default_fraction = Median(defaults);
  result.best_fraction = Median(bests);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string json_path;
  std::string only;
  std::vector<nlohmann::json> named;
  int64_t sample = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else if (std::strcmp(argv[i], "--sample") == 0 && i + 1 < argc) {
      sample = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      named.push_back(nlohmann::json::parse(argv[++i], nullptr, /*allow_exceptions=*/false));
      if (!named.back().is_object()) tilesmith::bench::Fail("--config takes a JSON object");
    } else {
      std::fprintf(stderr,
                   "usage: emitter_bench [--quick] [--only TEXT] [--config JSON]... [--sample N] "
                   "[--json OUT]\n");
      return 2;
    }
  }
  int repetitions = quick ? 3 : 5;
  if (sample < 0) sample = quick ? 12 : 48;
  std::vector<Case> cases;
  // Square f32 arrays of 4, 16 and 64 MiB (1024^2, 2048^2, 4096^2 elements).
  std::vector<int64_t> sides =
      quick ? std::vector<int64_t>{1024, 2048} : std::vector<int64_t>{1024, 2048, 4096};
  for (int64_t side : sides) {
    int64_t mib = side * side * 4 >> 20;
    std::string dims = "[" + std::to_string(side) + "," + std::to_string(side) + "]";
    cases.push_back({"transpose f32" + dims, Transpose(side, side), mib});
    cases.push_back({"row reduce f32" + dims, Reduce(side, side, 1), mib});
    cases.push_back({"column reduce f32" + dims, Reduce(side, side, 0), mib});
  }
  double copy = tilesmith::bench::CopyBandwidth(size_t{64} << 20, repetitions);
  std::printf("copy bandwidth (read+write, %d threads, 64 MiB): %.2f GB/s\n",
              tilesmith::ThreadPool::Default().size(), copy / 1e9);
  std::printf("%-28s %-10s %8s %9s %9s %9s  %s\n", "fusion", "emitter", "configs", "default",
              "best", "sampled", "best config");
  nlohmann::json out = {{"copy_bytes_per_second", copy}, {"fusions", nlohmann::json::array()}};
  for (const Case& c : cases) {
    if (c.name.find(only) == std::string::npos) continue;
    Result r = Measure(c, copy, repetitions, sample, named);
    std::printf("%-28s %-10s %8lld %8.0f%% %8.0f%% %8.0f%%  %s\n", r.name.c_str(),
                r.emitter.c_str(), static_cast<long long>(r.configs), 100 * r.default_fraction,
                100 * r.best_fraction, 100 * r.sampled_best_fraction, r.best_config.dump().c_str());
    for (const auto& [config, fraction] : r.named) {
      std::printf("%-28s %-10s %8s %9s %9s %8.0f%%  %s\n", "", "", "", "", "--config",
                  100 * fraction, config.dump().c_str());
    }
    std::fflush(stdout);
    out["fusions"].push_back({{"name", r.name},
                              {"emitter", r.emitter},
                              {"input_mib", r.input_mib},
                              {"configs", r.configs},
                              {"default_fraction_of_copy", r.default_fraction},
                              {"best_fraction_of_copy", r.best_fraction},
                              {"sampled_best_fraction_of_copy", r.sampled_best_fraction},
                              {"best_config", r.best_config},
                              {"rounds", nlohmann::json::array()}});
    for (const Round& round : r.rounds) {
      out["fusions"].back()["rounds"].push_back(
          {{"copy_bytes_per_second", round.copy},
           {"default_fraction_of_copy", round.default_fraction},
           {"best_fraction_of_copy", round.best_fraction}});
    }
    for (const auto& [config, fraction] : r.named) {
      out["fusions"].back()["configs_asked"].push_back(
          {{"config", config}, {"fraction_of_copy", fraction}});
    }
  }
  if (!json_path.empty()) tilesmith::bench::WriteOutput(json_path, out.dump(2) + "\n", "figures");
  return 0;
}
