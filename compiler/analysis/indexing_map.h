// Indexing maps: `(d0, …, dn-1)[s0, …, sm-1] -> (e0, …, ek-1)` with a domain. They say which
// element of one tensor an element of another reads (output -> input for an op, a thread ->
// an output element for an emitter, a logical index -> a memory offset for a layout), and
// they can be composed, simplified, printed and parsed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analysis/affine_expr.h"
#include "compiler/analysis/interval.h"
#include "support/status.h"

namespace tilesmith::hlo {
class HloInstruction;
}  // namespace tilesmith::hlo

namespace tilesmith::analysis {

/// `expr in [lower, upper]`: a condition on the dims and symbols beyond their ranges (pad's
/// in-bounds test, a concatenate piece, a reduce-window position that is not padding).
struct Constraint {
  AffineExpr expr;
  Interval range;
  friend bool operator==(const Constraint&, const Constraint&) = default;
};

/// How a symbol gets its values.
enum class SymbolKind : uint8_t {
  /// Every value of its range is visited (a reduced dimension, a window position, the
  /// elements one thread handles).
  kRange,
  /// One value known only at run time (a dynamic-slice offset): read from `source`, a
  /// scalar, and clamped to the range.
  kRuntime,
};

/// A symbol: its range, its kind and, for runtime symbols, the instruction holding the value.
struct SymbolVar {
  Interval range;
  SymbolKind kind = SymbolKind::kRange;
  const hlo::HloInstruction* source = nullptr;
  friend bool operator==(const SymbolVar&, const SymbolVar&) = default;
};

/// An affine map from dims and symbols to results, defined on a domain: an inclusive range
/// per dim and per symbol, and constraints. Value type. A map can also be *undefined* (the
/// relation is not affine, e.g. a gather's data-dependent reads) or *known empty* (its
/// domain has no points: nothing is read).
class IndexingMap {
 public:
  /// A map with no dims, symbols or results.
  IndexingMap() = default;
  /// Constraints are kept sorted by expression, duplicates merged, so equal maps compare equal.
  IndexingMap(std::vector<Interval> dim_ranges, std::vector<SymbolVar> symbols,
              std::vector<AffineExpr> results, std::vector<Constraint> constraints = {});
  /// The map for relations that are not affine.
  static IndexingMap Undefined();
  /// A map whose domain has no points: whatever it maps, nothing is read. Results are 0.
  static IndexingMap KnownEmpty(int64_t dim_count, int64_t symbol_count, int64_t result_count);
  /// `(d0, …, dn-1) -> (d0, …, dn-1)` over an array of `sizes`.
  static IndexingMap Identity(std::span<const int64_t> sizes);
  /// Reads XLA's text form, as `ToString` prints it. Dims and symbols may have any names.
  static Expected<IndexingMap> Parse(std::string_view text);

  bool IsUndefined() const { return undefined_; }
  /// True once simplification proved that the domain has no points.
  bool IsKnownEmpty() const { return known_empty_; }

  int64_t dim_count() const { return static_cast<int64_t>(dim_ranges_.size()); }
  int64_t symbol_count() const { return static_cast<int64_t>(symbols_.size()); }
  int64_t result_count() const { return static_cast<int64_t>(results_.size()); }
  std::span<const Interval> dim_ranges() const { return dim_ranges_; }
  const Interval& dim_range(int64_t i) const { return dim_ranges_[i]; }
  std::span<const SymbolVar> symbols() const { return symbols_; }
  const SymbolVar& symbol(int64_t i) const { return symbols_[i]; }
  std::span<const AffineExpr> results() const { return results_; }
  const AffineExpr& result(int64_t i) const { return results_[i]; }
  std::span<const Constraint> constraints() const { return constraints_; }

  /// Adds `expr in range`, intersecting with an existing constraint on the same expression.
  void AddConstraint(const AffineExpr& expr, Interval range);
  void set_dim_range(int64_t i, Interval range) { dim_ranges_[i] = range; }
  void set_symbol(int64_t i, SymbolVar symbol) { symbols_[i] = symbol; }

  /// The results at a point (ranges and constraints are not checked).
  std::vector<int64_t> Evaluate(std::span<const int64_t> dims,
                                std::span<const int64_t> symbols = {}) const;
  /// True if every constraint holds at the point (ranges are not checked).
  bool ConstraintsSatisfied(std::span<const int64_t> dims,
                            std::span<const int64_t> symbols = {}) const;
  /// True if the point is in the domain: within every range and satisfying every constraint.
  bool Contains(std::span<const int64_t> dims, std::span<const int64_t> symbols = {}) const;

  /// A range that holds every value of `expr` over the domain (an over-approximation by
  /// interval arithmetic, refined by constraints on the same expression).
  Interval RangeOf(const AffineExpr& expr) const;

  /// Rewrites results and constraints into simpler equivalent forms over the domain:
  /// canonical sums, floordiv/mod rules, constraints folded into ranges or dropped when
  /// implied, emptiness detected. Returns true if anything changed.
  bool Simplify();
  /// Drops symbols that no result or constraint uses, renumbering the rest.
  void RemoveUnusedSymbols();

  /// `(d0, d1)[s0] -> (d1, d0), domain: d0 in [0, 19], d1 in [0, 39], s0 in [0, 3], d0 +
  /// s0 in [0, 9]` (one line); runtime symbols end in ` runtime`; `UNDEFINED`; a known
  /// empty map prints `domain: KNOWN EMPTY`. Names default to `d<i>` and `s<j>`.
  std::string ToString(std::span<const std::string> dim_names = {},
                       std::span<const std::string> symbol_names = {}) const;

  size_t Hash() const;
  friend bool operator==(const IndexingMap&, const IndexingMap&) = default;

 private:
  friend IndexingMap Compose(const IndexingMap& first, const IndexingMap& second);
  void MarkKnownEmpty();
  bool DomainIsEmpty() const;
  bool SimplifyConstraints();
  bool SimplifyResults();

  std::vector<Interval> dim_ranges_;
  std::vector<SymbolVar> symbols_;
  std::vector<AffineExpr> results_;
  std::vector<Constraint> constraints_;
  bool undefined_ = false;
  bool known_empty_ = false;
};

/// Applies `first`, then `second`: `(dims of first)[symbols of first, symbols of second] ->
/// second's results of first's results`. `second` must have one dim per result of
/// `first` (a mismatch is a bug; release builds answer Undefined). Constraints carry over;
/// second's dim ranges become constraints on first's results unless the domain already
/// implies them. The result is simplified. Undefined if either is.
IndexingMap Compose(const IndexingMap& first, const IndexingMap& second);

}  // namespace tilesmith::analysis

template <>
struct std::hash<tilesmith::analysis::IndexingMap> {
  size_t operator()(const tilesmith::analysis::IndexingMap& map) const { return map.Hash(); }
};
