// Inline, branch-free implementations of f32 math functions that LLVM can vectorise, for
// targets whose library functions are scalar calls (the host's libm). Within a few units
// in the last place of the correctly rounded result (tests/codegen/vector_math_test.cc).
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

/// The inline implementation of `name` for `x`'s type, or null when there is none.
llvm::Value* EmitVectorMath(llvm::IRBuilderBase& builder, std::string_view name, llvm::Value* x);

}  // namespace tilesmith::codegen
