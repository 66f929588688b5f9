// Running a fusion on the host the way every codegen test does: default emitter and
// config, compiled, run, and each output compared with the evaluator.
#pragma once

#include <bit>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <map>
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
  std::vector<const hlo::Literal*> leaves;
  auto flatten = [&](auto& self, const hlo::Literal& value) -> void {
    if (!value.shape().IsTuple()) {
      leaves.push_back(&value);
      return;
    }
    for (const hlo::Literal& element : value.tuple_elements()) self(self, element);
  };
  flatten(flatten, expected);
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
