// Range analysis and rewriting of affine expressions over a domain. Private to
// compiler/analysis: `IndexingMap::Simplify` and `IndexingMap::RangeOf` are the front door.
#pragma once

#include <cstdint>
#include <map>
#include <span>

#include "compiler/analysis/affine_expr.h"
#include "compiler/analysis/indexing_map.h"
#include "compiler/analysis/interval.h"

namespace tilesmith::analysis {

/// Interval arithmetic over the ranges of dims and symbols; a sub-expression that is exactly
/// a constraint's expression is narrowed to the constraint's range. Borrows its inputs.
class RangeEvaluator {
 public:
  RangeEvaluator(std::span<const Interval> dims, std::span<const SymbolVar> symbols,
                 std::span<const Constraint> constraints)
      : dims_(dims), symbols_(symbols), constraints_(constraints) {}

  Interval RangeOf(const AffineExpr& expr) const;

 private:
  std::span<const Interval> dims_;
  std::span<const SymbolVar> symbols_;
  std::span<const Constraint> constraints_;
};

/// `constant + Σ coefficient * atom`, where atoms are dims, symbols, floordivs and mods.
/// Terms are ordered by `Compare`, which makes `ToExpr` canonical.
struct LinearForm {
  std::map<AffineExpr, int64_t, AffineExprLess> terms;
  int64_t constant = 0;

  /// Flattens sums and constant factors of `expr`; other nodes become atoms as they are.
  static LinearForm Of(const AffineExpr& expr);
  void Add(const AffineExpr& atom, int64_t coefficient);
  void Add(const LinearForm& other, int64_t scale);
  int64_t CoefficientOf(const AffineExpr& atom) const;
  /// The sum in canonical order: atoms with positive coefficients, then negative ones, each
  /// group by `Compare`; the constant last.
  AffineExpr ToExpr() const;
};

/// The rewrite rules. Every rewrite is an identity over the domain of `ranges`, never an
/// approximation: see affine_simplifier.cc for the list.
class AffineSimplifier {
 public:
  explicit AffineSimplifier(const RangeEvaluator& ranges) : ranges_(ranges) {}

  AffineExpr Simplify(const AffineExpr& expr) const;

 private:
  void Linearize(const AffineExpr& expr, int64_t scale, LinearForm& out) const;
  AffineExpr SimplifySum(LinearForm form) const;
  AffineExpr SimplifyFloorDiv(const AffineExpr& dividend, int64_t divisor) const;
  AffineExpr SimplifyMod(const AffineExpr& dividend, int64_t divisor) const;
  bool MergeModWithFloorDiv(LinearForm& form) const;
  bool MergeFloorDivWithDividend(LinearForm& form) const;

  const RangeEvaluator& ranges_;
};

}  // namespace tilesmith::analysis
