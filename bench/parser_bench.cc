// Parser throughput: generates HLO modules of growing size (a realistic mix of elementwise
// chains, broadcasts, reductions with reducers, constants, tiled layouts, metadata) and
// reports MB/s per size and how time grows with size (1.0 = perfectly linear).
//
//   parser_bench [--quick] [--json OUT]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

struct Measurement {
  int64_t instructions;
  double megabytes;
  double seconds;
};

Measurement Measure(int64_t instructions, int repetitions) {
  std::string text = GenerateModule(instructions);
  double best = 1e30;
  for (int r = 0; r < repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    auto module = tilesmith::hlo::ParseHloModule(text, "bench.hlo");
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!module) {
      std::fprintf(stderr, "parse failed: %s\n", module.error().message.c_str());
      std::exit(1);
    }
    best = std::min(best, seconds);
  }
  return {instructions, static_cast<double>(text.size()) / 1e6, best};
}

}  // namespace

int main(int argc, char** argv) {
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
  std::vector<int64_t> sizes = quick ? std::vector<int64_t>{10'000, 100'000}
                                     : std::vector<int64_t>{10'000, 100'000, 400'000};
  int repetitions = quick ? 2 : 3;
  std::vector<Measurement> results;
  std::printf("%-14s %10s %10s %10s %14s\n", "instructions", "MB", "seconds", "MB/s",
              "time/size vs smallest");
  for (int64_t size : sizes) {
    Measurement m = Measure(size, repetitions);
    results.push_back(m);
    double growth = (m.seconds / m.megabytes) / (results[0].seconds / results[0].megabytes);
    std::printf("%-14lld %10.1f %10.3f %10.1f %14.2f\n", static_cast<long long>(m.instructions),
                m.megabytes, m.seconds, m.megabytes / m.seconds, growth);
  }
  const Measurement& largest = results.back();
  std::printf("largest module: %.1f MB/s (goal >= 50 MB/s)\n", largest.megabytes / largest.seconds);
  if (!json_path.empty()) {
    nlohmann::json out = nlohmann::json::array();
    for (const Measurement& m : results) {
      out.push_back({{"instructions", m.instructions},
                     {"megabytes", m.megabytes},
                     {"seconds", m.seconds},
                     {"megabytes_per_second", m.megabytes / m.seconds},
                     {"seconds_per_megabyte_vs_smallest",
                      (m.seconds / m.megabytes) / (results[0].seconds / results[0].megabytes)}});
    }
    std::ofstream(json_path) << nlohmann::json{{"parser", out}}.dump(2) << "\n";
  }
  return 0;
}
