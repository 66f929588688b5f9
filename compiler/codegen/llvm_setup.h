// Process-wide LLVM set-up and the optimisation pipeline shared by the targets.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

#include <functional>

namespace tilesmith::codegen {

/// Registers the host and NVPTX targets (once per process; thread-safe).
void InitializeLlvm();

/// Runs LLVM's O3 pipeline for `machine` over `module`. `customize`, when given, may add
/// passes at the pipeline's extension points (`registerPipelineEarlySimplificationEPCallback`
/// and the like) before the pipeline is built.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine,
                    const std::function<void(llvm::PassBuilder&)>& customize = {});

}  // namespace tilesmith::codegen
