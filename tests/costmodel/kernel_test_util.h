// Kernels for the analytic-model tests: an HLO fusion parsed, analysed and emitted with a
// config for a target, kept alive together; a fixed host machine.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/parser.h"
#include "costmodel/host_model.h"

namespace tilesmith::costmodel::testing {

struct TestKernel {
  std::unique_ptr<hlo::HloModule> module;
  std::unique_ptr<analysis::FusionAnalysis> analysis;
  emitters::KernelIR kernel;
};

inline emitters::DeviceInfo Device(std::string_view target) {
  return emitters::DeviceInfo::ForTarget(*emitters::Target::Parse(target));
}

/// A fixed machine for the host model: 8 threads, 40 GB/s DRAM (10 per thread), 200 GB/s
/// cached, 50 Gflop/s a thread, 5 µs dispatch.
inline HostCalibration FixedHostCalibration() {
  HostCalibration c;
  c.threads = 8;
  c.memory_bytes_per_us = 40e3;
  c.thread_memory_bytes_per_us = 10e3;
  c.cache_bytes_per_us = 200e3;
  c.thread_flops_per_us = 50e3;
  c.dispatch_us = 5;
  return c;
}

/// The kernel of `text`'s fusion for `config` (null: the default) on `target`.
inline TestKernel Emit(std::string_view text, const nlohmann::json& config = nullptr,
                       std::string_view target = "cuda:sm_90") {
  TestKernel result;
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  result.module = std::move(*module);
  result.analysis =
      std::make_unique<analysis::FusionAnalysis>(analysis::AnalyzeFusion(*result.module->fusion()));
  auto kernel = emitters::EmitKernel(*result.analysis, config, Device(target));
  EXPECT_TRUE(kernel.has_value()) << kernel.error().message;
  if (kernel) result.kernel = std::move(*kernel);
  return result;
}

inline constexpr char kElementwise[] = R"(f {
  p0 = f32[4194304] parameter(0)
  p1 = f32[4194304] parameter(1)
  e = f32[4194304] exponential(p0)
  ROOT a = f32[4194304] add(e, p1)
})";

inline constexpr char kTranspose[] = R"(f {
  p0 = f32[64,1024,1024] parameter(0)
  ROOT t = f32[64,1024,1024] transpose(p0), dimensions={0,2,1}
})";

}  // namespace tilesmith::costmodel::testing
