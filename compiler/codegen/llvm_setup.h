// Process-wide LLVM set-up and the optimisation pipeline shared by the targets.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace tilesmith::codegen {

/// Registers the host and NVPTX targets (once per process; thread-safe).
void InitializeLlvm();

/// Runs LLVM's O3 pipeline for `machine` over `module`.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine);

}  // namespace tilesmith::codegen
