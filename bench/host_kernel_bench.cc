// Host kernel speed against the machine's copy bandwidth, measured side by side in one run:
// a parallel memcpy over the same thread pool gives the achievable bytes/s; GELU-sized
// elementwise fusions compiled with their default config report the fraction of it they
// reach (read + write bytes over time). Goal: >= 60%.
//
//   host_kernel_bench [--quick] [--json OUT]
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_output.h"
#include "bench/bench_util.h"

namespace {

using tilesmith::bench::Best;
using tilesmith::bench::CopyBandwidth;

struct KernelResult {
  std::string name;
  double bytes_per_second;
  double seconds;
  std::string config;
};

KernelResult MeasureFusion(const std::string& name, const std::string& text, int repetitions,
                           const nlohmann::json& config = nullptr) {
  auto module = tilesmith::hlo::ParseHloModule(text, name);
  if (!module) tilesmith::bench::Fail(module.error().message);
  const tilesmith::hlo::HloComputation& fusion = *(*module)->fusion();
  auto analysis = tilesmith::analysis::AnalyzeFusion(fusion);
  // Realistic inputs matter: a byte pattern decodes to tiny floats whose cubes are
  // denormals, which x86 computes two orders of magnitude slower.
  auto arguments = tilesmith::hlo::MakeRandomArguments(fusion, /*seed=*/1);
  if (!arguments) tilesmith::bench::Fail(arguments.error().message);
  tilesmith::bench::PreparedKernel prepared =
      tilesmith::bench::Prepare(fusion, analysis, *arguments, config);
  double seconds = prepared.Time(repetitions);
  double bytes = prepared.bytes;
  return {name, bytes / seconds, seconds, prepared.kernel->kernel().config_json};
}

std::string Gelu(const std::string& type, const std::string& dims) {
  std::string s = type + "[" + dims + "]";
  std::string t = type + "[]";
  return "gelu {\n  p = " + s + " parameter(0)\n" + "  h = " + t + " constant(0.5)\n  one = " + t +
         " constant(1)\n" + "  k = " + t + " constant(0.79785)\n  c = " + t +
         " constant(0.044708)\n" + "  bh = " + s + " broadcast(h), dimensions={}\n  b1 = " + s +
         " broadcast(one), dimensions={}\n" + "  bk = " + s +
         " broadcast(k), dimensions={}\n  bc = " + s + " broadcast(c), dimensions={}\n" +
         "  sq = " + s + " multiply(p, p)\n  cube = " + s + " multiply(sq, p)\n" + "  m3 = " + s +
         " multiply(cube, bc)\n  a1 = " + s + " add(p, m3)\n" + "  m2 = " + s +
         " multiply(a1, bk)\n  th = " + s + " tanh(m2)\n" + "  a0 = " + s +
         " add(th, b1)\n  m1 = " + s + " multiply(a0, bh)\n" + "  ROOT out = " + s +
         " multiply(p, m1)\n}\n";
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
      std::fprintf(stderr, "usage: host_kernel_bench [--quick] [--json OUT]\n");
      return 2;
    }
  }
  std::string dims = quick ? "2,512,4096" : "6,512,4096";
  int repetitions = quick ? 3 : 7;
  size_t f32_bytes = (quick ? 2 : 6) * 512 * 4096 * sizeof(float);
  double copy = CopyBandwidth(f32_bytes, repetitions);
  std::vector<KernelResult> results = {
      MeasureFusion("add f32[" + dims + "]",
                    "f {\n  a = f32[" + dims + "] parameter(0)\n  b = f32[" + dims +
                        "] parameter(1)\n  ROOT s = f32[" + dims + "] add(a, b)\n}\n",
                    repetitions),
      MeasureFusion("gelu f32[" + dims + "]", Gelu("f32", dims), repetitions),
      MeasureFusion("gelu bf16[" + dims + "]", Gelu("bf16", dims), repetitions),
      // Side by side: the 4-wide unroll XLA's GPU rule picks, against the host default
      // that fills a 256-bit register.
      MeasureFusion("gelu f32 vector=4", Gelu("f32", dims), repetitions, {{"vector", 4}}),
  };
  std::printf("copy bandwidth (read+write, %d threads): %.2f GB/s\n",
              tilesmith::ThreadPool::Default().size(), copy / 1e9);
  std::printf("%-28s %10s %10s %12s\n", "fusion", "ms", "GB/s", "of copy");
  nlohmann::json out = {{"copy_bytes_per_second", copy}, {"fusions", nlohmann::json::array()}};
  for (const KernelResult& r : results) {
    std::printf("%-28s %10.2f %10.2f %11.0f%%\n", r.name.c_str(), r.seconds * 1e3,
                r.bytes_per_second / 1e9, 100 * r.bytes_per_second / copy);
    out["fusions"].push_back({{"name", r.name},
                              {"seconds", r.seconds},
                              {"bytes_per_second", r.bytes_per_second},
                              {"fraction_of_copy", r.bytes_per_second / copy},
                              {"config", nlohmann::json::parse(r.config)}});
  }
  if (!json_path.empty()) tilesmith::bench::WriteOutput(json_path, out.dump(2) + "\n", "figures");
  return 0;
}
