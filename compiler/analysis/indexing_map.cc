#include "compiler/analysis/indexing_map.h"

#include <algorithm>
#include <cassert>
#include <numeric>

#include "compiler/analysis/affine_simplifier.h"

namespace tilesmith::analysis {
namespace {

// Simplification rounds: each round may tighten ranges, which enables more rewrites in
// the next one. Real maps settle in two or three.
constexpr int kMaxSimplifyRounds = 16;

size_t CombineHash(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// Brings `expr in range` to a canonical form: no constant term, coefficients without a
// common factor (the range divided accordingly), a lone variable with a positive sign.
Constraint NormalizeConstraint(const AffineExpr& expr, Interval range) {
  LinearForm form = LinearForm::Of(expr);
  range = {SaturatingAdd(range.lower, -form.constant), SaturatingAdd(range.upper, -form.constant)};
  form.constant = 0;
  int64_t g = 0;
  for (const auto& [atom, coefficient] : form.terms) g = std::gcd(g, coefficient);
  if (form.terms.size() == 1 && form.terms.begin()->second < 0) g = -g;
  if (g != 0 && g != 1) {
    for (auto& [atom, coefficient] : form.terms) coefficient /= g;
    range = g > 0 ? Interval{CeilDivide(range.lower, g), FloorDivide(range.upper, g)}
                  : Interval{CeilDivide(-range.upper, -g), FloorDivide(-range.lower, -g)};
  }
  return {form.ToExpr(), range};
}

}  // namespace

IndexingMap::IndexingMap(std::vector<Interval> dim_ranges, std::vector<SymbolVar> symbols,
                         std::vector<AffineExpr> results, std::vector<Constraint> constraints)
    : dim_ranges_(std::move(dim_ranges)),
      symbols_(std::move(symbols)),
      results_(std::move(results)) {
  for (const Constraint& constraint : constraints) {
    AddConstraint(constraint.expr, constraint.range);
  }
}

IndexingMap IndexingMap::Undefined() {
  IndexingMap map;
  map.undefined_ = true;
  return map;
}

IndexingMap IndexingMap::KnownEmpty(int64_t dim_count, int64_t symbol_count, int64_t result_count) {
  IndexingMap map;
  map.dim_ranges_.resize(dim_count);
  map.symbols_.resize(symbol_count);
  map.results_.resize(result_count);
  map.MarkKnownEmpty();
  return map;
}

IndexingMap IndexingMap::Identity(std::span<const int64_t> sizes) {
  std::vector<AffineExpr> results;
  for (size_t i = 0; i < sizes.size(); ++i) results.push_back(AffineExpr::Dim(i));
  return IndexingMap(RangesForSizes(sizes), {}, std::move(results));
}

void IndexingMap::AddConstraint(const AffineExpr& expr, Interval range) {
  auto it = std::lower_bound(
      constraints_.begin(), constraints_.end(), expr,
      [](const Constraint& c, const AffineExpr& e) { return Compare(c.expr, e) < 0; });
  if (it != constraints_.end() && it->expr == expr) {
    it->range = it->range.Intersect(range);
  } else {
    constraints_.insert(it, Constraint{expr, range});
  }
}

std::vector<int64_t> IndexingMap::Evaluate(std::span<const int64_t> dims,
                                           std::span<const int64_t> symbols) const {
  assert(!undefined_);
  std::vector<int64_t> values;
  values.reserve(results_.size());
  for (const AffineExpr& result : results_) values.push_back(result.Evaluate(dims, symbols));
  return values;
}

bool IndexingMap::ConstraintsSatisfied(std::span<const int64_t> dims,
                                       std::span<const int64_t> symbols) const {
  return std::all_of(constraints_.begin(), constraints_.end(), [&](const Constraint& c) {
    return c.range.Contains(c.expr.Evaluate(dims, symbols));
  });
}

bool IndexingMap::Contains(std::span<const int64_t> dims, std::span<const int64_t> symbols) const {
  if (undefined_ || known_empty_) return false;
  if (dims.size() != dim_ranges_.size() || symbols.size() != symbols_.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!dim_ranges_[i].Contains(dims[i])) return false;
  }
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (!symbols_[i].range.Contains(symbols[i])) return false;
  }
  return ConstraintsSatisfied(dims, symbols);
}

Interval IndexingMap::RangeOf(const AffineExpr& expr) const {
  return RangeEvaluator(dim_ranges_, symbols_, constraints_).RangeOf(expr);
}

void IndexingMap::MarkKnownEmpty() {
  for (AffineExpr& result : results_) result = AffineExpr();
  for (Interval& range : dim_ranges_) range = {0, -1};
  for (SymbolVar& symbol : symbols_) symbol.range = {0, -1};
  constraints_.clear();
  known_empty_ = true;
}

bool IndexingMap::DomainIsEmpty() const {
  auto empty = [](const Interval& range) { return range.IsEmpty(); };
  return std::any_of(dim_ranges_.begin(), dim_ranges_.end(), empty) ||
         std::any_of(symbols_.begin(), symbols_.end(),
                     [&](const SymbolVar& symbol) { return empty(symbol.range); });
}

bool IndexingMap::Simplify() {
  if (undefined_ || known_empty_) return false;
  bool changed_at_all = false;
  for (int round = 0; round < kMaxSimplifyRounds; ++round) {
    if (DomainIsEmpty()) {
      MarkKnownEmpty();
      return true;
    }
    bool changed = SimplifyConstraints();
    if (known_empty_) return true;
    changed = SimplifyResults() || changed;
    changed_at_all = changed_at_all || changed;
    if (!changed) break;
  }
  return changed_at_all;
}

