// Compile throughput of the NVPTX target: fusion -> PTX and fusion -> cubin per candidate,
// for a sweep of GELU loop configs and for every file of the shared XLA corpus (default
// config), with the median time of each step. Goal: <= 30 ms to PTX and <= 60 ms
// to cubin per loop candidate. Also the candidates/s of a compile pool using every core.
//
//   compile_bench [--quick] [--json OUT] [--corpus DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_output.h"
#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/cuda_toolkit.h"
#include "compiler/codegen/nvptx_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/parser.h"
#include "support/thread_pool.h"

namespace {

namespace fs = std::filesystem;
using tilesmith::codegen::NvptxStage;
using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "compile_bench: %s\n", message.c_str());
  std::exit(1);
}

// One candidate: a fusion and a config (null: the default).
struct Candidate {
  std::string name;
  const tilesmith::hlo::HloComputation* fusion;
  nlohmann::json config;
};

// The times of one compilation of a candidate, in ms.
struct Sample {
  double kernel_ir = 0;  // analysis + emitter
  tilesmith::codegen::NvptxTimings steps;
  double total = 0;  // wall time, fusion to the last stage
};

Sample Compile(const Candidate& candidate, NvptxStage stage) {
  static const tilesmith::emitters::Target kTarget =
      tilesmith::emitters::Target::Parse("cuda:sm_90").value();
  auto start = Clock::now();
  Sample sample;
  auto analysis = tilesmith::analysis::AnalyzeFusion(*candidate.fusion);
  auto kernel = tilesmith::emitters::EmitKernel(
      analysis, candidate.config, tilesmith::emitters::DeviceInfo::ForTarget(kTarget));
  if (!kernel) Die(candidate.name + ": " + kernel.error().message);
  sample.kernel_ir = Ms(start);
  auto compiled = tilesmith::codegen::CompileForNvptx(*kernel, kTarget, stage);
  if (!compiled) Die(candidate.name + ": " + compiled.error().message);
  sample.steps = compiled->timings;
  sample.total = Ms(start);
  return sample;
}

// Medians of every step over `samples`.
nlohmann::json Summary(const std::vector<Sample>& samples) {
  auto median_of = [&](auto field) {
    std::vector<double> values;
    for (const Sample& sample : samples) values.push_back(field(sample));
    return Median(values);
  };
  double total = median_of([](const Sample& s) { return s.total; });
  return {{"median_ms", total},
          {"candidates_per_second", total > 0 ? 1000 / total : 0},
          {"kernel_ir_ms", median_of([](const Sample& s) { return s.kernel_ir; })},
          {"emit_ms", median_of([](const Sample& s) { return s.steps.emit_ms; })},
          {"libdevice_ms", median_of([](const Sample& s) { return s.steps.libdevice_ms; })},
          {"optimize_ms", median_of([](const Sample& s) { return s.steps.optimize_ms; })},
          {"ptx_ms", median_of([](const Sample& s) { return s.steps.ptx_ms; })},
          {"cubin_ms", median_of([](const Sample& s) { return s.steps.cubin_ms; })},
          {"samples", samples.size()}};
}

// Every candidate `repetitions` times to `stage`, one after another.
nlohmann::json Sequential(const std::vector<Candidate>& candidates, NvptxStage stage,
                          int repetitions) {
  std::vector<Sample> samples;
  for (int r = 0; r < repetitions; ++r) {
    for (const Candidate& candidate : candidates) samples.push_back(Compile(candidate, stage));
  }
  return Summary(samples);
}

// Candidates/s of a compile pool with one worker per core, to cubin.
double PoolThroughput(const std::vector<Candidate>& candidates, int repetitions) {
  tilesmith::ThreadPool& pool = tilesmith::ThreadPool::Default();
  int64_t count = static_cast<int64_t>(candidates.size()) * repetitions;
  auto start = Clock::now();
  pool.ParallelFor(
      count, [&](int64_t i) { Compile(candidates[i % candidates.size()], NvptxStage::kCubin); });
  return static_cast<double>(count) / (Ms(start) / 1000);
}

void Print(const std::string& what, const nlohmann::json& s) {
  std::printf("%-34s %8.1f %8.1f %7.1f %7.1f %8.1f %7.1f %7.1f %7.1f\n", what.c_str(),
              s["median_ms"].get<double>(), s["candidates_per_second"].get<double>(),
              s["kernel_ir_ms"].get<double>(), s["emit_ms"].get<double>(),
              s["optimize_ms"].get<double>(), s["libdevice_ms"].get<double>(),
              s["ptx_ms"].get<double>(), s["cubin_ms"].get<double>());
}

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

