// Index arithmetic in LLVM IR. Indices stay symbolic (analysis::AffineExpr over the
// variables of the kernel being emitted: launch ids, loop counters, runtime offsets) until
// an address or a comparison needs them; then they are emitted once per expression and
// scope, using unsigned division wherever the ranges prove the value non-negative.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <span>
#include <unordered_map>
#include <vector>

#include "compiler/analysis/affine_expr.h"
#include "compiler/analysis/interval.h"

namespace tilesmith::codegen {

/// The variables of a kernel under emission. Expressions refer to variable k as symbol
/// `s_k`; dims are not used.
class IndexEnv {
 public:
  explicit IndexEnv(llvm::IRBuilderBase& builder) : builder_(builder) {}

  /// Registers `value` (an i64) with the range it takes; returns its symbol expression.
  analysis::AffineExpr AddVariable(llvm::Value* value, analysis::Interval range);
  int64_t variable_count() const { return static_cast<int64_t>(values_.size()); }

  /// The range of `expr` over the variables' ranges (interval arithmetic).
  analysis::Interval RangeOf(const analysis::AffineExpr& expr) const;
  /// An index expression and the interval a condition wants it in.
  using Condition = std::pair<analysis::AffineExpr, analysis::Interval>;
  /// The share of the variables' joint range where every condition holds, each variable
  /// uniform over its range (as launch ids and counted loops run through theirs): exact
  /// over up to 4096 points of the variables the conditions use, else estimated from 1024
  /// samples drawn the same way every time. 1 when there is no condition.
  double HoldShare(std::span<const Condition> conditions) const;

  /// `expr` as an i64 value, reusing what this scope already emitted.
  llvm::Value* Emit(const analysis::AffineExpr& expr);

  /// Code emitted inside a conditional region may not be reused after it: open a scope
  /// when entering one and close it when leaving.
  void PushScope();
  void PopScope();

 private:
  llvm::Value* EmitUncached(const analysis::AffineExpr& expr);

  llvm::IRBuilderBase& builder_;
  std::vector<llvm::Value*> values_;
  std::vector<analysis::Interval> ranges_;
  std::vector<std::unordered_map<analysis::AffineExpr, llvm::Value*>> scopes_{1};
};

}  // namespace tilesmith::codegen
