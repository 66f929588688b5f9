#include "compiler/analysis/affine_expr.h"

#include <cassert>

#include "compiler/analysis/interval.h"

namespace tilesmith::analysis {

struct AffineExpr::Node {
  AffineExprKind kind;
  int64_t value;
  AffineExpr lhs;
  AffineExpr rhs;
  size_t hash;
};

namespace {

size_t CombineHash(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace

// A null node_ stands for the constant 0: default construction allocates nothing, and
// leaves need no operands of their own.
AffineExpr::AffineExpr() = default;

AffineExpr AffineExpr::Make(AffineExprKind kind, int64_t value, AffineExpr lhs, AffineExpr rhs) {
  size_t hash = CombineHash(static_cast<size_t>(kind), std::hash<int64_t>()(value));
  hash = CombineHash(hash, lhs.hash());
  hash = CombineHash(hash, rhs.hash());
  return AffineExpr(
      std::make_shared<const Node>(Node{kind, value, std::move(lhs), std::move(rhs), hash}));
}

AffineExpr AffineExpr::Constant(int64_t value) {
  if (value == 0) return AffineExpr();
  return Make(AffineExprKind::kConstant, value, AffineExpr(), AffineExpr());
}

AffineExpr AffineExpr::Dim(int64_t position) {
  return Make(AffineExprKind::kDim, position, AffineExpr(), AffineExpr());
}

AffineExpr AffineExpr::Symbol(int64_t position) {
  return Make(AffineExprKind::kSymbol, position, AffineExpr(), AffineExpr());
}

AffineExprKind AffineExpr::kind() const { return node_ ? node_->kind : AffineExprKind::kConstant; }

int64_t AffineExpr::value() const { return node_ ? node_->value : 0; }

const AffineExpr& AffineExpr::lhs() const {
  static const AffineExpr* const kZero = new AffineExpr();
  return node_ ? node_->lhs : *kZero;
}

const AffineExpr& AffineExpr::rhs() const {
  static const AffineExpr* const kZero = new AffineExpr();
  return node_ ? node_->rhs : *kZero;
}

size_t AffineExpr::hash() const {
  // The constant 0 is always the null node (Constant(0) never allocates), so any fixed
  // value is consistent.
  constexpr size_t kZeroHash = 0x5bd1e995;
  return node_ ? node_->hash : kZeroHash;
}

bool operator==(const AffineExpr& a, const AffineExpr& b) {
  if (a.node_ == b.node_) return true;
  if (a.hash() != b.hash() || a.kind() != b.kind() || a.value() != b.value()) return false;
  return a.lhs() == b.lhs() && a.rhs() == b.rhs();
}

int Compare(const AffineExpr& a, const AffineExpr& b) {
  if (a.kind() != b.kind()) return a.kind() < b.kind() ? -1 : 1;
  if (a.value() != b.value()) return a.value() < b.value() ? -1 : 1;
  if (!a.IsBinary()) return 0;
  if (int c = Compare(a.lhs(), b.lhs()); c != 0) return c;
  return Compare(a.rhs(), b.rhs());
}

AffineExpr operator+(const AffineExpr& a, const AffineExpr& b) {
  if (a.IsConstant() && b.IsConstant()) return AffineExpr::Constant(a.value() + b.value());
  if (a.IsConstant(0)) return b;
  if (b.IsConstant(0)) return a;
  if (a.IsConstant()) return b + a;
  // Keep a sum's constant outermost: (x + c1) + c2 -> x + (c1 + c2), x + (y + c) -> (x + y) + c,
  // (x + c) + y -> (x + y) + c.
  if (b.IsConstant() && a.kind() == AffineExprKind::kAdd && a.rhs().IsConstant()) {
    return a.lhs() + (a.rhs().value() + b.value());
  }
  if (b.kind() == AffineExprKind::kAdd && b.rhs().IsConstant()) return (a + b.lhs()) + b.rhs();
  if (a.kind() == AffineExprKind::kAdd && a.rhs().IsConstant()) return (a.lhs() + b) + a.rhs();
  return AffineExpr::Make(AffineExprKind::kAdd, 0, a, b);
}

AffineExpr operator*(const AffineExpr& a, int64_t factor) {
  if (factor == 0) return AffineExpr();
  if (factor == 1) return a;
  if (a.IsConstant()) return AffineExpr::Constant(a.value() * factor);
  if (a.kind() == AffineExprKind::kMul) return a.lhs() * (a.value() * factor);
  return AffineExpr::Make(AffineExprKind::kMul, factor, a, AffineExpr());
}

// A divisor of 0 only ever comes from a zero-sized dimension, whose domain is empty: no
// point is ever evaluated there. Folding `x floordiv 0` to 0 and `x mod 0` to x keeps
// x = 0 * (x floordiv 0) + x mod 0 and makes every legal shape's indexing map buildable,
// with no division by zero left for the simplifier or generated code.
AffineExpr AffineExpr::FloorDiv(int64_t divisor) const {
  assert(divisor >= 0);
  if (divisor == 0) return AffineExpr();
  if (divisor == 1) return *this;
  if (IsConstant()) return Constant(FloorDivide(value(), divisor));
  return Make(AffineExprKind::kFloorDiv, divisor, *this, AffineExpr());
}

AffineExpr AffineExpr::Mod(int64_t divisor) const {
  assert(divisor >= 0);
  if (divisor == 0) return *this;
  if (divisor == 1) return AffineExpr();
  if (IsConstant()) return Constant(FloorModulo(value(), divisor));
  return Make(AffineExprKind::kMod, divisor, *this, AffineExpr());
}

int64_t AffineExpr::Evaluate(std::span<const int64_t> dims,
                             std::span<const int64_t> symbols) const {
  switch (kind()) {
    case AffineExprKind::kConstant:
      return value();
    case AffineExprKind::kDim:
      return dims[value()];
    case AffineExprKind::kSymbol:
      return symbols[value()];
    case AffineExprKind::kAdd:
      return lhs().Evaluate(dims, symbols) + rhs().Evaluate(dims, symbols);
    case AffineExprKind::kMul:
      return lhs().Evaluate(dims, symbols) * value();
    case AffineExprKind::kFloorDiv:
      return FloorDivide(lhs().Evaluate(dims, symbols), value());
    case AffineExprKind::kMod:
      return FloorModulo(lhs().Evaluate(dims, symbols), value());
  }
  return 0;
}

AffineExpr AffineExpr::Substitute(std::span<const AffineExpr> dims,
                                  std::span<const AffineExpr> symbols) const {
  switch (kind()) {
    case AffineExprKind::kConstant:
      return *this;
    case AffineExprKind::kDim:
      return value() < static_cast<int64_t>(dims.size()) ? dims[value()] : *this;
    case AffineExprKind::kSymbol:
      return value() < static_cast<int64_t>(symbols.size()) ? symbols[value()] : *this;
    case AffineExprKind::kAdd:
      return lhs().Substitute(dims, symbols) + rhs().Substitute(dims, symbols);
    case AffineExprKind::kMul:
      return lhs().Substitute(dims, symbols) * value();
    case AffineExprKind::kFloorDiv:
      return lhs().Substitute(dims, symbols).FloorDiv(value());
    case AffineExprKind::kMod:
      return lhs().Substitute(dims, symbols).Mod(value());
  }
  return *this;
}

void AffineExpr::Walk(const std::function<void(const AffineExpr&)>& visit) const {
  visit(*this);
  if (!IsBinary()) return;
  lhs().Walk(visit);
  if (kind() == AffineExprKind::kAdd) rhs().Walk(visit);
}

bool AffineExpr::UsesDim(int64_t position) const {
  if (IsDim()) return value() == position;
  if (!IsBinary()) return false;
  return lhs().UsesDim(position) || (kind() == AffineExprKind::kAdd && rhs().UsesDim(position));
}

bool AffineExpr::UsesSymbol(int64_t position) const {
  if (IsSymbol()) return value() == position;
  if (!IsBinary()) return false;
  return lhs().UsesSymbol(position) ||
         (kind() == AffineExprKind::kAdd && rhs().UsesSymbol(position));
}

namespace {

// MLIR's printing rules, which XLA's text form follows: the left operand of `*`, floordiv
// and mod is parenthesised when it is itself a binary expression; a sum's right operand
// is parenthesised when it is a sum; negative constants and factors on the right of a sum
// print as subtraction.
class Printer {
 public:
  Printer(std::span<const std::string> dim_names, std::span<const std::string> symbol_names)
      : dim_names_(dim_names), symbol_names_(symbol_names) {}

  void Print(const AffineExpr& e, bool strong, std::string& out) const {
    switch (e.kind()) {
      case AffineExprKind::kConstant:
        out += std::to_string(e.value());
        return;
      case AffineExprKind::kDim:
        out += Name(dim_names_, "d", e.value());
        return;
      case AffineExprKind::kSymbol:
        out += Name(symbol_names_, "s", e.value());
        return;
      default:
        break;
    }
    if (strong) out += "(";
    if (e.kind() == AffineExprKind::kAdd) {
      PrintSum(e, out);
    } else if (e.kind() == AffineExprKind::kMul && e.value() == -1) {
      out += "-";
      Print(e.lhs(), true, out);
    } else {
      Print(e.lhs(), true, out);
      out += e.kind() == AffineExprKind::kMul        ? " * "
             : e.kind() == AffineExprKind::kFloorDiv ? " floordiv "
                                                     : " mod ";
      out += std::to_string(e.value());
    }
    if (strong) out += ")";
  }

 private:
  void PrintSum(const AffineExpr& e, std::string& out) const {
    Print(e.lhs(), false, out);
    const AffineExpr& rhs = e.rhs();
    if (rhs.IsConstant() && rhs.value() < 0) {
      out += " - " + std::to_string(-rhs.value());
      return;
    }
    if (rhs.kind() == AffineExprKind::kMul && rhs.value() < 0) {
      out += " - ";
      Print(rhs.lhs(), true, out);
      if (rhs.value() != -1) out += " * " + std::to_string(-rhs.value());
      return;
    }
    out += " + ";
    Print(rhs, rhs.kind() == AffineExprKind::kAdd, out);
  }

  static std::string Name(std::span<const std::string> names, const char* prefix, int64_t i) {
    if (i < static_cast<int64_t>(names.size())) return names[i];
    return prefix + std::to_string(i);
  }

  std::span<const std::string> dim_names_;
  std::span<const std::string> symbol_names_;
};

}  // namespace

std::string AffineExpr::ToString(std::span<const std::string> dim_names,
                                 std::span<const std::string> symbol_names) const {
  std::string out;
  Printer(dim_names, symbol_names).Print(*this, false, out);
  return out;
}

}  // namespace tilesmith::analysis
