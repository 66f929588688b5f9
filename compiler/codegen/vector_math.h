// Inline, branch-free implementations of f32 math functions that LLVM can vectorise, for
// targets whose library functions are scalar calls (the host's libm). Each states its
// bound in units in the last place against libm, which tests/codegen/vector_math_test.cc
// checks over every binade: exp 2, log 2, log1p 3, expm1 3, atan2 3, pow 1, and XLA's own
// approximations erf 6 and tanh 5.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <string_view>

namespace tilesmith::codegen {

/// exp(x) for f32: Cody-Waite reduction by ln 2, a degree-7 polynomial, and the exponent
/// put back by integer arithmetic. Overflows to +inf, underflows to 0, NaN stays NaN.
llvm::Value* EmitVectorExpF32(llvm::IRBuilderBase& builder, llvm::Value* x);

/// tanh(x) for f32: XLA's rational approximation (the same coefficients, so host results
/// match XLA's CPU and GPU backends), x itself near 0, +-1 beyond 7.9.
llvm::Value* EmitVectorTanhF32(llvm::IRBuilderBase& builder, llvm::Value* x);

/// log(x) for f32: the exponent by integer arithmetic (subnormals scaled first), Cephes'
/// polynomial for log(1 + f) on [sqrt(1/2) - 1, sqrt(2) - 1]. -inf at 0, NaN below.
llvm::Value* EmitVectorLogF32(llvm::IRBuilderBase& builder, llvm::Value* x);

/// log1p(x) for f32 by Goldberg's identity log(u) x / (u - 1), u = 1 + x.
llvm::Value* EmitVectorLog1pF32(llvm::IRBuilderBase& builder, llvm::Value* x);

/// expm1(x) for f32: a Taylor series for |x| < 1, exp(x) - 1 beyond.
llvm::Value* EmitVectorExpm1F32(llvm::IRBuilderBase& builder, llvm::Value* x);

/// erf(x) for f32: XLA's and Eigen's rational approximation on [-4, 4], +-1 beyond.
llvm::Value* EmitVectorErfF32(llvm::IRBuilderBase& builder, llvm::Value* x);

/// atan2(y, x) for f32, with C's signed zeros, infinities and quadrants.
llvm::Value* EmitVectorAtan2F32(llvm::IRBuilderBase& builder, llvm::Value* y, llvm::Value* x);

/// pow(x, y) for f32, computed in f64 and rounded once, with C's special cases.
llvm::Value* EmitVectorPowF32(llvm::IRBuilderBase& builder, llvm::Value* x, llvm::Value* y);

/// The inline implementation of `name` for `x`'s type (of `name(x, y)` when `y` is given:
/// atan2, pow), or null when there is none.
llvm::Value* EmitVectorMath(llvm::IRBuilderBase& builder, std::string_view name, llvm::Value* x,
                            llvm::Value* y = nullptr);

}  // namespace tilesmith::codegen
