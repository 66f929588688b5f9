#include "compiler/codegen/index_emitter.h"

#include <algorithm>
#include <random>

namespace tilesmith::codegen {

using analysis::AffineExpr;
using analysis::AffineExprKind;
using analysis::Interval;

AffineExpr IndexEnv::AddVariable(llvm::Value* value, Interval range) {
  values_.push_back(value);
  ranges_.push_back(range);
  return AffineExpr::Symbol(static_cast<int64_t>(values_.size()) - 1);
}

Interval IndexEnv::RangeOf(const AffineExpr& expr) const {
  switch (expr.kind()) {
    case AffineExprKind::kConstant:
      return Interval::Point(expr.value());
    case AffineExprKind::kSymbol:
      return ranges_[expr.value()];
    case AffineExprKind::kDim:
      return {INT64_MIN, INT64_MAX};
    case AffineExprKind::kAdd:
      return RangeOf(expr.lhs()) + RangeOf(expr.rhs());
    case AffineExprKind::kMul:
      return RangeOf(expr.lhs()) * expr.value();
    case AffineExprKind::kFloorDiv:
      return RangeOf(expr.lhs()).FloorDiv(expr.value());
    case AffineExprKind::kMod: {
      Interval operand = RangeOf(expr.lhs());
      if (operand.lower >= 0 && operand.upper < expr.value()) return operand;
      return {0, expr.value() - 1};
    }
  }
  return {INT64_MIN, INT64_MAX};
}

double IndexEnv::HoldShare(std::span<const Condition> conditions) const {
  if (conditions.empty()) return 1;
  std::vector<int64_t> used;
  for (const auto& [expr, range] : conditions) {
    expr.Walk([&](const AffineExpr& node) {
      if (node.IsSymbol() && std::find(used.begin(), used.end(), node.value()) == used.end()) {
        used.push_back(node.value());
      }
    });
  }
  std::vector<int64_t> values(ranges_.size(), 0);  // those not used stay unread
  auto all_hold = [&] {
    for (const auto& [expr, range] : conditions) {
      if (!range.Contains(expr.Evaluate({}, values))) return false;
    }
    return true;
  };
  constexpr double kExactPoints = 4096;
  double points = 1;
  for (int64_t variable : used) {
    points *= static_cast<double>(ranges_[variable].NumElements());
  }
  int64_t holding = 0;
  int64_t tried = 0;
  if (points <= kExactPoints) {
    // Every point, the first used variable fastest.
    for (int64_t variable : used) values[variable] = ranges_[variable].lower;
    for (;;) {
      holding += all_hold() ? 1 : 0;
      ++tried;
      size_t k = 0;
      for (; k < used.size(); ++k) {
        int64_t& value = values[used[k]];
        if (value < ranges_[used[k]].upper) {
          ++value;
          break;
        }
        value = ranges_[used[k]].lower;
      }
      if (k == used.size()) break;
    }
  } else {
    std::mt19937_64 random(0x5eed);
    for (tried = 0; tried < 1024; ++tried) {
      for (int64_t variable : used) {
        std::uniform_int_distribution<int64_t> uniform(ranges_[variable].lower,
                                                       ranges_[variable].upper);
        values[variable] = uniform(random);
      }
      holding += all_hold() ? 1 : 0;
    }
  }
  return static_cast<double>(holding) / static_cast<double>(std::max<int64_t>(1, tried));
}

void IndexEnv::PushScope() { scopes_.emplace_back(); }

void IndexEnv::PopScope() {
  if (scopes_.size() > 1) scopes_.pop_back();
}

llvm::Value* IndexEnv::Emit(const AffineExpr& expr) {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->find(expr);
    if (it != scope->end()) return it->second;
  }
  llvm::Value* value = EmitUncached(expr);
  scopes_.back().emplace(expr, value);
  return value;
}

llvm::Value* IndexEnv::EmitUncached(const AffineExpr& expr) {
  llvm::Type* i64 = builder_.getInt64Ty();
  switch (expr.kind()) {
    case AffineExprKind::kConstant:
      return llvm::ConstantInt::get(i64, expr.value(), /*isSigned=*/true);
    case AffineExprKind::kSymbol:
      return values_[expr.value()];
    case AffineExprKind::kDim:
      return llvm::ConstantInt::get(i64, 0);  // unused: kernels index by symbols only
    case AffineExprKind::kAdd: {
      // Non-negative operands cannot wrap here, which lets LLVM reassociate freely.
      bool nonnegative = RangeOf(expr).lower >= 0;
      return builder_.CreateAdd(Emit(expr.lhs()), Emit(expr.rhs()), "", /*HasNUW=*/false,
                                /*HasNSW=*/nonnegative);
    }
    case AffineExprKind::kMul:
      return builder_.CreateMul(Emit(expr.lhs()), llvm::ConstantInt::get(i64, expr.value(), true),
                                "", false, /*HasNSW=*/true);
    case AffineExprKind::kFloorDiv:
    case AffineExprKind::kMod: {
      llvm::Value* lhs = Emit(expr.lhs());
      llvm::Value* divisor = llvm::ConstantInt::get(i64, expr.value());
      bool is_div = expr.kind() == AffineExprKind::kFloorDiv;
      if (RangeOf(expr.lhs()).lower >= 0) {
        return is_div ? builder_.CreateUDiv(lhs, divisor) : builder_.CreateURem(lhs, divisor);
      }
      // Floor semantics for possibly negative values.
      llvm::Value* quotient = builder_.CreateSDiv(lhs, divisor);
      llvm::Value* remainder = builder_.CreateSRem(lhs, divisor);
      llvm::Value* negative = builder_.CreateICmpSLT(remainder, llvm::ConstantInt::get(i64, 0));
      if (is_div) {
        return builder_.CreateSelect(negative, builder_.CreateSub(quotient, builder_.getInt64(1)),
                                     quotient);
      }
      return builder_.CreateSelect(negative, builder_.CreateAdd(remainder, divisor), remainder);
    }
  }
  return nullptr;
}

}  // namespace tilesmith::codegen
