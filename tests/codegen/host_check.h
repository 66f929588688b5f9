// Running a fusion on the host the way every codegen test does: default emitter and
// config, compiled, run, and each output compared with the evaluator.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/host_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/literal_compare.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::codegen {

/// Where `actual` and `expected` (arrays of one type) differ in any bit, NaNs aside (their
/// payloads may differ); "" when they do not.
inline std::string FirstBitDifference(const hlo::Literal& actual, const hlo::Literal& expected) {
  hlo::PrimitiveType type = actual.element_type();
  for (int64_t i = 0; i < actual.element_count(); ++i) {
    bool same;
    if (hlo::IsComplex(type)) {
      std::complex<double> a = actual.GetComplex(i);
      std::complex<double> e = expected.GetComplex(i);
      auto part_same = [](double x, double y) {
        return (std::isnan(x) && std::isnan(y)) ||
               std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
      };
      same = part_same(a.real(), e.real()) && part_same(a.imag(), e.imag());
    } else if (hlo::IsFloatingPoint(type)) {
      same = (std::isnan(actual.GetDouble(i)) && std::isnan(expected.GetDouble(i))) ||
             actual.GetBits(i) == expected.GetBits(i);
    } else {
      same = actual.GetInt(i) == expected.GetInt(i);
    }
    if (!same) {
      return "index " + std::to_string(i) + ": " + hlo::ScalarToString(actual, i) + " vs " +
             hlo::ScalarToString(expected, i);
    }
  }
  return "";
}

/// The arrays of a value, depth first: one per kernel output (tuple results flattened).
inline std::vector<const hlo::Literal*> LiteralLeaves(const hlo::Literal& value) {
  if (!value.shape().IsTuple()) return {&value};
  std::vector<const hlo::Literal*> leaves;
  for (const hlo::Literal& element : value.tuple_elements()) {
    std::vector<const hlo::Literal*> inner = LiteralLeaves(element);
    leaves.insert(leaves.end(), inner.begin(), inner.end());
  }
  return leaves;
}

/// How closely a host kernel must match the evaluator.
enum class Match {
  kTolerance,  ///< hlo::CompareLiterals: a few ulps for floats
  kBits,       ///< every bit but NaN payloads: the host calls the evaluator's libm
};

/// One comparison per array output (tuple outputs flattened depth-first) of the host
/// kernel against `expected`, what the evaluator computed. Errors say which step failed.
inline Expected<std::vector<hlo::Comparison>> CheckOnHost(const hlo::HloComputation& fusion,
                                                          std::span<const hlo::Literal> args,
                                                          const hlo::Literal& expected,
                                                          const HostOptions& options = {},
                                                          Match match = Match::kTolerance) {
  analysis::FusionAnalysis analysis = analysis::AnalyzeFusion(fusion);
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  TS_ASSIGN_OR_RETURN(emitters::KernelIR kernel, emitters::EmitKernel(analysis, nullptr, device));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<HostKernel> compiled,
                      CompileForHost(std::move(kernel), options));
  TS_ASSIGN_OR_RETURN(std::vector<hlo::Literal> outputs, compiled->Run(args));
  std::vector<const hlo::Literal*> leaves = LiteralLeaves(expected);
  if (outputs.size() != leaves.size()) {
    return MakeError(ErrorCode::kInternal, std::to_string(outputs.size()) + " outputs for " +
                                               std::to_string(leaves.size()) + " results");
  }
  std::vector<hlo::Comparison> comparisons;
  for (size_t i = 0; i < outputs.size(); ++i) {
    comparisons.push_back(hlo::CompareLiterals(outputs[i], *leaves[i]));
    if (match == Match::kBits && comparisons.back().matches) {
      comparisons.back().first_mismatch = FirstBitDifference(outputs[i], *leaves[i]);
      comparisons.back().matches = comparisons.back().first_mismatch.empty();
    }
  }
  return comparisons;
}

/// What one config's kernel did on the host: its emitter, phase count, and one comparison
/// per array output with the evaluator's (floats within the tolerance for the order the
/// kernel combines values in: emitters::ReassociatedTerms).
struct ConfigCheck {
  std::string emitter;
  size_t phases = 0;
  std::vector<hlo::Comparison> comparisons;
};

inline Expected<ConfigCheck> CheckConfigOnHost(const analysis::FusionAnalysis& analysis,
                                               const nlohmann::json& config,
                                               std::span<const hlo::Literal> args,
                                               std::span<const hlo::Literal* const> expected) {
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  TS_ASSIGN_OR_RETURN(emitters::KernelIR kernel, emitters::EmitKernel(analysis, config, device));
  ConfigCheck check{kernel.emitter, kernel.phases.size(), {}};
  int64_t terms = emitters::ReassociatedTerms(analysis, kernel);
  TS_ASSIGN_OR_RETURN(std::unique_ptr<HostKernel> compiled, CompileForHost(std::move(kernel)));
  TS_ASSIGN_OR_RETURN(std::vector<hlo::Literal> outputs, compiled->Run(args));
  if (outputs.size() != expected.size()) {
    return MakeError(ErrorCode::kInternal, std::to_string(outputs.size()) + " outputs for " +
                                               std::to_string(expected.size()) + " results");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    check.comparisons.push_back(hlo::CompareLiterals(outputs[i], *expected[i], terms));
  }
  return check;
}

/// The default config (null) and `count` valid configs spread evenly through the fusion's
/// space on the host.
inline std::vector<nlohmann::json> DefaultAndSpreadConfigs(const analysis::FusionAnalysis& analysis,
                                                           size_t count) {
  emitters::DeviceInfo device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  std::vector<nlohmann::json> valid;
  for (const emitters::SpaceEntry& entry : emitters::ConfigSpace(analysis, device)) {
    if (entry.valid()) valid.push_back(entry.config);
  }
  std::vector<nlohmann::json> configs = {nullptr};
  for (size_t i = 0; i < count && !valid.empty(); ++i) {
    configs.push_back(valid[i * (valid.size() - 1) / std::max<size_t>(1, count - 1)]);
  }
  return configs;
}

/// An evaluator data case (tests/data/eval/*.hlo): the module text and its `// ARG i:`
/// literals.
struct DataCase {
  std::string path;
  std::string text;
  std::map<int64_t, std::string> args;
};

inline DataCase LoadDataCase(const std::filesystem::path& path) {
  DataCase c{path.string(), "", {}};
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  c.text = contents.str();
  std::istringstream lines(c.text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("// ARG ")) {
      size_t colon = line.find(':');
      c.args[std::stoll(line.substr(7, colon - 7))] = line.substr(colon + 1);
    }
  }
  return c;
}

/// The arguments of a data case, parsed for the parameters of `fusion`.
inline Expected<std::vector<hlo::Literal>> DataCaseArguments(const DataCase& c,
                                                             const hlo::HloComputation& fusion) {
  std::vector<hlo::Literal> args;
  for (int64_t i = 0; i < fusion.parameter_count(); ++i) {
    auto text = c.args.find(i);
    if (text == c.args.end()) return InvalidArgument(c.path + " has no ARG " + std::to_string(i));
    TS_ASSIGN_OR_RETURN(hlo::Literal arg,
                        hlo::ParseLiteral(text->second, fusion.parameter(i)->shape()));
    args.push_back(std::move(arg));
  }
  return args;
}

}  // namespace tilesmith::codegen
