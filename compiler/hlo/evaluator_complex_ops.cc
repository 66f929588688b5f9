// Ops on c64 and c128 values, computed in std::complex of the component type (c64 in
// float, c128 in double). Special cases follow XLA's evaluator.
#include "compiler/hlo/evaluator_elementwise.h"

namespace tilesmith::hlo::eval {
namespace {

template <typename C>
C Sign(C x) {
  auto magnitude = std::abs(x);
  return magnitude == 0 ? C{0} : x / magnitude;
}

// exp(a + bi) - 1 = expm1(a) cos(b) + (cos(b) - 1) + i exp(a) sin(b), with cos(b) - 1
// written as -2 sin^2(b/2) so that small arguments keep their precision.
template <typename C>
C Expm1(C x) {
  using R = typename C::value_type;
  R a = x.real();
  R b = x.imag();
  R half_sine = std::sin(b / 2);
  return {std::expm1(a) * std::cos(b) - 2 * half_sine * half_sine, std::exp(a) * std::sin(b)};
}

// log(1 + x) = log|1 + x| + i arg(1 + x); near 0, |1 + x| = sqrt(1 + a(2 + a) + b^2) is
// taken through log1p so that small arguments keep their precision.
template <typename C>
C Log1p(C x) {
  using R = typename C::value_type;
  R a = x.real();
  R b = x.imag();
  if (std::fabs(a) + std::fabs(b) >= R{0.5}) return std::log(C{1} + x);
  return {R{0.5} * std::log1p(a * (2 + a) + b * b), std::atan2(b, 1 + a)};
}

// XLA: 1^x = 1 and x^0 = 1 for every x (Kahan), inf^(a + 0i) is inf for a > 0 and 0 for
// a < 0; the rest is std::pow.
template <typename C>
C Power(C base, C exponent) {
  if (base == C{1} || exponent == C{0}) return C{1};
  bool base_is_inf = base.imag() == 0 && std::isinf(base.real()) && base.real() > 0;
  if (base_is_inf && exponent.imag() == 0 && exponent.real() != 0) {
    return exponent.real() > 0 ? base : C{0};
  }
  return std::pow(base, exponent);
}

// XLA: atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)).
template <typename C>
C Atan2(C y, C x) {
  const C i{0, 1};
  return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
}

template <typename C>
Status UnaryLoop(HloOpcode opcode, const Literal& in, Literal& out) {
  using R = typename C::value_type;
  auto map = [&](auto fn) -> Status {
    MapElements<C, C>(in, out, fn);
    return OkStatus();
  };
  auto map_to_real = [&](auto fn) -> Status {
    MapElements<C, R>(in, out, fn);
    return OkStatus();
  };
  switch (opcode) {
    case HloOpcode::kAbs:
      return map_to_real([](C x) { return std::abs(x); });
    case HloOpcode::kReal:
      return map_to_real([](C x) { return x.real(); });
    case HloOpcode::kImag:
      return map_to_real([](C x) { return x.imag(); });
    case HloOpcode::kNegate:
      return map([](C x) { return -x; });
    case HloOpcode::kSign:
      return map([](C x) { return Sign(x); });
    case HloOpcode::kExp:
      return map([](C x) { return std::exp(x); });
    case HloOpcode::kExpm1:
      return map([](C x) { return Expm1(x); });
    case HloOpcode::kLog:
      return map([](C x) { return std::log(x); });
    case HloOpcode::kLog1p:
      return map([](C x) { return Log1p(x); });
    case HloOpcode::kSqrt:
      return map([](C x) { return std::sqrt(x); });
    case HloOpcode::kRsqrt:
      return map([](C x) { return C{1} / std::sqrt(x); });
    case HloOpcode::kLogistic:
      return map([](C x) { return C{1} / (C{1} + std::exp(-x)); });
    case HloOpcode::kTanh:
      return map([](C x) { return std::tanh(x); });
    case HloOpcode::kSin:
      return map([](C x) { return std::sin(x); });
    case HloOpcode::kCos:
      return map([](C x) { return std::cos(x); });
    case HloOpcode::kTan:
      return map([](C x) { return std::tan(x); });
    case HloOpcode::kAsin:
      return map([](C x) { return std::asin(x); });
    case HloOpcode::kAcos:
      return map([](C x) { return std::acos(x); });
    case HloOpcode::kAsinh:
      return map([](C x) { return std::asinh(x); });
    case HloOpcode::kAcosh:
      return map([](C x) { return std::acosh(x); });
    case HloOpcode::kAtanh:
      return map([](C x) { return std::atanh(x); });
    case HloOpcode::kSinh:
      return map([](C x) { return std::sinh(x); });
    case HloOpcode::kCosh:
      return map([](C x) { return std::cosh(x); });
    default:
      return UnsupportedOp(opcode, in.element_type());
  }
}

template <typename C>
Status BinaryLoop(HloOpcode opcode, const Literal& lhs, const Literal& rhs, Literal& out) {
  auto map = [&](auto fn) -> Status {
    MapElements<C, C>(lhs, rhs, out, fn);
    return OkStatus();
  };
  switch (opcode) {
    case HloOpcode::kAdd:
      return map([](C a, C b) { return a + b; });
    case HloOpcode::kSubtract:
      return map([](C a, C b) { return a - b; });
    case HloOpcode::kMultiply:
      return map([](C a, C b) { return a * b; });
    case HloOpcode::kDivide:
      return map([](C a, C b) { return a / b; });
    case HloOpcode::kPower:
      return map([](C a, C b) { return Power(a, b); });
    case HloOpcode::kAtan2:
      return map([](C a, C b) { return Atan2(a, b); });
    default:
      return UnsupportedOp(opcode, lhs.element_type());
  }
}

// complex(re, im) from two f32 or f64 operands.
template <typename R>
Status MakeComplex(const Literal& re, const Literal& im, Literal& out) {
  MapElements<R, std::complex<R>>(re, im, out, [](R a, R b) { return std::complex<R>(a, b); });
  return OkStatus();
}

}  // namespace

Status EvaluateComplexUnary(HloOpcode opcode, const Literal& operand, Literal& out) {
  if (operand.element_type() == PrimitiveType::kC64) {
    return UnaryLoop<std::complex<float>>(opcode, operand, out);
  }
  return UnaryLoop<std::complex<double>>(opcode, operand, out);
}

Status EvaluateComplexBinary(HloOpcode opcode, const Literal& lhs, const Literal& rhs,
                             Literal& out) {
  switch (lhs.element_type()) {
    case PrimitiveType::kC64:
      return BinaryLoop<std::complex<float>>(opcode, lhs, rhs, out);
    case PrimitiveType::kC128:
      return BinaryLoop<std::complex<double>>(opcode, lhs, rhs, out);
    case PrimitiveType::kF32:
      if (opcode == HloOpcode::kComplex) return MakeComplex<float>(lhs, rhs, out);
      break;
    case PrimitiveType::kF64:
      if (opcode == HloOpcode::kComplex) return MakeComplex<double>(lhs, rhs, out);
      break;
    default:
      break;
  }
  return UnsupportedOp(opcode, lhs.element_type());
}

}  // namespace tilesmith::hlo::eval
