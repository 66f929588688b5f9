// Kernel IR -> LLVM IR. The same kernel body serves both targets; they differ in how the
// function receives its buffers and launch ids:
//  - host: `void @name(ptr %buffers, i64 %first_block, i64 %end_block)` runs the blocks in
//    [first_block, end_block), each phase as a loop over the block's threads (a barrier is
//    the end of a phase; shared memory is a stack array of the call, so each task of the
//    thread pool has its own; a warp shuffle splits its loop into segments, each a loop over
//    the threads, that pass values through per-thread scratch arrays);
//  - NVPTX: `void @name(ptr addrspace(1) %buffer0, …)`, one thread per invocation, ids from
//    the special registers.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

#include "compiler/codegen/elemental.h"
#include "compiler/emitters/kernel_ir.h"
#include "support/status.h"

namespace tilesmith::codegen {

/// How a target's kernels receive their launch ids and buffers.
class KernelAbi {
 public:
  virtual ~KernelAbi() = default;
  virtual TargetHooks& hooks() = 0;
  /// Creates the kernel function with its signature and entry block.
  virtual llvm::Function* CreateFunction(llvm::Module& module,
                                         const emitters::KernelIR& kernel) = 0;
  /// The base pointer of buffer `i` inside `function`.
  virtual llvm::Value* BufferPointer(llvm::IRBuilder<>& builder, llvm::Function* function,
                                     int64_t i) = 0;
  /// True when the function itself loops over blocks and threads (the host); false when the
  /// launch supplies them (a GPU).
  virtual bool LoopsOverLaunch() const = 0;
  /// The launch id `which` (kThreadIdX … kBlockIdZ) on targets where the launch supplies it.
  virtual llvm::Value* LaunchId(llvm::IRBuilder<>& builder, int64_t which,
                                const emitters::LaunchGrid& grid) = 0;
  /// The base of shared allocation `index` of `kernel`: one per block, 64-byte aligned.
  virtual llvm::Value* SharedBase(llvm::IRBuilder<>& builder, llvm::Function* function,
                                  const emitters::KernelIR& kernel, int64_t index) = 0;
  /// Waits for every thread of the block (GPUs; the host runs phases one after another).
  virtual void Barrier(llvm::IRBuilder<>& /*builder*/) {}
  /// Orders this thread's memory accesses before the fence against those after it, for every
  /// block of the launch (`__threadfence()` on a GPU).
  virtual void Fence(llvm::IRBuilder<>& builder) {
    builder.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
  }
  /// `bits` (i32) of the lane whose id is this lane's xor `offset`, on targets whose warps run
  /// in lockstep; null where the kernel code emulates the warp (the host).
  virtual llvm::Value* ShuffleXor(llvm::IRBuilder<>& /*builder*/, llvm::Value* /*bits*/,
                                  int64_t /*offset*/) {
    return nullptr;
  }
  /// Marks the function as a kernel (annotations, attributes) after its body is emitted.
  virtual void Finish(llvm::Module& module, llvm::Function* function,
                      const emitters::KernelIR& kernel) = 0;
};

/// Emits `kernel` into `module` through `abi`; returns the function.
Expected<llvm::Function*> EmitKernelFunction(const emitters::KernelIR& kernel, llvm::Module& module,
                                             KernelAbi& abi);

}  // namespace tilesmith::codegen
