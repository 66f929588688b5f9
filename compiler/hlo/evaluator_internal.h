// The evaluator's per-op entry points, split across files by kind of op. Private to
// compiler/hlo.
#pragma once

#include <span>

#include "compiler/hlo/evaluator.h"

namespace tilesmith::hlo::eval {

/// Operand values of the instruction being evaluated, in operand order.
using Operands = std::span<const Literal* const>;

/// What an op needs from the surrounding evaluation: limits, and a way to run a called
/// computation (reducers, fusions, maps).
class Context {
 public:
  explicit Context(const EvaluatorOptions& options) : options_(options) {}
  const EvaluatorOptions& options() const { return options_; }
  /// A zero-filled value of `shape`, or kResourceExhausted if it is over the limit.
  Expected<Literal> Allocate(const Shape& shape) const;
  /// Evaluates a called computation on borrowed arguments.
  Expected<Literal> Call(const HloComputation& computation, Operands arguments) const;

 private:
  const EvaluatorOptions& options_;
};

/// Elementwise ops: unary, binary, ternary (select, clamp), compare, convert,
/// bitcast-convert, reduce-precision, copy. (evaluator_elementwise.cc, and the family files
/// evaluator_elementwise.h lists)
Expected<Literal> EvaluateElementwise(const HloInstruction& instruction, Operands operands,
                                      const Context& context);

/// Everything else the evaluator supports: constants, iota, data movement (broadcast,
/// reshape, bitcast, transpose, slice, dynamic-slice, dynamic-update-slice, pad,
/// concatenate, reverse), reduce, reduce-window, dot, gather, scatter, map, tuple,
/// get-tuple-element, fusion and call. (evaluator_*.cc)
Expected<Literal> EvaluateStructural(const HloInstruction& instruction, Operands operands,
                                     const Context& context);

}  // namespace tilesmith::hlo::eval
