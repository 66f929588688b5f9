// Comparing a kernel's outputs with the reference: exact for integers and pred, within a
// tolerance scaled to each float type's precision, and NaN/inf must match exactly.
#pragma once

#include <optional>
#include <string>

#include "compiler/hlo/literal.h"

namespace tilesmith::hlo {

/// The tolerance for `type`: |actual - expected| <= absolute + relative * |expected|.
struct Tolerance {
  double relative = 0;
  double absolute = 0;
};

/// A tolerance that allows a few units in the last place of `type` plus the error of
/// different (but correct) evaluation orders of reductions.
Tolerance DefaultTolerance(PrimitiveType type);

/// What a comparison found.
struct Comparison {
  bool matches = true;
  int64_t mismatches = 0;
  double largest_error = 0;           // largest |actual - expected| among finite pairs
  double largest_relative_error = 0;  // that divided by max(|expected|, tiny)
  std::string first_mismatch;         // "output 0 element 17: 1.5 vs 1.25" or ""
  Tolerance tolerance;                // the loosest float tolerance applied (0 for exact)
};

/// Compares every element (tuples element by element); shapes must agree ignoring layout.
/// `reassociated_terms` > 1 says each element may be a sum (or other reduction) of that many
/// terms taken in a different order than the reference's (a parallel reduction tree): float
/// tolerances then grow with the tree's depth, log2(terms), and the absolute tolerance with
/// the largest expected magnitude, since cancellation leaves results smaller than their terms.
///
/// `precision`, when given, is the narrowest float type a float `actual`'s values were
/// rounded to on the way (an f32 output computed through bf16 converts is only as exact as
/// bf16): the relative tolerance becomes that type's ulps; the absolute floor stays the
/// array's own. Never tighter than the array's own type.
Comparison CompareLiterals(const Literal& actual, const Literal& expected,
                           int64_t reassociated_terms = 1,
                           std::optional<PrimitiveType> precision = std::nullopt);

/// The less precise of two float types (fewer mantissa bits); `a` when either is not a
/// float type.
PrimitiveType LessPrecise(PrimitiveType a, PrimitiveType b);

}  // namespace tilesmith::hlo