fs::path FindCorpus(const std::string& flag) {
  std::vector<fs::path> candidates;
  if (!flag.empty()) candidates.emplace_back(flag);
  if (const char* env = std::getenv("TILESMITH_CORPUS_DIR")) candidates.emplace_back(env);
  candidates.push_back(fs::path(TILESMITH_SOURCE_DIR) / ".." / "shared" / "corpus");
  for (const fs::path& candidate : candidates) {
    if (fs::is_directory(candidate / "xla")) return candidate / "xla";
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string json_path;
  std::string corpus_flag;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else if (std::strcmp(argv[i], "--corpus") == 0 && i + 1 < argc) {
      corpus_flag = argv[++i];
    } else {
      std::fprintf(stderr, "usage: compile_bench [--quick] [--json OUT] [--corpus DIR]\n");
      return 2;
    }
  }
  if (!tilesmith::codegen::CudaToolkitDir() || !tilesmith::codegen::CanMakeCubins()) {
    std::printf("compile_bench: skipped, no CUDA toolkit (libdevice, nvJitLink or ptxas)\n");
    return 0;
  }
  int repetitions = quick ? 2 : 5;

  // GELU: the default config and a sweep of loop configs, as the tuner would compile them.
  auto gelu_module = tilesmith::hlo::ParseHloModule(
      ReadFile(fs::path(TILESMITH_SOURCE_DIR) / "configs/examples/gelu.hlo"), "gelu.hlo");
  if (!gelu_module) Die(gelu_module.error().message);
  const auto* gelu = (*gelu_module)->fusion();
  std::vector<Candidate> gelu_default = {{"gelu default", gelu, nullptr}};
  std::vector<Candidate> gelu_sweep;
  for (int threads : {64, 128, 256, 512}) {
    for (int vector : {1, 2, 4, 8}) {
      gelu_sweep.push_back({"gelu", gelu, {{"threads_per_block", threads}, {"vector", vector}}});
    }
  }
  Compile(gelu_default[0], NvptxStage::kCubin);  // warm-up: libdevice read, nvJitLink loaded

  // The corpus, default configs.
  std::vector<std::unique_ptr<tilesmith::hlo::HloModule>> modules;
  std::vector<Candidate> corpus;
  std::vector<std::string> skipped;
  if (fs::path dir = FindCorpus(corpus_flag); !dir.empty()) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (entry.path().extension() == ".hlo") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      auto module = tilesmith::hlo::ParseHloModule(ReadFile(file), file.string());
      if (!module) Die(module.error().message);
      Candidate candidate{file.parent_path().filename().string() + "/" + file.stem().string(),
                          (*module)->fusion(), nullptr};
      // Kernels the emitters cannot produce yet are reported, not timed.
      auto analysis = tilesmith::analysis::AnalyzeFusion(*candidate.fusion);
      auto target = tilesmith::emitters::Target::Parse("cuda:sm_90").value();
      auto kernel = tilesmith::emitters::EmitKernel(
          analysis, nullptr, tilesmith::emitters::DeviceInfo::ForTarget(target));
      if (!kernel || !tilesmith::codegen::CompileForNvptx(*kernel, target, NvptxStage::kPtx)) {
        skipped.push_back(candidate.name);
        continue;
      }
      corpus.push_back(candidate);
      modules.push_back(std::move(*module));
    }
  }

  nlohmann::json out = {{"target", "cuda:sm_90"}, {"repetitions", repetitions}};
  std::printf(
      "fusion -> stage, per candidate (ms; medians)  total  cand/s  kir   emit  optimize "
      "libdev   ptx   cubin\n");
  auto run = [&](const std::string& key, const std::vector<Candidate>& set, const char* label) {
    if (set.empty()) return;
    nlohmann::json ptx = Sequential(set, NvptxStage::kPtx, repetitions);
    nlohmann::json cubin = Sequential(set, NvptxStage::kCubin, repetitions);
    Print(std::string(label) + " -> PTX", ptx);
    Print(std::string(label) + " -> cubin", cubin);
    out[key] = {{"candidates", set.size()}, {"to_ptx", ptx}, {"to_cubin", cubin}};
  };
  run("gelu_default", gelu_default, "GELU default");
  run("gelu_sweep", gelu_sweep, "GELU sweep (16 configs)");
  run("corpus", corpus, ("corpus (" + std::to_string(corpus.size()) + " files)").c_str());

  int workers = tilesmith::ThreadPool::Default().size();
  double pool = PoolThroughput(gelu_sweep, quick ? 1 : 2);
  std::printf("GELU sweep -> cubin, pool of %d workers: %.1f candidates/s\n", workers, pool);
  out["pool"] = {{"workers", workers}, {"candidates_per_second", pool}};
  for (const std::string& name : skipped) std::printf("not compiled (emitter): %s\n", name.c_str());
  out["not_compiled"] = skipped;
  if (!json_path.empty()) tilesmith::bench::WriteOutput(json_path, out.dump(2) + "\n", "figures");
  return 0;
}
