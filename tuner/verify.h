// Checking a candidate's outputs against the reference (the evaluator's values, or the
// first verified candidate's): exact for integers, within a tolerance scaled to each float
// type (hlo::CompareLiterals). Shared by the tuner and `tilesmith check`.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "compiler/hlo/literal.h"

namespace tilesmith::tuner {

/// A value's arrays, depth first: one per fusion output (tuple results flattened).
std::vector<const hlo::Literal*> FlattenOutputs(const hlo::Literal& value);

/// The verdict over every output.
struct OutputComparison {
  bool matches = true;
  int64_t mismatches = 0;
  double largest_error = 0;
  std::string first_mismatch;     ///< "output 1 element 17: 1.5 vs 1.25", or why counts differ.
  double relative_tolerance = 0;  ///< The loosest float tolerance applied to any output.
  double absolute_tolerance = 0;
};

/// For each output of `fusion` (FlattenOutputs' order), the narrowest float type its value
/// was rounded to on its way from the parameters, its own type included. Two correct
/// kernels may differ by an ulp of f32 before a round to bf16, and then by an ulp of bf16
/// after it; every later f32 step keeps that difference. Parameters and constants are
/// exact in both, so their types do not count.
std::vector<hlo::PrimitiveType> OutputPrecisions(const hlo::HloComputation& fusion);

/// Compares `actual[i]` with `expected[i]` for every output; `reassociated_terms` as in
/// hlo::CompareLiterals (a reduction kernel's tree order differs from the reference's).
/// `precisions[i]`, when given, is output i's OutputPrecisions: its tolerance is that
/// type's.
OutputComparison CompareOutputs(std::span<const hlo::Literal> actual,
                                std::span<const hlo::Literal* const> expected,
                                int64_t reassociated_terms = 1,
                                std::span<const hlo::PrimitiveType> precisions = {});

}  // namespace tilesmith::tuner
