// The rewrite rules, applied bottom-up. With c > 0 a constant, x, y any expressions and
// ranges taken over the domain:
//
//  sums        collect like terms into `constant + Σ coefficient * atom` (distributing
//              constant factors), dims and symbols with a one-point range become constants;
//              c * (x floordiv c) + x mod c -> x   (delinearisation; also scaled by k)
//              x - c * (x floordiv c) -> x mod c
//  floordiv    x floordiv c -> q               when x lies in [q*c, q*c + c - 1]
//              (x floordiv a) floordiv c -> x floordiv (a*c)
//              (x mod (a*c)) floordiv c -> (x floordiv c) mod a
//              (a*c + y) floordiv c -> a + y floordiv c   (terms and the part of the
//                                                       constant that c divides)
//              (g*x + y) floordiv c -> x floordiv (c/g)   when g divides c and y in [0, g)
//  mod         x mod c -> x - q*c              when x lies in [q*c, q*c + c - 1]
//              (x mod (a*c)) mod c -> x mod c
//              (a*c + y) mod c -> y mod c
//              (g*x + y) mod c -> (x mod (c/g)) * g + y   when g divides c and y in [0, g)
#include "compiler/analysis/affine_simplifier.h"

#include <numeric>
#include <optional>
#include <set>
#include <vector>

