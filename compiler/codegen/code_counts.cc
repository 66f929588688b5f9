#include "compiler/codegen/code_counts.h"

#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>

namespace tilesmith::codegen {
namespace {

bool IsMemoryAccess(const llvm::Instruction& instruction) {
  if (llvm::isa<llvm::LoadInst, llvm::StoreInst>(instruction)) return true;
  if (const auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction)) {
    switch (intrinsic->getIntrinsicID()) {
      case llvm::Intrinsic::masked_load:
      case llvm::Intrinsic::masked_store:
      case llvm::Intrinsic::masked_gather:
      case llvm::Intrinsic::masked_scatter:
        return true;
      default:
        return false;
    }
  }
  return false;
}

bool IsDivision(const llvm::Instruction& instruction) {
  switch (instruction.getOpcode()) {
    case llvm::Instruction::UDiv:
    case llvm::Instruction::SDiv:
    case llvm::Instruction::URem:
    case llvm::Instruction::SRem:
    case llvm::Instruction::FDiv:
    case llvm::Instruction::FRem:
      return true;
    default:
      return false;
  }
}

}  // namespace

CodeCounts CountExecutedCode(llvm::Function& function) {
  CodeCounts counts;
  if (function.isDeclaration()) return counts;
  llvm::DominatorTree dominators(function);
  llvm::LoopInfo loops(dominators);
  llvm::TargetLibraryInfoImpl library_impl(llvm::Triple(function.getParent()->getTargetTriple()));
  llvm::TargetLibraryInfo library(library_impl, &function);
  llvm::AssumptionCache assumptions(function);
  llvm::ScalarEvolution evolution(function, library, assumptions, dominators, loops);
  for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
    if (evolution.getSmallConstantMaxTripCount(loop) == 0) ++counts.unbounded_loops;
  }
  for (llvm::BasicBlock& block : function) {
    // How often the block runs per call: the trip counts of its loops (a loop's body runs
    // trip-count times; an unbounded loop counts once).
    double runs = 1;
    for (llvm::Loop* loop = loops.getLoopFor(&block); loop != nullptr;
         loop = loop->getParentLoop()) {
      unsigned trips = evolution.getSmallConstantTripCount(loop);
      if (trips == 0) trips = evolution.getSmallConstantMaxTripCount(loop);
      if (trips > 0) runs *= trips;
    }
    for (llvm::Instruction& instruction : block) {
      if (llvm::isa<llvm::PHINode, llvm::DbgInfoIntrinsic>(instruction)) continue;
      counts.instructions += runs;
      if (IsMemoryAccess(instruction)) counts.memory += runs;
      if (instruction.getType()->isVectorTy()) counts.vector += runs;
      if (IsDivision(instruction)) counts.divisions += runs;
      if (const auto* branch = llvm::dyn_cast<llvm::BranchInst>(&instruction)) {
        if (branch->isConditional()) counts.branches += runs;
      } else if (llvm::isa<llvm::SwitchInst>(instruction)) {
        counts.branches += runs;
      }
    }
  }
  return counts;
}

}  // namespace tilesmith::codegen
