// How NVPTX kernels receive their buffers and launch ids, and where their math comes from.
// Private to compiler/codegen: nvptx_backend.h is the NVPTX target's front door.
#pragma once

#include <string>

#include "compiler/codegen/kernel_codegen.h"

namespace tilesmith::codegen {

/// Math through libdevice: `exp` on float is `__nv_expf`, on double `__nv_exp`. The
/// declarations are resolved when libdevice is linked into the module.
class NvptxHooks : public TargetHooks {
 public:
  llvm::FunctionCallee MathFunction(llvm::Module& module, std::string_view name,
                                    llvm::Type* type) override;
};

/// `void @name(ptr addrspace(1) noalias align 64 dereferenceable(bytes) %buf0, …)`, one
/// thread per invocation; ids from `llvm.nvvm.read.ptx.sreg.{tid,ctaid}.{x,y,z}` with the
/// launch grid as their `!range`; `nvvm.annotations` mark the kernel and its `maxntid`.
class NvptxAbi : public KernelAbi {
 public:
  TargetHooks& hooks() override { return hooks_; }
  llvm::Function* CreateFunction(llvm::Module& module, const emitters::KernelIR& kernel) override;
  llvm::Value* BufferPointer(llvm::IRBuilder<>& builder, llvm::Function* function,
                             int64_t i) override;
  bool LoopsOverLaunch() const override { return false; }
  llvm::Value* LaunchId(llvm::IRBuilder<>& builder, int64_t which,
                        const emitters::LaunchGrid& grid) override;
  void Finish(llvm::Module& module, llvm::Function* function,
              const emitters::KernelIR& kernel) override;
  /// An `addrspace(3)` module global per allocation (`.shared` in PTX).
  llvm::Value* SharedBase(llvm::IRBuilder<>& builder, llvm::Function* function,
                          const emitters::KernelIR& kernel, int64_t index) override;
  /// `llvm.nvvm.barrier0` (`bar.sync 0`).
  void Barrier(llvm::IRBuilder<>& builder) override;
  void Fence(llvm::IRBuilder<>& builder) override;
  /// `llvm.nvvm.shfl.sync.bfly.i32` over the full warp.
  llvm::Value* ShuffleXor(llvm::IRBuilder<>& builder, llvm::Value* bits, int64_t offset) override;

 private:
  NvptxHooks hooks_;
};

/// The PTX entry name of `kernel`: its name with every character PTX identifiers do not
/// allow replaced by `_` (`fusion.1` -> `fusion_1`).
std::string NvptxEntryName(const emitters::KernelIR& kernel);

}  // namespace tilesmith::codegen
