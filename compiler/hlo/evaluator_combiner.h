// Applying a reducer computation (the `to_apply` of reduce, reduce-window and scatter) to
// accumulators and values held in literals. Private to compiler/hlo.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "compiler/hlo/evaluator_internal.h"

namespace tilesmith::hlo::eval {

/// Combines runs of values into accumulators with a reducer computation: acc = f(acc, x).
/// A reducer that is one add, multiply, maximum, minimum, and, or or xor of its two
/// parameters runs as a typed loop with the elementwise evaluator's per-type semantics
/// (narrow floats computed in f32 and rounded after every step, integers wrapping, NaN
/// propagating through maximum/minimum); any other reducer, variadic ones included, is
/// evaluated per element on rank-0 literals through `Context::Call`.
class Combiner {
 public:
  /// Prepares `to_apply` for N accumulators of `accumulator_types` and N values of
  /// `value_types`; `context` must outlive the combiner.
  static Expected<Combiner> Create(const HloComputation& to_apply,
                                   std::span<const PrimitiveType> accumulator_types,
                                   std::span<const PrimitiveType> value_types,
                                   const Context& context);

  /// For i = 0 .. count-1 in order, sets every accumulators[k] element at
  /// acc + i * acc_stride to output k of to_apply(accumulators..., values...), with the
  /// values read at value + i * value_stride (strides in elements; 0 repeats).
  Status Combine(std::span<Literal> accumulators, int64_t acc, int64_t acc_stride,
                 std::span<const Literal* const> values, int64_t value, int64_t value_stride,
                 int64_t count);

  /// True when the typed loop is used rather than per-element calls.
  bool is_fast() const { return static_cast<bool>(row_); }

  /// Typed loop over one run: acc[i * acc_stride] = op(acc[...], values[i * value_stride]),
  /// pointers at the first element of the run.
  using RowFn = std::function<void(uint8_t* acc, int64_t acc_stride, const uint8_t* values,
                                   int64_t value_stride, int64_t count)>;

 private:
  Combiner(const HloComputation& to_apply, const Context& context)
      : to_apply_(&to_apply), context_(&context) {}

  Status CombineByCalls(std::span<Literal> accumulators, int64_t acc, int64_t acc_stride,
                        std::span<const Literal* const> values, int64_t value, int64_t value_stride,
                        int64_t count);

  const HloComputation* to_apply_;
  const Context* context_;
  RowFn row_;
  std::vector<Literal> scalars_;  // the reducer's arguments: N accumulators, then N values
};

}  // namespace tilesmith::hlo::eval
