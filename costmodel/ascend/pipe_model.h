// The public Ascend tiling cost model (spec "Ascend tiling cost model"), per vector core and
// in cycles: what one Load (MTE2), one Store (MTE3) or one vector API call (VEC) costs, the
// head cost of each pipe, and the objective the tiling solver minimises.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/hlo/primitive_type.h"
#include "support/status.h"

namespace tilesmith::costmodel::ascend {

/// The three pipes of a vector core that the model times; with double buffering they
/// overlap, so the slowest one bounds the kernel.
enum class Pipe { kMte2, kMte3, kVec };

/// "MTE2", "MTE3", "VEC".
std::string_view PipeName(Pipe pipe);

/// Cycles of one pipe each, head costs included.
struct PipeCycles {
  double mte2 = 0;
  double mte3 = 0;
  double vec = 0;

  double Max() const;
  /// The pipe with the most cycles (MTE2 on ties, then MTE3).
  Pipe Bottleneck() const;
};

/// One Load of `bytes` from global memory into the unified buffer while `block_dim` cores
/// load at once: S / (9.9074 + 15.896 / block_dim) + 27.01.
double LoadCycles(double bytes, int64_t block_dim);

/// One 32-byte-aligned Store of `bytes`: S / (9.96 + 3.79 / block_dim) + 12.09.
double StoreCycles(double bytes, int64_t block_dim);

/// The fixed cost of a pipe that has work: MTE2 1575 + 32.7·block_dim, MTE3 497, VEC 37.
double HeadCycles(Pipe pipe, int64_t block_dim);

/// The solver's objective: max(T_MTE2, T_MTE3, T_VEC) + 300·block_dim.
double Objective(const PipeCycles& cycles, int64_t block_dim);

/// The cost of one vector op call on N elements: k·N + b cycles.
struct VectorCost {
  double k = 0;
  double b = 0;
  /// False only where the spec publishes this op and width (fp16/fp32 Add, fp32 Exp).
  bool assumed = true;
  /// Where the numbers come from, e.g. "spec: fp32 Add" or "assumed: 2 simple + 2
  /// transcendental calls at 4-byte width".
  std::string basis;

  double Cycles(double elements) const { return k * elements + b; }
};

/// How a vector op is scheduled and costed.
struct VectorOpInfo {
  VectorCost cost;
  /// Needs a scratch buffer the size of its largest operand (multi-step APIs, transposes).
  bool needs_tmp_buffer = false;
};

/// The cost of vector op `type` ("Add", "Exp", "Gelu", …) on elements of `dtype` (the
/// widest element type the op touches). An error names an op the model has no estimate for.
Expected<VectorOpInfo> VectorOp(std::string_view type, hlo::PrimitiveType dtype);

}  // namespace tilesmith::costmodel::ascend
