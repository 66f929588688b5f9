#include "compiler/hlo/literal_compare.h"

#include <algorithm>
#include <cmath>
#include <complex>

#include "compiler/hlo/float_types.h"

namespace tilesmith::hlo {
namespace {

// The tolerance for an array of `type` whose elements may be reduced in another order.
Tolerance ReassociatedTolerance(const Literal& expected, PrimitiveType type, int64_t terms) {
  Tolerance tolerance = DefaultTolerance(type);
  if (terms <= 1 || (!IsFloatingPoint(type) && !IsComplex(type))) return tolerance;
  double depth = std::max(1.0, std::log2(static_cast<double>(terms)));
  double largest = 0;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    std::complex<double> value = expected.GetComplex(i);
    for (double part : {value.real(), value.imag()}) {
      if (std::isfinite(part)) largest = std::max(largest, std::fabs(part));
    }
  }
  tolerance.relative *= depth;
  tolerance.absolute = std::max(tolerance.absolute, tolerance.relative * largest);
  return tolerance;
}

// Mantissa bits of a float type (0 for other types).
int MantissaBits(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF64:
    case PrimitiveType::kC128:
      return 52;
    case PrimitiveType::kF32:
    case PrimitiveType::kC64:
      return 23;
    default:
      return IsNarrowFloat(type) ? FormatOf(type).mantissa_bits : 0;
  }
}

void Compare(const Literal& actual, const Literal& expected, const std::string& where,
             int64_t terms, std::optional<PrimitiveType> precision, Comparison& result) {
  auto fail = [&](std::string message) {
    result.matches = false;
    ++result.mismatches;
    if (result.first_mismatch.empty()) result.first_mismatch = where + message;
  };
  if (!actual.shape().EqualsIgnoringLayout(expected.shape())) {
    fail("shape " + ShapeToStringNoLayout(actual.shape()) + " vs " +
         ShapeToStringNoLayout(expected.shape()));
    return;
  }
  if (actual.shape().IsTuple()) {
    for (size_t i = 0; i < actual.tuple_elements().size(); ++i) {
      Compare(actual.tuple_elements()[i], expected.tuple_elements()[i],
              where + "element " + std::to_string(i) + " ", terms, precision, result);
    }
    return;
  }
  PrimitiveType type = actual.element_type();
  Tolerance tolerance = ReassociatedTolerance(expected, type, terms);
  // A value rounded to a narrower type on its way differs by that type's ulps, relative to
  // the value; the absolute floor stays the array's own, so a small value keeps a tight bound.
  if (PrimitiveType judged = precision ? LessPrecise(type, *precision) : type; judged != type) {
    tolerance.relative = std::max(tolerance.relative, DefaultTolerance(judged).relative);
  }
  result.tolerance.relative = std::max(result.tolerance.relative, tolerance.relative);
  result.tolerance.absolute = std::max(result.tolerance.absolute, tolerance.absolute);
  auto fail_at = [&](int64_t i) {
    fail("index " + std::to_string(i) + ": " + ScalarToString(actual, i) + " vs " +
         ScalarToString(expected, i));
  };
  // One real value (or one part of a complex one) of `actual` against `expected`.
  auto close = [&](double x, double y) {
    if (std::isnan(y) || std::isinf(y) || std::isnan(x) || std::isinf(x)) {
      return (std::isnan(x) && std::isnan(y)) || (std::isinf(x) && x == y);
    }
    double error = std::fabs(x - y);
    result.largest_error = std::max(result.largest_error, error);
    result.largest_relative_error =
        std::max(result.largest_relative_error, error / std::max(std::fabs(y), 1e-300));
    return error <= tolerance.absolute + tolerance.relative * std::fabs(y);
  };
  // The type is decided once, not per element: this loop is most of a large output's
  // verification, which every tuned config pays.
  const int64_t count = actual.element_count();
  if (IsComplex(type)) {
    for (int64_t i = 0; i < count; ++i) {
      std::complex<double> a = actual.GetComplex(i);
      std::complex<double> e = expected.GetComplex(i);
      if (!close(a.real(), e.real()) || !close(a.imag(), e.imag())) fail_at(i);
    }
  } else if (IsFloatingPoint(type)) {
    for (int64_t i = 0; i < count; ++i) {
      if (!close(actual.GetDouble(i), expected.GetDouble(i))) fail_at(i);
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      if (actual.GetInt(i) != expected.GetInt(i)) fail_at(i);
    }
  }
}

}  // namespace

Tolerance DefaultTolerance(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF64:
    case PrimitiveType::kC128:
      return {1e-10, 1e-12};
    case PrimitiveType::kF32:
    case PrimitiveType::kC64:
      return {1e-5, 1e-6};
    default:
      if (IsNarrowFloat(type)) {
        // Two units in the last place of the type's mantissa.
        const FloatFormat& format = FormatOf(type);
        double ulp = std::ldexp(1.0, -format.mantissa_bits);
        return {2 * ulp, 2 * ulp};
      }
      return {0, 0};
  }
}

Comparison CompareLiterals(const Literal& actual, const Literal& expected,
                           int64_t reassociated_terms, std::optional<PrimitiveType> precision) {
  Comparison result;
  Compare(actual, expected, "", reassociated_terms, precision, result);
  return result;
}

PrimitiveType LessPrecise(PrimitiveType a, PrimitiveType b) {
  int bits_a = MantissaBits(a), bits_b = MantissaBits(b);
  if (bits_a == 0 || bits_b == 0) return a;
  return bits_b < bits_a ? b : a;
}

}  // namespace tilesmith::hlo