// Constraints are simplified against the ranges alone: using a constraint to simplify
// itself would make it look implied.
bool IndexingMap::SimplifyConstraints() {
  RangeEvaluator ranges(dim_ranges_, symbols_, {});
  AffineSimplifier simplifier(ranges);
  std::vector<Constraint> old = std::move(constraints_);
  constraints_.clear();
  bool changed = false;
  for (const Constraint& constraint : old) {
    Constraint c = NormalizeConstraint(simplifier.Simplify(constraint.expr), constraint.range);
    Interval* variable = nullptr;
    if (c.expr.IsDim()) variable = &dim_ranges_[c.expr.value()];
    if (c.expr.IsSymbol()) variable = &symbols_[c.expr.value()].range;
    if (variable != nullptr) {
      *variable = variable->Intersect(c.range);
      changed = true;
      continue;
    }
    Interval range = ranges.RangeOf(c.expr);
    if (range.Intersect(c.range).IsEmpty()) {
      MarkKnownEmpty();
      return true;
    }
    if (c.range.Contains(range)) {
      changed = true;
      continue;
    }
    AddConstraint(c.expr, c.range);
  }
  return changed || constraints_ != old;
}

bool IndexingMap::SimplifyResults() {
  RangeEvaluator ranges(dim_ranges_, symbols_, constraints_);
  AffineSimplifier simplifier(ranges);
  bool changed = false;
  for (AffineExpr& result : results_) {
    AffineExpr simplified = simplifier.Simplify(result);
    if (!(simplified == result)) {
      result = std::move(simplified);
      changed = true;
    }
  }
  return changed;
}

void IndexingMap::RemoveUnusedSymbols() {
  if (undefined_) return;
  std::vector<bool> used(symbols_.size(), false);
  auto mark = [&](const AffineExpr& e) {
    e.Walk([&](const AffineExpr& node) {
      if (node.IsSymbol()) used[node.value()] = true;
    });
  };
  for (const AffineExpr& result : results_) mark(result);
  for (const Constraint& constraint : constraints_) mark(constraint.expr);
  std::vector<SymbolVar> kept;
  std::vector<AffineExpr> renumbered;
  bool dropped_empty = false;
  for (size_t j = 0; j < symbols_.size(); ++j) {
    renumbered.push_back(AffineExpr::Symbol(used[j] ? kept.size() : 0));
    if (used[j]) {
      kept.push_back(symbols_[j]);
    } else {
      dropped_empty = dropped_empty || symbols_[j].range.IsEmpty();
    }
  }
  if (kept.size() == symbols_.size()) return;
  for (AffineExpr& result : results_) result = result.Substitute({}, renumbered);
  std::vector<Constraint> old = std::move(constraints_);
  constraints_.clear();
  for (const Constraint& c : old) AddConstraint(c.expr.Substitute({}, renumbered), c.range);
  symbols_ = std::move(kept);
  // An unused symbol with no values still made the domain empty.
  if (dropped_empty) MarkKnownEmpty();
}

size_t IndexingMap::Hash() const {
  size_t hash = CombineHash(undefined_, known_empty_);
  for (const Interval& range : dim_ranges_) {
    hash = CombineHash(CombineHash(hash, range.lower), range.upper);
  }
  for (const SymbolVar& symbol : symbols_) {
    hash = CombineHash(CombineHash(hash, symbol.range.lower), symbol.range.upper);
    hash = CombineHash(hash, static_cast<size_t>(symbol.kind));
  }
  for (const AffineExpr& result : results_) hash = CombineHash(hash, result.hash());
  for (const Constraint& c : constraints_) {
    hash = CombineHash(CombineHash(hash, c.expr.hash()), c.range.lower);
  }
  return hash;
}

IndexingMap Compose(const IndexingMap& first, const IndexingMap& second) {
  if (first.IsUndefined() || second.IsUndefined()) return IndexingMap::Undefined();
  if (first.result_count() != second.dim_count()) {
    assert(false && "Compose: first's results do not match second's dims");
    return IndexingMap::Undefined();
  }
  std::vector<AffineExpr> shifted_symbols;
  for (int64_t j = 0; j < second.symbol_count(); ++j) {
    shifted_symbols.push_back(AffineExpr::Symbol(first.symbol_count() + j));
  }
  std::span<const AffineExpr> inputs = first.results();
  std::vector<AffineExpr> results;
  for (const AffineExpr& result : second.results()) {
    results.push_back(result.Substitute(inputs, shifted_symbols));
  }
  std::vector<SymbolVar> symbols(first.symbols().begin(), first.symbols().end());
  symbols.insert(symbols.end(), second.symbols().begin(), second.symbols().end());
  IndexingMap composed({first.dim_ranges().begin(), first.dim_ranges().end()}, std::move(symbols),
                       std::move(results),
                       {first.constraints().begin(), first.constraints().end()});
  for (const Constraint& c : second.constraints()) {
    composed.AddConstraint(c.expr.Substitute(inputs, shifted_symbols), c.range);
  }
  for (int64_t i = 0; i < second.dim_count(); ++i) {
    if (!second.dim_range(i).Contains(first.RangeOf(inputs[i]))) {
      composed.AddConstraint(inputs[i], second.dim_range(i));
    }
  }
  // A point of the composition would be a point of both.
  if (first.IsKnownEmpty() || second.IsKnownEmpty()) composed.MarkKnownEmpty();
  composed.Simplify();
  return composed;
}

}  // namespace tilesmith::analysis
