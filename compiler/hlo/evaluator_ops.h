// Entry points of the structural op families, each in its own file; `EvaluateStructural`
// (evaluator_structural.cc) dispatches to them. Private to compiler/hlo.
#pragma once

#include "compiler/hlo/evaluator_internal.h"

namespace tilesmith::hlo::eval {

/// broadcast, reshape, bitcast, transpose, slice, dynamic-slice, dynamic-update-slice, pad,
/// concatenate, reverse. (evaluator_data_movement.cc)
Expected<Literal> EvaluateDataMovement(const HloInstruction& instruction, Operands operands,
                                       const Context& context);

/// reduce: variadic, any dimensions. (evaluator_reduce.cc)
Expected<Literal> EvaluateReduce(const HloInstruction& instruction, Operands operands,
                                 const Context& context);

/// reduce-window: variadic, with strides, padding and dilations. (evaluator_reduce.cc)
Expected<Literal> EvaluateReduceWindow(const HloInstruction& instruction, Operands operands,
                                       const Context& context);

/// dot with batch and contracting dimensions. (evaluator_dot.cc)
Expected<Literal> EvaluateDot(const HloInstruction& instruction, Operands operands,
                              const Context& context);

/// gather with XLA's dimension numbers. (evaluator_gather_scatter.cc)
Expected<Literal> EvaluateGather(const HloInstruction& instruction, Operands operands,
                                 const Context& context);

/// scatter with XLA's dimension numbers, variadic. (evaluator_gather_scatter.cc)
Expected<Literal> EvaluateScatter(const HloInstruction& instruction, Operands operands,
                                  const Context& context);

}  // namespace tilesmith::hlo::eval
