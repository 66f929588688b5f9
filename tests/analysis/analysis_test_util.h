// Helpers shared by the analysis tests: enumerating the points of an indexing map's domain,
// checking two maps describe the same function, and running HLO on index-valued inputs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "compiler/analysis/indexing_map.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/hlo_module.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::analysis::testing {

/// Calls `visit(dims, symbols)` for every point of the box of `map`'s ranges (constraints
/// not applied), dims and symbols each in row-major order.
inline void ForEachPointInBox(
    const IndexingMap& map,
    const std::function<void(std::span<const int64_t>, std::span<const int64_t>)>& visit) {
  std::vector<Interval> ranges(map.dim_ranges().begin(), map.dim_ranges().end());
  for (const SymbolVar& symbol : map.symbols()) ranges.push_back(symbol.range);
  for (const Interval& range : ranges) {
    if (range.IsEmpty()) return;
  }
  std::vector<int64_t> point(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) point[i] = ranges[i].lower;
  std::span<const int64_t> all(point);
  while (true) {
    visit(all.first(map.dim_count()), all.subspan(map.dim_count()));
    int64_t i = static_cast<int64_t>(ranges.size()) - 1;
    for (; i >= 0; --i) {
      if (++point[i] <= ranges[i].upper) break;
      point[i] = ranges[i].lower;
    }
    if (i < 0) return;
  }
}

/// Expects `after` (e.g. `before` simplified) to have the same domain and the same results
/// on it as `before`, point by point over before's box.
inline void ExpectSameFunction(const IndexingMap& before, const IndexingMap& after) {
  ASSERT_EQ(before.dim_count(), after.dim_count());
  ASSERT_EQ(before.symbol_count(), after.symbol_count());
  int64_t mismatches = 0;
  ForEachPointInBox(before, [&](std::span<const int64_t> d, std::span<const int64_t> s) {
    if (mismatches > 3) return;
    bool in_before = before.Contains(d, s);
    bool in_after = after.Contains(d, s);
    bool same =
        in_before == in_after && (!in_before || before.Evaluate(d, s) == after.Evaluate(d, s));
    if (!same) {
      ++mismatches;
      ADD_FAILURE() << "maps differ at d="
                    << ::testing::PrintToString(std::vector(d.begin(), d.end()))
                    << " s=" << ::testing::PrintToString(std::vector(s.begin(), s.end()))
                    << "\n before: " << before.ToString() << "\n after:  " << after.ToString();
    }
  });
  // `after` must not gain points outside before's box either.
  ForEachPointInBox(after, [&](std::span<const int64_t> d, std::span<const int64_t> s) {
    if (mismatches > 3) return;
    if (after.Contains(d, s) && !before.Contains(d, s)) {
      ++mismatches;
      ADD_FAILURE() << "simplified map gained a point\n before: " << before.ToString()
                    << "\n after:  " << after.ToString();
    }
  });
}

/// Parses HLO text; fails the test on error.
inline std::unique_ptr<hlo::HloModule> ParseOrDie(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.has_value()) << (module ? "" : module.error().message) << "\n" << text;
  return module ? std::move(*module) : nullptr;
}

/// Row-major multi-index of `linear` in an array of `dims`.
inline std::vector<int64_t> Delinearize(int64_t linear, std::span<const int64_t> dims) {
  std::vector<int64_t> index(dims.size());
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    index[i] = linear % dims[i];
    linear /= dims[i];
  }
  return index;
}

/// Row-major linear index of `index` in an array of `dims`.
inline int64_t Linearize(std::span<const int64_t> index, std::span<const int64_t> dims) {
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i) linear = linear * dims[i] + index[i];
  return linear;
}

/// A literal of `shape` whose element at linear index i holds `base + i`.
inline hlo::Literal IotaLiteral(const hlo::Shape& shape, int64_t base) {
  hlo::Literal literal(shape);
  for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetInt(i, base + i);
  return literal;
}

}  // namespace tilesmith::analysis::testing

