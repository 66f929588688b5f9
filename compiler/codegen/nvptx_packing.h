// Late NVPTX passes over a thread's 16-bit lanes (internal to compiler/codegen). LLVM 16's
// NVPTX back end leaves them scalar where the hardware has packed forms: each bf16 or f16
// rounding is its own cvt, a 16-byte vector of 8- or 16-bit lanes is split into two 8-byte
// accesses, and lanes move through 16-bit registers. These passes run at the end of the IR
// pipeline (after InstCombine, which would undo the wide accesses) and change no value a
// kernel computes.
#pragma once

#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>

namespace tilesmith::codegen {

/// Pairs independent instructions of one basic block that have a two-lane form on `ptx_sm`:
/// roundings of f32 values to bf16 (`llvm.nvvm.f2bf16.rn`) or f16 (`fptrunc float to half`)
/// into one packed conversion (`cvt.rn.bf16x2.f32`, `cvt.rn.f16x2.f32`: sm_80 and newer),
/// and f16 adds, subtracts and multiplies into their f16x2 form (sm_53 and newer). Each half
/// computes exactly what the scalar instruction did. The instructions the second of a pair
/// depends on are moved up to the first where that is safe (no memory writes, calls that may
/// not return, or reads across a write); instructions that cannot be paired stay scalar.
class PackHalfPairsPass : public llvm::PassInfoMixin<PackHalfPairsPass> {
 public:
  explicit PackHalfPairsPass(int ptx_sm) : ptx_sm_(ptx_sm) {}
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager&);

 private:
  int ptx_sm_;
};

/// Rewrites 8- and 16-byte vector loads and stores of 8- or 16-bit integer lanes as 32-bit
/// lanes (`ld.global.v2.u32`, `ld.global.v4.u32`), each element taken out or put in by
/// shifts, where every use of a load is an element at a constant position. LLVM 16 splits
/// `<8 x i16>` and `<16 x i8>` accesses into two, and moves packed words through 16-bit
/// registers; a word that is a packed conversion's two halves is stored as it is.
class WidenNarrowVectorAccessesPass : public llvm::PassInfoMixin<WidenNarrowVectorAccessesPass> {
 public:
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager&);
};

/// Adds, at the end of the optimisation pipeline for `ptx_sm`, the pairs, a load/store
/// vectoriser (the pipeline's VectorCombine splits vectors of lanes back into scalars) and
/// the wide accesses.
void AddNvptxPacking(llvm::PassBuilder& builder, int ptx_sm);

}  // namespace tilesmith::codegen
