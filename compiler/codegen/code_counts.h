// Static estimates of what optimised LLVM IR executes: every instruction weighted by the
// trip counts of the loops around it (scalar evolution's constant trip counts) and by the
// probability that its block is reached in an iteration (branch weights where the emitter
// gave them, LLVM's heuristics elsewhere), so a cost model sees the code the compiler really
// produced — the index arithmetic it could not fold, the loops it vectorised — rather than a count
// of elements.
#pragma once

#include <llvm/IR/Function.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>

namespace tilesmith::codegen {

/// Instructions one call of a function executes, by class. A loop whose trip count scalar
/// evolution cannot bound (a kernel's loop over its range of blocks) counts once, so a host
/// kernel's figures are per block.
struct CodeCounts {
  double instructions = 0;  ///< Every instruction but debug intrinsics and phis.
  double memory = 0;        ///< Loads and stores (gathers and scatters included).
  double vector = 0;        ///< Instructions producing a vector.
  double divisions = 0;     ///< Integer and floating-point divisions and remainders.
  /// Of `divisions`: integer ones by a constant (scalar or splat). The target lowers them
  /// to a multiply-high and shifts, a few cycles, where a division by a variable waits tens.
  double constant_divisions = 0;
  /// Of `divisions`: floating-point ones (a vector divide of a few cycles' throughput,
  /// which does not hold up the index path as an integer division by a variable does).
  double float_divisions = 0;
  /// The lanes of gathers and scatters (masked or not): each lane is a load or store of its
  /// own, though the instruction counts once. The loop vectoriser makes them of a thread
  /// loop whose addresses it cannot prove contiguous.
  double gather_lanes = 0;
  /// The lanes of arithmetic, compares and conversions on f16 or bf16 (not their loads,
  /// stores or bitcasts): x86 has no such arithmetic, so each lane converts to f32 and back
  /// around the operation, several instructions that the IR counts once.
  double half_lanes = 0;
  double branches = 0;  ///< Conditional branches and switches.
  /// With a target machine: the machine instructions its code generator makes of the
  /// function (after instruction selection and register allocation: a promoted f16 lane's
  /// conversions, spills, shuffles), each weighted by the runs of the IR block it came from.
  double machine_instructions = 0;
  /// Of `machine_instructions`: those that move single lanes between vector, mask and
  /// general registers (`vpextr*`, `vpinsr*`, mask-register operations). Packed f16 pairs
  /// and masked tails go through them, each waiting on a cross-domain transfer.
  double lane_moves = 0;
  int64_t unbounded_loops = 0;  ///< Loops counted once: no constant bound on their trips.
};

CodeCounts CountExecutedCode(llvm::Function& function);

/// CountExecutedCode and the machine instructions: `function`'s module is compiled to
/// assembly by `machine` (which changes its IR: count nothing of it afterwards). Blocks
/// without a name get one, so the printer's label comments name every block.
CodeCounts CountExecutedMachineCode(llvm::Function& function, llvm::TargetMachine& machine);

}  // namespace tilesmith::codegen