namespace tilesmith::analysis::testing {

/// Parameter k of an evaluation holds `(k + 1) * kParameterStride + i` at linear index i, so
/// every value names the parameter and the element it came from.
inline constexpr int64_t kParameterStride = 10000;

/// A parsed module, its computation (the fusion, see `HloModule::fusion`), the arguments it
/// ran on and the result.
struct Evaluation {
  std::unique_ptr<hlo::HloModule> module;
  const hlo::HloComputation* computation = nullptr;
  std::vector<hlo::Literal> args;
  hlo::Literal result;
};

/// Runs `computation` on `args`; fails the test on error.
inline hlo::Literal MustEvaluate(const hlo::HloComputation& computation,
                                 std::span<const hlo::Literal> args) {
  Expected<hlo::Literal> result = hlo::Evaluate(computation, args);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  return result ? std::move(*result) : hlo::Literal();
}

/// Parses `text` and evaluates its fusion with iota-like parameters; `overrides` gives the
/// values of chosen parameters (by number) instead, e.g. dynamic-slice offsets.
inline Evaluation EvaluateOnIotas(const std::string& text,
                                  const std::map<int64_t, std::vector<int64_t>>& overrides = {}) {
  Evaluation e;
  e.module = ParseOrDie(text);
  if (!e.module) return e;
  e.computation = e.module->fusion();
  for (int64_t k = 0; k < e.computation->parameter_count(); ++k) {
    const hlo::Shape& shape = e.computation->parameter(k)->shape();
    e.args.push_back(IotaLiteral(shape, (k + 1) * kParameterStride));
    if (auto it = overrides.find(k); it != overrides.end()) {
      for (size_t i = 0; i < it->second.size(); ++i) e.args.back().SetInt(i, it->second[i]);
    }
  }
  e.result = MustEvaluate(*e.computation, e.args);
  return e;
}

/// Calls `visit(symbols)` for every value of `map`'s range symbols; a runtime symbol takes the
/// value of its source when that is a parameter of `args`' computation (clamped to its
/// range), and every value of its range otherwise.
inline void ForEachSymbolValue(const IndexingMap& map, std::span<const hlo::Literal> args,
                               const std::function<void(std::span<const int64_t>)>& visit) {
  std::vector<Interval> ranges;
  for (const SymbolVar& symbol : map.symbols()) {
    if (symbol.kind == SymbolKind::kRange) {
      ranges.push_back(symbol.range);
      continue;
    }
    if (symbol.source == nullptr || symbol.source->opcode() != hlo::HloOpcode::kParameter) {
      ranges.push_back(symbol.range);
      continue;
    }
    int64_t value = args[symbol.source->parameter_number()].GetInt(0);
    value = std::clamp(value, symbol.range.lower, symbol.range.upper);
    ranges.push_back(Interval::Point(value));
  }
  std::vector<SymbolVar> vars;
  for (const Interval& range : ranges) vars.push_back({range});
  ForEachPointInBox(IndexingMap({}, vars, {}),
                    [&](std::span<const int64_t>, std::span<const int64_t> s) { visit(s); });
}

/// Linear indices (row-major over `operand_dims`) of the elements `map` reads at output
/// index `out`.
inline std::set<int64_t> ReadSet(const IndexingMap& map, std::span<const int64_t> out,
                                 std::span<const int64_t> operand_dims,
                                 std::span<const hlo::Literal> args) {
  std::set<int64_t> reads;
  ForEachSymbolValue(map, args, [&](std::span<const int64_t> s) {
    if (map.Contains(out, s)) reads.insert(Linearize(map.Evaluate(out, s), operand_dims));
  });
  return reads;
}

/// Calls `visit(index, linear)` for every index of an array of `dims`.
inline void ForEachIndex(std::span<const int64_t> dims,
                         const std::function<void(std::span<const int64_t>, int64_t)>& visit) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  for (int64_t linear = 0; linear < count; ++linear) visit(Delinearize(linear, dims), linear);
}

}  // namespace tilesmith::analysis::testing
