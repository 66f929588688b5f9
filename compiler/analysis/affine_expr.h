// Affine expressions over dimensions `d_i` and symbols `s_j`: the index arithmetic of
// indexing maps (constants, +, multiplication by a constant, floordiv and mod by a positive
// constant).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace tilesmith::analysis {

/// What an `AffineExpr` node is. The order is the canonical order of terms in a sum.
enum class AffineExprKind : uint8_t { kConstant, kDim, kSymbol, kAdd, kMul, kFloorDiv, kMod };

/// An immutable affine expression with value semantics: copies share nodes, equality and
/// hashing are structural. Builders fold trivial cases (constants, `x + 0`, `x * 1`,
/// `x floordiv 1`, `x mod 1`, nested constant factors); `Simplify` of an indexing map does
/// the rest. Multiplication, floordiv and mod always have a constant right-hand side,
/// which for floordiv and mod is positive.
class AffineExpr {
 public:
  /// The constant 0.
  AffineExpr();
  static AffineExpr Constant(int64_t value);
  static AffineExpr Dim(int64_t position);
  static AffineExpr Symbol(int64_t position);

  AffineExprKind kind() const;
  /// kConstant: the value; kDim, kSymbol: the position; kMul: the factor; kFloorDiv, kMod:
  /// the divisor; kAdd: 0.
  int64_t value() const;
  /// The left operand of a binary node (the dividend, or the expression multiplied).
  const AffineExpr& lhs() const;
  /// The right operand of kAdd; the constant 0 for other kinds.
  const AffineExpr& rhs() const;

  bool IsConstant() const { return kind() == AffineExprKind::kConstant; }
  bool IsConstant(int64_t v) const { return IsConstant() && value() == v; }
  bool IsDim() const { return kind() == AffineExprKind::kDim; }
  bool IsSymbol() const { return kind() == AffineExprKind::kSymbol; }
  bool IsBinary() const { return kind() >= AffineExprKind::kAdd; }

  /// Floor division by a positive constant. A divisor of 0 (a zero-sized dimension, whose
  /// domain is empty) folds to the constant 0.
  AffineExpr FloorDiv(int64_t divisor) const;
  /// Remainder of floor division by a positive constant: always in `[0, divisor)`. A
  /// divisor of 0 folds to the expression itself, so x = 0 * (x floordiv 0) + x mod 0.
  AffineExpr Mod(int64_t divisor) const;

  /// The value at `dims` and `symbols` (floor semantics for floordiv and mod).
  int64_t Evaluate(std::span<const int64_t> dims, std::span<const int64_t> symbols) const;

  /// Replaces `d_i` by `dims[i]` and `s_j` by `symbols[j]`; variables past the end of a
  /// span are kept. The result is rebuilt through the folding builders.
  AffineExpr Substitute(std::span<const AffineExpr> dims,
                        std::span<const AffineExpr> symbols) const;

  /// Calls `visit` on every node, parents before children.
  void Walk(const std::function<void(const AffineExpr&)>& visit) const;
  /// True if `d_position` (or `s_position`) occurs in the expression.
  bool UsesDim(int64_t position) const;
  bool UsesSymbol(int64_t position) const;

  /// XLA's text form: `d0 * 4 + s0`, `(d0 floordiv 8) mod 4`, `d1 - d0 * 2 - 3`. Names
  /// default to `d<i>` and `s<j>`; a shorter name list leaves the rest default.
  std::string ToString(std::span<const std::string> dim_names = {},
                       std::span<const std::string> symbol_names = {}) const;

  size_t hash() const;
  friend bool operator==(const AffineExpr& a, const AffineExpr& b);

  friend AffineExpr operator+(const AffineExpr& a, const AffineExpr& b);
  friend AffineExpr operator+(const AffineExpr& a, int64_t b) { return a + Constant(b); }
  friend AffineExpr operator-(const AffineExpr& a) { return a * -1; }
  friend AffineExpr operator-(const AffineExpr& a, const AffineExpr& b) { return a + b * -1; }
  friend AffineExpr operator-(const AffineExpr& a, int64_t b) { return a + Constant(-b); }
  friend AffineExpr operator+(int64_t a, const AffineExpr& b) { return Constant(a) + b; }
  friend AffineExpr operator-(int64_t a, const AffineExpr& b) { return Constant(a) - b; }
  friend AffineExpr operator*(const AffineExpr& a, int64_t factor);
  friend AffineExpr operator*(int64_t factor, const AffineExpr& a) { return a * factor; }

 private:
  struct Node;
  explicit AffineExpr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  static AffineExpr Make(AffineExprKind kind, int64_t value, AffineExpr lhs, AffineExpr rhs);

  std::shared_ptr<const Node> node_;
};

/// A total order on expressions (kind, then value, then operands): negative, zero or
/// positive like `strcmp`. It fixes the order of terms in canonical sums.
int Compare(const AffineExpr& a, const AffineExpr& b);

/// `Compare(a, b) < 0`, for ordered containers.
struct AffineExprLess {
  bool operator()(const AffineExpr& a, const AffineExpr& b) const { return Compare(a, b) < 0; }
};

}  // namespace tilesmith::analysis

template <>
struct std::hash<tilesmith::analysis::AffineExpr> {
  size_t operator()(const tilesmith::analysis::AffineExpr& e) const { return e.hash(); }
};
