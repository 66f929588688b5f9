// Static estimates of what optimised LLVM IR executes: every instruction weighted by the
// trip counts of the loops around it (scalar evolution's constant trip counts) and by the
// probability that its block is reached in an iteration (branch weights where the emitter
// gave them, LLVM's heuristics elsewhere), so a cost model sees the code the compiler really
// produced — the index arithmetic it could not fold, the loops it vectorised — rather than a count
// of elements.
#pragma once

#include <llvm/IR/Function.h>

#include <cstdint>

namespace tilesmith::codegen {

/// Instructions one call of a function executes, by class. A loop whose trip count scalar
/// evolution cannot bound (a kernel's loop over its range of blocks) counts once, so a host
/// kernel's figures are per block.
struct CodeCounts {
  double instructions = 0;      ///< Every instruction but debug intrinsics and phis.
  double memory = 0;            ///< Loads and stores (gathers and scatters included).
  double vector = 0;            ///< Instructions producing a vector.
  double divisions = 0;         ///< Integer and floating-point divisions and remainders.
  double branches = 0;          ///< Conditional branches and switches.
  int64_t unbounded_loops = 0;  ///< Loops counted once: no constant bound on their trips.
};

CodeCounts CountExecutedCode(llvm::Function& function);

}  // namespace tilesmith::codegen