namespace tilesmith::analysis {
namespace {

// Beyond this many merges a sum is left as it is; each merge shrinks the sum, so real
// inputs never get close.
constexpr int kMaxSumRewrites = 64;

// The q with range ⊆ [q*c, q*c + c - 1], if there is one.
std::optional<int64_t> SinglePeriod(const Interval& range, int64_t divisor) {
  if (range.IsEmpty()) return std::nullopt;
  int64_t q = FloorDivide(range.lower, divisor);
  if (q != FloorDivide(range.upper, divisor)) return std::nullopt;
  return q;
}

// `g*x + y` with g dividing the divisor and y known in [0, g): `big` holds x (coefficients
// already divided by g), `small` holds y.
struct GcdSplit {
  int64_t g = 1;
  LinearForm big;
  LinearForm small;
};

// Tries the common factors of the divisor and each coefficient, largest first.
std::optional<GcdSplit> FindGcdSplit(const LinearForm& form, int64_t divisor,
                                     const RangeEvaluator& ranges) {
  std::set<int64_t, std::greater<>> candidates;
  for (const auto& [atom, coefficient] : form.terms) {
    int64_t g = std::gcd(coefficient, divisor);
    if (g > 1 && g < divisor) candidates.insert(g);
  }
  for (int64_t g : candidates) {
    GcdSplit split;
    split.g = g;
    split.small.constant = form.constant;
    for (const auto& [atom, coefficient] : form.terms) {
      if (coefficient % g == 0) {
        split.big.Add(atom, coefficient / g);
      } else {
        split.small.Add(atom, coefficient);
      }
    }
    if (Interval{0, g - 1}.Contains(ranges.RangeOf(split.small.ToExpr()))) return split;
  }
  return std::nullopt;
}

}  // namespace

Interval RangeEvaluator::RangeOf(const AffineExpr& expr) const {
  Interval range;
  switch (expr.kind()) {
    case AffineExprKind::kConstant:
      range = Interval::Point(expr.value());
      break;
    case AffineExprKind::kDim:
      range = dims_[expr.value()];
      break;
    case AffineExprKind::kSymbol:
      range = symbols_[expr.value()].range;
      break;
    case AffineExprKind::kAdd:
      range = RangeOf(expr.lhs()) + RangeOf(expr.rhs());
      break;
    case AffineExprKind::kMul:
      range = RangeOf(expr.lhs()) * expr.value();
      break;
    case AffineExprKind::kFloorDiv:
      range = RangeOf(expr.lhs()).FloorDiv(expr.value());
      break;
    case AffineExprKind::kMod: {
      Interval dividend = RangeOf(expr.lhs());
      int64_t c = expr.value();
      if (std::optional<int64_t> q = SinglePeriod(dividend, c)) {
        range = {dividend.lower - *q * c, dividend.upper - *q * c};
      } else {
        range = {0, c - 1};
      }
      break;
    }
  }
  for (const Constraint& constraint : constraints_) {
    if (constraint.expr == expr) range = range.Intersect(constraint.range);
  }
  return range;
}

LinearForm LinearForm::Of(const AffineExpr& expr) {
  LinearForm form;
  form.Add(expr, 1);
  return form;
}

void LinearForm::Add(const AffineExpr& atom, int64_t coefficient) {
  if (coefficient == 0) return;
  switch (atom.kind()) {
    case AffineExprKind::kConstant:
      constant += atom.value() * coefficient;
      return;
    case AffineExprKind::kAdd:
      Add(atom.lhs(), coefficient);
      Add(atom.rhs(), coefficient);
      return;
    case AffineExprKind::kMul:
      Add(atom.lhs(), coefficient * atom.value());
      return;
    default:
      break;
  }
  auto [it, inserted] = terms.emplace(atom, coefficient);
  if (!inserted && (it->second += coefficient) == 0) terms.erase(it);
}

void LinearForm::Add(const LinearForm& other, int64_t scale) {
  for (const auto& [atom, coefficient] : other.terms) Add(atom, coefficient * scale);
  constant += other.constant * scale;
}

int64_t LinearForm::CoefficientOf(const AffineExpr& atom) const {
  auto it = terms.find(atom);
  return it == terms.end() ? 0 : it->second;
}

// Positive terms come first so that sums read as differences (`d0 floordiv 30 - s0`).
AffineExpr LinearForm::ToExpr() const {
  AffineExpr sum;
  for (const auto& [atom, coefficient] : terms) {
    if (coefficient > 0) sum = sum + atom * coefficient;
  }
  for (const auto& [atom, coefficient] : terms) {
    if (coefficient < 0) sum = sum + atom * coefficient;
  }
  return sum + constant;
}

AffineExpr AffineSimplifier::Simplify(const AffineExpr& expr) const {
  switch (expr.kind()) {
    case AffineExprKind::kConstant:
      return expr;
    case AffineExprKind::kDim:
    case AffineExprKind::kSymbol: {
      Interval range = ranges_.RangeOf(expr);
      return range.IsPoint() ? AffineExpr::Constant(range.lower) : expr;
    }
    case AffineExprKind::kAdd:
    case AffineExprKind::kMul: {
      LinearForm form;
      Linearize(expr, 1, form);
      return SimplifySum(std::move(form));
    }
    case AffineExprKind::kFloorDiv:
      return SimplifyFloorDiv(Simplify(expr.lhs()), expr.value());
    case AffineExprKind::kMod:
      return SimplifyMod(Simplify(expr.lhs()), expr.value());
  }
  return expr;
}

void AffineSimplifier::Linearize(const AffineExpr& expr, int64_t scale, LinearForm& out) const {
  if (expr.kind() == AffineExprKind::kAdd) {
    Linearize(expr.lhs(), scale, out);
    Linearize(expr.rhs(), scale, out);
  } else if (expr.kind() == AffineExprKind::kMul) {
    Linearize(expr.lhs(), scale * expr.value(), out);
  } else {
    out.Add(Simplify(expr), scale);
  }
}

AffineExpr AffineSimplifier::SimplifySum(LinearForm form) const {
  for (int i = 0; i < kMaxSumRewrites; ++i) {
    if (!MergeModWithFloorDiv(form) && !MergeFloorDivWithDividend(form)) break;
  }
  return form.ToExpr();
}

// k * (x mod c) + k*c * (x floordiv c) -> k * x. The floordiv partner is looked up in its
// simplified form, so `(x floordiv 4) mod 2` pairs with `x floordiv 8`.
bool AffineSimplifier::MergeModWithFloorDiv(LinearForm& form) const {
  for (const auto& [atom, k] : form.terms) {
    if (atom.kind() != AffineExprKind::kMod) continue;
    const AffineExpr& x = atom.lhs();
    int64_t c = atom.value();
    LinearForm quotient = LinearForm::Of(SimplifyFloorDiv(x, c));
    if (quotient.terms.empty()) continue;
    bool present = true;
    for (const auto& [q_atom, q_coefficient] : quotient.terms) {
      present = present && form.CoefficientOf(q_atom) == k * c * q_coefficient;
    }
    if (!present) continue;
    AffineExpr mod = atom;
    int64_t scale = k;
    form.Add(quotient, -scale * c);
    form.Add(mod, -scale);
    form.Add(LinearForm::Of(mod.lhs()), scale);
    return true;
  }
  return false;
}

// k * x - k*c * (x floordiv c) -> k * (x mod c), when every term of k * x is in the sum.
bool AffineSimplifier::MergeFloorDivWithDividend(LinearForm& form) const {
  for (const auto& [atom, coefficient] : form.terms) {
    if (atom.kind() != AffineExprKind::kFloorDiv) continue;
    int64_t c = atom.value();
    if (coefficient % c != 0) continue;
    int64_t k = -coefficient / c;
    LinearForm x = LinearForm::Of(atom.lhs());
    if (x.terms.empty()) continue;
    bool present = true;
    for (const auto& [x_atom, x_coefficient] : x.terms) {
      present = present && form.CoefficientOf(x_atom) == k * x_coefficient;
    }
    if (!present) continue;
    AffineExpr quotient = atom;
    int64_t quotient_coefficient = coefficient;
    form.Add(x, -k);
    form.Add(quotient, -quotient_coefficient);
    form.Add(LinearForm::Of(SimplifyMod(quotient.lhs(), c)), k);
    return true;
  }
  return false;
}

AffineExpr AffineSimplifier::SimplifyFloorDiv(const AffineExpr& dividend, int64_t divisor) const {
  if (divisor <= 1) return dividend.FloorDiv(divisor);
  if (std::optional<int64_t> q = SinglePeriod(ranges_.RangeOf(dividend), divisor)) {
    return AffineExpr::Constant(*q);
  }
  if (int64_t product; dividend.kind() == AffineExprKind::kFloorDiv &&
                       !__builtin_mul_overflow(dividend.value(), divisor, &product)) {
    return SimplifyFloorDiv(dividend.lhs(), product);
  }
  if (dividend.kind() == AffineExprKind::kMod && dividend.value() % divisor == 0) {
    return SimplifyMod(SimplifyFloorDiv(dividend.lhs(), divisor), dividend.value() / divisor);
  }
  // Terms that the divisor divides leave the division whole.
  LinearForm rest;
  LinearForm extracted;
  for (const auto& [atom, coefficient] : LinearForm::Of(dividend).terms) {
    if (coefficient % divisor == 0) {
      extracted.Add(atom, coefficient / divisor);
    } else {
      rest.Add(atom, coefficient);
    }
  }
  // The constant keeps its sign in the dividend (`(d0 - 1) floordiv 2` reads as written).
  int64_t constant = LinearForm::Of(dividend).constant;
  extracted.constant = constant / divisor;
  rest.constant = constant % divisor;
  if (std::optional<int64_t> q = SinglePeriod(ranges_.RangeOf(rest.ToExpr()), divisor)) {
    extracted.constant += *q;
    return SimplifySum(std::move(extracted));
  }
  if (std::optional<GcdSplit> split = FindGcdSplit(rest, divisor, ranges_)) {
    AffineExpr reduced = SimplifySum(std::move(split->big));
    extracted.Add(SimplifyFloorDiv(reduced, divisor / split->g), 1);
    return SimplifySum(std::move(extracted));
  }
  extracted.Add(rest.ToExpr().FloorDiv(divisor), 1);
  return SimplifySum(std::move(extracted));
}

AffineExpr AffineSimplifier::SimplifyMod(const AffineExpr& dividend, int64_t divisor) const {
  if (divisor <= 1) return dividend.Mod(divisor);
  if (std::optional<int64_t> q = SinglePeriod(ranges_.RangeOf(dividend), divisor)) {
    return SimplifySum(LinearForm::Of(dividend - *q * divisor));
  }
  if (dividend.kind() == AffineExprKind::kMod && dividend.value() % divisor == 0) {
    return SimplifyMod(dividend.lhs(), divisor);
  }
  LinearForm full = LinearForm::Of(dividend);
  LinearForm rest;
  for (const auto& [atom, coefficient] : full.terms) {
    if (coefficient % divisor != 0) rest.Add(atom, coefficient);
  }
  rest.constant = full.constant % divisor;
  if (std::optional<int64_t> q = SinglePeriod(ranges_.RangeOf(rest.ToExpr()), divisor)) {
    rest.constant -= *q * divisor;
    return SimplifySum(std::move(rest));
  }
  if (std::optional<GcdSplit> split = FindGcdSplit(rest, divisor, ranges_)) {
    AffineExpr reduced = SimplifyMod(SimplifySum(std::move(split->big)), divisor / split->g);
    LinearForm result = std::move(split->small);
    result.Add(reduced, split->g);
    return SimplifySum(std::move(result));
  }
  return rest.ToExpr().Mod(divisor);
}

}  // namespace tilesmith::analysis
