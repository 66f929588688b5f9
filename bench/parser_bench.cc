// Parser throughput: generates HLO modules of growing size (a realistic mix of elementwise
// chains, broadcasts, reductions with reducers, constants, tiled layouts, metadata, and a
// module of plain `add`s with layouts) and reports MB/s per size, how time grows with size
// (the exponent of a log-log fit, 1.0 = perfectly linear) and the peak memory a parse takes
// against the text size (measured in a fresh child process), each against its goal.
//
//   parser_bench [--quick] [--json OUT]
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_output.h"
#include "compiler/hlo/parser.h"

namespace {

// One module with about `instructions` instructions in computations of 1000 each.
std::string GenerateModule(int64_t instructions) {
  std::string text = "HloModule bench, is_scheduled=true\n\n";
  text +=
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, "
      "b)\n}\n\n";
  const char* unary[] = {"exponential", "tanh", "negate", "log", "sqrt", "abs"};
  const char* binary[] = {"add", "multiply", "subtract", "maximum", "divide"};
  int64_t per_computation = 1000;
  int64_t computations = std::max<int64_t>(1, instructions / per_computation);
  for (int64_t c = 0; c < computations; ++c) {
    text += (c + 1 == computations ? "ENTRY fused_computation." : "fused_computation.") +
            std::to_string(c) + " {\n";
    text += "  param_0.1 = f32[128,1024]{1,0:T(8,128)} parameter(0)\n";
    text += "  param_1.1 = f32[1024]{0} parameter(1)\n";
    text += "  constant.1 = f32[] constant(0.044715)\n";
    std::string previous = "param_0.1";
    for (int64_t i = 0; i + 4 < per_computation; i += 4) {
      std::string n = std::to_string(i);
      std::string shape = "f32[128,1024]{1,0:T(8,128)}";
      text += "  broadcast." + n + " = " + shape + " broadcast(param_1.1), dimensions={1}\n";
      text += "  " + std::string(unary[i % 6]) + "." + n + " = " + shape + " " + unary[i % 6] +
              "(" + previous + "), metadata={op_name=\"jit(model)/layer_" + n +
              "\" source_file=\"model.py\" source_line=" + std::to_string(i % 500) + "}\n";
      text += "  " + std::string(binary[i % 5]) + "." + n + " = " + shape + " " + binary[i % 5] +
              "(" + unary[i % 6] + "." + n + ", broadcast." + n + ")\n";
      previous = std::string(binary[i % 5]) + "." + n;
      text += "  reduce." + n + " = f32[128]{0} reduce(" + previous +
              ", constant.1), dimensions={1}, to_apply=add\n";
    }
    text += "  ROOT tuple.1 = (f32[128,1024]{1,0:T(8,128)}) tuple(" + previous + ")\n}\n\n";
  }
  return text;
}

// `instructions` plain adds with layouts in one computation: `add.N = f32[8,128]{1,0} add(x, y)`.
std::string GenerateAdds(int64_t instructions) {
  std::string text = "HloModule adds\n\nENTRY adds {\n";
  text += "  x = f32[8,128]{1,0} parameter(0)\n  y = f32[8,128]{1,0} parameter(1)\n";
  text.reserve(text.size() + static_cast<size_t>(instructions) * 48);
  for (int64_t i = 0; i < instructions; ++i) {
    text += "  add." + std::to_string(i) + " = f32[8,128]{1,0} add(x, y)\n";
  }
  text += "}\n";
  return text;
}

constexpr double kThroughputGoal = 100;  // MB/s, at every size
constexpr double kMemoryGoal = 10;       // peak memory / text size

struct Measurement {
  std::string module;
  int64_t instructions;
  double megabytes;
  double seconds;
  double cpu_seconds;  // CPU time of the best parse: steadier than wall time on a busy machine
  double peak_bytes;   // growth of the peak resident set during one parse; < 0 if unknown
};

int64_t StatusField(const char* field) {  // kB
  std::FILE* file = std::fopen("/proc/self/status", "r");
  if (file == nullptr) return -1;
  char line[256];
  int64_t value = -1;
  size_t length = std::strlen(field);
  while (std::fgets(line, sizeof line, file) != nullptr) {
    if (std::strncmp(line, field, length) == 0) value = std::atoll(line + length);
  }
  std::fclose(file);
  return value;
}

std::string Generate(const std::string& module, int64_t instructions) {
  return module == "adds" ? GenerateAdds(instructions) : GenerateModule(instructions);
}

// The child side of PeakParseBytes: generates the module, resets the peak resident set
// (VmHWM) to the current one ("5" to /proc/self/clear_refs) so that the peak counts only
// what the parse allocates, parses, and prints the growth in bytes (-1 if unmeasurable).
int PeakMemoryChild(const std::string& module, int64_t instructions) {
  std::string text = Generate(module, instructions);
  malloc_trim(0);
  bool reset = false;
  if (std::FILE* refs = std::fopen("/proc/self/clear_refs", "w")) {
    reset = std::fputs("5", refs) >= 0;
    reset = std::fclose(refs) == 0 && reset;
  }
  int64_t before = reset ? StatusField("VmRSS:") : -1;
  auto parsed = tilesmith::hlo::ParseHloModule(text, "bench.hlo");
  int64_t after = reset ? StatusField("VmHWM:") : -1;
  double bytes =
      parsed && before >= 0 && after >= 0 ? static_cast<double>(after - before) * 1024 : -1;
  std::printf("%.0f\n", bytes);
  return 0;
}

// Peak resident growth of one parse, in bytes, measured in a fresh process (this binary
// run again): a forked child would reuse the parent's freed heap and under-count.
double PeakParseBytes(const std::string& module, int64_t instructions) {
  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return -1;
  self[length] = '\0';
  std::string command = "'" + std::string(self) + "' --peak-memory-child " + module + " " +
                        std::to_string(instructions);
  std::FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) return -1;
  double bytes = -1;
  if (std::fscanf(child, "%lf", &bytes) != 1) bytes = -1;
  if (pclose(child) != 0) bytes = -1;
  return bytes;
}

double CpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

Measurement Measure(const std::string& module, int64_t instructions, int repetitions) {
  std::string text = Generate(module, instructions);
  // At least `repetitions` parses, and more for small modules until half a second is
  // spent: the best of many is steady on a busy machine.
  double best = 1e30;
  double best_cpu = 1e30;
  double spent = 0;
  for (int r = 0; r < repetitions || (spent < 0.5 && r < 100); ++r) {
    double cpu_start = CpuSeconds();
    auto start = std::chrono::steady_clock::now();
    auto parsed = tilesmith::hlo::ParseHloModule(text, "bench.hlo");
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best_cpu = std::min(best_cpu, CpuSeconds() - cpu_start);
    if (!parsed) {
      std::fprintf(stderr, "parse failed: %s\n", parsed.error().message.c_str());
      std::exit(1);
    }
    best = std::min(best, seconds);
    spent += seconds;
  }
  return {module, instructions, static_cast<double>(text.size()) / 1e6,
          best,   best_cpu,     PeakParseBytes(module, instructions)};
}

// Least-squares slope of log(seconds) against log(instructions) over the results from
// `min_instructions` on: 1.0 is linear growth.
double GrowthExponent(const std::vector<Measurement>& results, int64_t min_instructions = 0) {
  std::vector<Measurement> fitted;
  for (const Measurement& m : results) {
    if (m.instructions >= min_instructions) fitted.push_back(m);
  }
  if (fitted.size() < 2) return 1.0;
  double n = static_cast<double>(fitted.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Measurement& m : fitted) {
    double x = std::log(static_cast<double>(m.instructions));
    double y = std::log(m.seconds);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

double MemoryRatio(const Measurement& m) {
  return m.peak_bytes < 0 ? -1 : m.peak_bytes / (m.megabytes * 1e6);
}

void PrintRow(const Measurement& m, const Measurement& smallest) {
  double growth = (m.seconds / m.megabytes) / (smallest.seconds / smallest.megabytes);
  std::printf("%-6s %-12lld %8.1f %9.3f %8.1f %10.1f %14.2f %12.1f\n", m.module.c_str(),
              static_cast<long long>(m.instructions), m.megabytes, m.seconds,
              m.megabytes / m.seconds, m.megabytes / m.cpu_seconds, growth, MemoryRatio(m));
}

nlohmann::json RowJson(const Measurement& m, const Measurement& smallest) {
  return {{"instructions", m.instructions},
          {"megabytes", m.megabytes},
          {"seconds", m.seconds},
          {"megabytes_per_second", m.megabytes / m.seconds},
          {"cpu_seconds", m.cpu_seconds},
          {"cpu_megabytes_per_second", m.megabytes / m.cpu_seconds},
          {"seconds_per_megabyte_vs_smallest",
           (m.seconds / m.megabytes) / (smallest.seconds / smallest.megabytes)},
          {"peak_memory_bytes", m.peak_bytes},
          {"peak_memory_vs_text", MemoryRatio(m)}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--peak-memory-child") == 0) {
    return PeakMemoryChild(argv[2], std::atoll(argv[3]));
  }
  bool quick = false;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: parser_bench [--quick] [--json OUT]\n");
      return 2;
    }
  }
  std::vector<int64_t> sizes = quick ? std::vector<int64_t>{10'000, 100'000, 200'000}
                                     : std::vector<int64_t>{10'000, 100'000, 400'000, 1'000'000};
  int64_t adds = quick ? 100'000 : 400'000;
  int repetitions = quick ? 2 : 3;
  std::vector<Measurement> results;
  std::printf("%-6s %-12s %8s %9s %8s %10s %14s %12s\n", "module", "instructions", "MB", "seconds",
              "MB/s", "CPU MB/s", "time/MB vs 1st", "peak mem/MB");
  for (int64_t size : sizes) {
    results.push_back(Measure("mixed", size, repetitions));
    PrintRow(results.back(), results[0]);
  }
  Measurement add_result = Measure("adds", adds, repetitions);
  PrintRow(add_result, add_result);

  double slowest = add_result.megabytes / add_result.seconds;
  double slowest_cpu = add_result.megabytes / add_result.cpu_seconds;
  double worst_memory = MemoryRatio(add_result);
  for (const Measurement& m : results) {
    slowest = std::min(slowest, m.megabytes / m.seconds);
    slowest_cpu = std::min(slowest_cpu, m.megabytes / m.cpu_seconds);
    worst_memory = std::max(worst_memory, MemoryRatio(m));
  }
  // The headline fit starts where modules no longer fit in cache (100k instructions, about
  // 10 MB), so that it shows how the algorithm grows rather than the cache step below it.
  int64_t fit_from = results.size() >= 3 ? results[1].instructions : results[0].instructions;
  double exponent = GrowthExponent(results, fit_from);
  double exponent_all = GrowthExponent(results);
  const Measurement& largest = results.back();
  auto verdict = [](bool met) { return met ? "met" : "NOT MET"; };
  std::printf(
      "parser: %.0f MB/s at %lldk mixed instructions, %.0f MB/s at %lldk adds, slowest "
      "%.0f MB/s (goal >= %.0f): %s\n",
      largest.megabytes / largest.seconds, static_cast<long long>(largest.instructions / 1000),
      add_result.megabytes / add_result.seconds,
      static_cast<long long>(add_result.instructions / 1000), slowest, kThroughputGoal,
      verdict(slowest >= kThroughputGoal));
  std::printf(
      "  by CPU time (what the parse got of a busy machine): %.0f MB/s at %lldk mixed, "
      "%.0f MB/s at %lldk adds, slowest %.0f MB/s\n",
      largest.megabytes / largest.cpu_seconds, static_cast<long long>(largest.instructions / 1000),
      add_result.megabytes / add_result.cpu_seconds,
      static_cast<long long>(add_result.instructions / 1000), slowest_cpu);
  std::printf(
      "growth exponent %.2f over %lldk..%lldk instructions (goal ~1.0, <= 1.1): %s; %.2f from "
      "%lldk\n",
      exponent, static_cast<long long>(fit_from / 1000),
      static_cast<long long>(largest.instructions / 1000), verdict(exponent <= 1.1), exponent_all,
      static_cast<long long>(results.front().instructions / 1000));
  if (worst_memory < 0) {
    std::printf("peak memory: not measurable here (goal <= %.0fx text)\n", kMemoryGoal);
  } else {
    std::printf("peak memory %.1fx text at worst (goal <= %.0fx): %s\n", worst_memory, kMemoryGoal,
                verdict(worst_memory <= kMemoryGoal));
  }
  if (!json_path.empty()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const Measurement& m : results) rows.push_back(RowJson(m, results[0]));
    nlohmann::json out = {{"parser", rows},
                          {"adds", RowJson(add_result, add_result)},
                          {"slowest_megabytes_per_second", slowest},
                          {"slowest_cpu_megabytes_per_second", slowest_cpu},
                          {"growth_exponent", exponent},
                          {"growth_exponent_from_instructions", fit_from},
                          {"growth_exponent_all_sizes", exponent_all},
                          {"peak_memory_vs_text", worst_memory},
                          {"goals",
                           {{"megabytes_per_second", kThroughputGoal},
                            {"growth_exponent", 1.0},
                            {"peak_memory_vs_text", kMemoryGoal}}}};
    tilesmith::bench::WriteOutput(json_path, out.dump(2) + "\n", "figures");
  }
  return 0;
}
