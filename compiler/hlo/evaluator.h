// The reference evaluator: executes HLO on the CPU, exactly for integers and with the
// precision of the type for floats. It is the ground truth every kernel is checked against.
//
// Floating-point semantics: f32 and f64 ops compute in their own type. bf16, f16 and the
// f8/f4 types compute each op in f32 and round the result to the type (nearest, ties to
// even) after every op, as hardware computing in that type does; for +, -, *, / and sqrt
// this equals the correctly rounded narrow result because f32 carries more than twice
// their precision. Transcendentals use the C library in the computing type. `dot`
// accumulates narrow floats in f32 and rounds once at the end. Reductions run in linear
// order of the reduced elements.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "compiler/hlo/literal.h"
#include "support/status.h"

namespace tilesmith::hlo {

struct EvaluatorOptions {
  /// Upper bound on the bytes of any single value the evaluation creates; going over is a
  /// kResourceExhausted error naming the instruction, not an allocation failure.
  int64_t max_value_bytes = int64_t{4} << 30;
};

/// Evaluates `computation` with one argument per parameter (shapes must match, layouts may
/// differ). Returns the root's value; a tuple root gives a tuple literal.
Expected<Literal> Evaluate(const HloComputation& computation, std::span<const Literal> arguments,
                           const EvaluatorOptions& options = {});

/// Deterministic pseudo-random arguments for every parameter of `computation`: floats
/// uniform in [-1, 1), signed integers in [-8, 8), unsigned in [0, 16), pred 50/50. Small
/// integer ranges keep index operands (dynamic-slice, gather, scatter) mostly in bounds.
Expected<std::vector<Literal>> MakeRandomArguments(const HloComputation& computation, uint64_t seed,
                                                   const EvaluatorOptions& options = {});

}  // namespace tilesmith::hlo
