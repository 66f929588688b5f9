// Late NVPTX passes over a thread's 16-bit lanes (internal to compiler/codegen). LLVM 16's
// NVPTX back end leaves them scalar where the hardware has packed forms: each bf16 or f16
// rounding is its own cvt, and a 16-byte vector of 8- or 16-bit lanes is split into two
// 8-byte accesses. These passes run at the end of the IR pipeline (after InstCombine, which
// would undo the wide accesses) and change no value a kernel computes.
#pragma once

#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>

namespace tilesmith::codegen {

/// Pairs independent roundings of f32 values in one basic block, bf16 (`llvm.nvvm.f2bf16.rn`)
/// with bf16 and f16 (`fptrunc float to half`) with f16, into one packed conversion
/// (`cvt.rn.bf16x2.f32`, `cvt.rn.f16x2.f32`: sm_80 and newer) that rounds each half exactly
/// as the scalar instruction does. The instructions the second rounding depends on are
/// moved up to the first where that is safe (no memory writes, calls or reads across a
/// write); roundings that cannot be paired stay scalar.
class PackHalfConversionsPass : public llvm::PassInfoMixin<PackHalfConversionsPass> {
 public:
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager&);
};

/// Rewrites 16-byte vector loads and stores of 8- or 16-bit integer lanes as four 32-bit
/// lanes (`ld.global.v4.u32`), each element taken out or put in by shifts, where every use
/// of a load is an element at a constant position. LLVM 16 splits `<8 x i16>` and
/// `<16 x i8>` accesses into two.
class WidenNarrowVectorAccessesPass : public llvm::PassInfoMixin<WidenNarrowVectorAccessesPass> {
 public:
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager&);
};

/// Adds, at the end of the optimisation pipeline for `ptx_sm`, a load/store vectoriser (the
/// pipeline's VectorCombine splits vectors of lanes back into scalars), the packed
/// conversions from sm_80 on, and the wide accesses.
void AddNvptxPacking(llvm::PassBuilder& builder, int ptx_sm);

}  // namespace tilesmith::codegen
