// What the tests of the loop-like emitters share: parsing, the devices, and running a
// kernel on the host against the evaluator.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/host_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/emitters/reduction_emitter.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/literal_compare.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::emitters::testing {

inline std::unique_ptr<hlo::HloModule> Parse(std::string_view text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

inline const DeviceInfo& H100() {
  static const DeviceInfo device = DeviceInfo::ForTarget(*Target::Parse("cuda:sm_90"));
  return device;
}

inline const DeviceInfo& Host() {
  static const DeviceInfo device = DeviceInfo::ForTarget(Target::Host());
  return device;
}

/// The message of a failed status, "" for OK.
inline std::string Reason(const Status& status) { return status ? "" : status.error().message; }

/// Runs `fusion` on the host with `config` (null: the default) on `args`; "" when every
/// output equals the evaluator's (within its tolerance), else what differs.
inline std::string HostMismatch(const hlo::HloComputation& fusion, const nlohmann::json& config,
                                std::span<const hlo::Literal> args) {
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  auto kernel = EmitKernel(analysis, config, Host());
  if (!kernel) return "emit: " + kernel.error().message;
  auto compiled = codegen::CompileForHost(std::move(*kernel));
  if (!compiled) return "compile: " + compiled.error().message;
  auto outputs = (*compiled)->Run(args);
  if (!outputs) return "run: " + outputs.error().message;
  auto expected = hlo::Evaluate(fusion, args);
  if (!expected) return "evaluate: " + expected.error().message;
  std::vector<const hlo::Literal*> leaves;
  std::function<void(const hlo::Literal&)> flatten = [&](const hlo::Literal& value) {
    if (!value.shape().IsTuple()) {
      leaves.push_back(&value);
      return;
    }
    for (const hlo::Literal& element : value.tuple_elements()) flatten(element);
  };
  flatten(*expected);
  if (leaves.size() != outputs->size()) return "output count differs";
  // A reduction kernel sums in a tree, the evaluator in order.
  int64_t terms = ReassociatedTerms(analysis, (*compiled)->kernel());
  for (size_t i = 0; i < leaves.size(); ++i) {
    hlo::Comparison comparison = hlo::CompareLiterals((*outputs)[i], *leaves[i], terms);
    if (!comparison.matches) {
      return "output " + std::to_string(i) + " config " + config.dump() + ": " +
             comparison.first_mismatch;
    }
  }
  return "";
}

/// HostMismatch with random arguments of `seed`.
inline std::string HostMismatch(const hlo::HloComputation& fusion, const nlohmann::json& config,
                                uint64_t seed = 0) {
  auto args = hlo::MakeRandomArguments(fusion, seed);
  if (!args) return "arguments: " + args.error().message;
  return HostMismatch(fusion, config, *args);
}

/// Every valid config of the fusion's space with `threads` threads per block (a slice of
/// the space that keeps the test fast and still varies vector and chunks).
inline std::vector<nlohmann::json> ValidConfigs(const analysis::FusionAnalysis& analysis,
                                                const DeviceInfo& device, int64_t threads) {
  std::vector<nlohmann::json> configs;
  for (const SpaceEntry& entry : ConfigSpace(analysis, device)) {
    if (entry.valid() && entry.config["threads_per_block"] == threads) {
      configs.push_back(entry.config);
    }
  }
  return configs;
}

}  // namespace tilesmith::emitters::testing
