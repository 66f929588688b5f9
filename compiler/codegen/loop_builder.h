// Counted loops in LLVM IR with loop-carried values, for kernel loops and reductions.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <optional>
#include <vector>

#include "support/status.h"

namespace tilesmith::codegen {

/// Emits `for (i = begin; i < end; ++i)` at the builder's insertion point, with `carried`
/// values threaded through iterations; `body(i, carried)` returns the next iteration's
/// values (same count and types). Leaves the builder after the loop and returns the final
/// carried values. A body failure aborts and is returned.
Expected<std::vector<llvm::Value*>> EmitCountedLoop(
    llvm::IRBuilderBase& builder, llvm::Value* begin, llvm::Value* end,
    std::vector<llvm::Value*> carried,
    const std::function<Expected<std::vector<llvm::Value*>>(
        llvm::Value* i, std::vector<llvm::Value*> carried)>& body,
    const char* name = "loop");

/// Emits `if (condition) { then() }` and continues after it. Where the emitter knows the
/// share of runs in which the condition holds (a bounds check: all but a tile's edge), the
/// branch carries weights that say so, for the optimiser's block placement and for code
/// counts (code_counts.h).
Status EmitIf(llvm::IRBuilderBase& builder, llvm::Value* condition,
              const std::function<Status()>& then,
              std::optional<double> holds_share = std::nullopt);

/// Emits `condition ? then() : otherwise()` with both arms in their own blocks (so an arm
/// may read memory only valid when its condition holds), joined by a phi; weighted as
/// EmitIf's.
Expected<llvm::Value*> EmitIfElse(llvm::IRBuilderBase& builder, llvm::Value* condition,
                                  const std::function<Expected<llvm::Value*>()>& then,
                                  const std::function<Expected<llvm::Value*>()>& otherwise,
                                  std::optional<double> holds_share = std::nullopt);

}  // namespace tilesmith::codegen
