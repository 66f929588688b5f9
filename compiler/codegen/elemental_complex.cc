// Elementwise ops on c64 and c128 with hlo::Evaluate's semantics. The evaluator computes
// in std::complex of the part type, which GCC lowers to C99 Annex G arithmetic (a plain
// product with the runtime's `__mulsc3` when both of its parts are NaN; division always
// through `__divsc3`) and the C library's complex functions (cexpf, cpowf, …). Where the
// target offers that library (TargetHooks::CallComplexFunction) the same functions are
// called; elsewhere the textbook formulas stand in. The evaluator's own formulas (expm1,
// log1p, power's special cases, atan2, sign, rsqrt, logistic) are spelled out here in the
// same operation order, so that signed zeros, infinities and NaNs come out the same.
#include <llvm/IR/Intrinsics.h>

#include <numbers>

#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/loop_builder.h"

namespace tilesmith::codegen {
namespace {

using hlo::HloOpcode;
using hlo::PrimitiveType;
using llvm::Value;

// Complex arithmetic on {re, im} structs of one complex type.
class ComplexMath {
 public:
  ComplexMath(ElementalEmitter& emitter, PrimitiveType type)
      : emitter_(emitter),
        b_(emitter.builder()),
        type_(type),
        part_(ComputeType(b_.getContext(), hlo::ComplexComponentType(type))) {}

  Value* Make(Value* re, Value* im) { return MakeComplex(b_, re, im); }
  Value* Re(Value* z) { return b_.CreateExtractValue(z, 0); }
  Value* Im(Value* z) { return b_.CreateExtractValue(z, 1); }
  Value* Scalar(double value) { return llvm::ConstantFP::get(part_, value); }
  Value* Constant(double re, double im) { return Make(Scalar(re), Scalar(im)); }
  // A real libm function on parts.
  Value* Real(std::string_view name, Value* x, Value* y = nullptr) {
    return CallMath(emitter_, name, x, y);
  }

  Value* Add(Value* x, Value* y) {
    return Make(b_.CreateFAdd(Re(x), Re(y)), b_.CreateFAdd(Im(x), Im(y)));
  }
  Value* Sub(Value* x, Value* y) {
    return Make(b_.CreateFSub(Re(x), Re(y)), b_.CreateFSub(Im(x), Im(y)));
  }
  Value* Neg(Value* x) { return Make(b_.CreateFNeg(Re(x)), b_.CreateFNeg(Im(x))); }
  // x / r for a real r: part by part, as C divides a complex by a real.
  Value* DivReal(Value* x, Value* r) {
    return Make(b_.CreateFDiv(Re(x), r), b_.CreateFDiv(Im(x), r));
  }
  Value* Abs(Value* x) { return Real("hypot", Re(x), Im(x)); }
  Value* Equals(Value* x, double re, double im) {
    return b_.CreateAnd(b_.CreateFCmpOEQ(Re(x), Scalar(re)), b_.CreateFCmpOEQ(Im(x), Scalar(im)));
  }

  Value* Mul(Value* x, Value* y) {
    Value *a = Re(x), *c = Re(y), *bb = Im(x), *d = Im(y);
    Value* re = b_.CreateFSub(b_.CreateFMul(a, c), b_.CreateFMul(bb, d));
    Value* im = b_.CreateFAdd(b_.CreateFMul(a, d), b_.CreateFMul(bb, c));
    Value* plain = Make(re, im);
    // Annex G recovers infinities hidden behind NaN parts; that is rare, so it branches.
    Value* both_nan = b_.CreateAnd(b_.CreateFCmpUNO(re, re), b_.CreateFCmpUNO(im, im));
    auto recovered = EmitIfElse(
        b_, both_nan,
        [&]() -> Expected<Value*> {
          Value* value = Library("mul", {x, y});
          return value != nullptr ? value : plain;
        },
        [&]() -> Expected<Value*> { return plain; });
    return *recovered;  // the arms cannot fail
  }

  Value* Div(Value* x, Value* y) {
    if (Value* value = Library("div", {x, y})) return value;
    // Smith's algorithm: scale by the larger part of the divisor.
    Value *a = Re(x), *bb = Im(x), *c = Re(y), *d = Im(y);
    Value* c_larger = b_.CreateFCmpOGE(Fabs(c), Fabs(d));
    Value* r1 = b_.CreateFDiv(d, c);
    Value* den1 = b_.CreateFAdd(c, b_.CreateFMul(d, r1));
    Value* re1 = b_.CreateFDiv(b_.CreateFAdd(a, b_.CreateFMul(bb, r1)), den1);
    Value* im1 = b_.CreateFDiv(b_.CreateFSub(bb, b_.CreateFMul(a, r1)), den1);
    Value* r2 = b_.CreateFDiv(c, d);
    Value* den2 = b_.CreateFAdd(b_.CreateFMul(c, r2), d);
    Value* re2 = b_.CreateFDiv(b_.CreateFAdd(b_.CreateFMul(a, r2), bb), den2);
    Value* im2 = b_.CreateFDiv(b_.CreateFSub(b_.CreateFMul(bb, r2), a), den2);
    return Make(b_.CreateSelect(c_larger, re1, re2), b_.CreateSelect(c_larger, im1, im2));
  }

  // The C library's complex function `name`, or the formula that stands in for it.
  Value* Function(std::string_view name, Value* x, Value* y = nullptr) {
    std::vector<Value*> arguments = {x};
    if (y != nullptr) arguments.push_back(y);
    if (Value* value = Library(name, arguments)) return value;
    return Formula(name, x, y);
  }

 private:
  Value* Fabs(Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }

  Value* Library(std::string_view name, std::vector<Value*> arguments) {
    return emitter_.hooks().CallComplexFunction(b_, name, type_, arguments);
  }

  Value* Exp(Value* x) {
    Value* scale = Real("exp", Re(x));
    return Make(b_.CreateFMul(scale, Real("cos", Im(x))), b_.CreateFMul(scale, Real("sin", Im(x))));
  }
  Value* Log(Value* x) { return Make(Real("log", Abs(x)), Real("atan2", Im(x), Re(x))); }
  Value* Sqrt(Value* x) {
    // t = sqrt((|a| + |z|) / 2); a >= 0: (t, b / 2t); a < 0: (|b| / 2t, copysign(t, b)).
    Value *a = Re(x), *bb = Im(x);
    Value* t = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt,
                                       b_.CreateFMul(b_.CreateFAdd(Fabs(a), Abs(x)), Scalar(0.5)));
    Value* two_t = b_.CreateFAdd(t, t);
    Value* nonnegative = b_.CreateFCmpOGE(a, Scalar(0));
    Value* re = b_.CreateSelect(nonnegative, t, b_.CreateFDiv(Fabs(bb), two_t));
    Value* im = b_.CreateSelect(nonnegative, b_.CreateFDiv(bb, two_t),
                                b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, t, bb));
    Value* zero = Equals(x, 0, 0);
    return Make(b_.CreateSelect(zero, Scalar(0), re), b_.CreateSelect(zero, bb, im));
  }
  // sin, cos, sinh and cosh from real parts: f(a + bi) = g(a) h(b) ± i g'(a) h'(b).
  Value* Trig(std::string_view g, std::string_view h, std::string_view g2, std::string_view h2,
              bool negate_im, Value* x) {
    Value* re = b_.CreateFMul(Real(g, Re(x)), Real(h, Im(x)));
    Value* im = b_.CreateFMul(Real(g2, Re(x)), Real(h2, Im(x)));
    return Make(re, negate_im ? b_.CreateFNeg(im) : im);
  }
  Value* I() { return Constant(0, 1); }

  Value* Formula(std::string_view name, Value* x, Value* y) {
    Value* one = Constant(1, 0);
    if (name == "exp") return Exp(x);
    if (name == "log") return Log(x);
    if (name == "sqrt") return Sqrt(x);
    if (name == "pow") return Exp(Mul(y, Log(x)));
    if (name == "sin") return Trig("sin", "cosh", "cos", "sinh", false, x);
    if (name == "cos") return Trig("cos", "cosh", "sin", "sinh", true, x);
    if (name == "sinh") return Trig("sinh", "cos", "cosh", "sin", false, x);
    if (name == "cosh") return Trig("cosh", "cos", "sinh", "sin", false, x);
    if (name == "tanh") return Div(Function("sinh", x), Function("cosh", x));
    if (name == "tan") return Div(Function("sin", x), Function("cos", x));
    // asin z = -i log(iz + sqrt(1 - z^2)); acos z = pi/2 - asin z.
    if (name == "asin" || name == "acos") {
      Value* root = Sqrt(Sub(one, Mul(x, x)));
      Value* asin = Mul(Neg(I()), Log(Add(Mul(I(), x), root)));
      return name == "asin" ? asin : Sub(Constant(std::numbers::pi / 2, 0), asin);
    }
    if (name == "asinh") return Log(Add(x, Sqrt(Add(Mul(x, x), one))));
    if (name == "acosh") return Log(Add(x, Mul(Sqrt(Add(x, one)), Sqrt(Sub(x, one)))));
    if (name == "atanh") {
      return DivReal(Sub(Log(Add(one, x)), Log(Sub(one, x))), Scalar(2));
    }
    return nullptr;
  }

  ElementalEmitter& emitter_;
  llvm::IRBuilder<>& b_;
  PrimitiveType type_;
  llvm::Type* part_;
};

// The evaluator's formulas for ops std::complex lacks or XLA defines specially.

// exp(a + bi) - 1 = expm1(a) cos(b) - 2 sin^2(b/2) + i exp(a) sin(b).
Value* Expm1(ComplexMath& m, llvm::IRBuilderBase& b, Value* x) {
  Value *a = m.Re(x), *bb = m.Im(x);
  Value* half_sine = m.Real("sin", b.CreateFDiv(bb, m.Scalar(2)));
  Value* re = b.CreateFSub(b.CreateFMul(m.Real("expm1", a), m.Real("cos", bb)),
                           b.CreateFMul(b.CreateFMul(m.Scalar(2), half_sine), half_sine));
  return m.Make(re, b.CreateFMul(m.Real("exp", a), m.Real("sin", bb)));
}

// log(1 + x); near 0, log|1 + x| = log1p(a(2 + a) + b^2) / 2 keeps small arguments exact.
Value* Log1p(ComplexMath& m, llvm::IRBuilderBase& b, Value* x) {
  Value *a = m.Re(x), *bb = m.Im(x);
  Value* one = m.Scalar(1);
  Value* far = m.Function("log", m.Add(m.Constant(1, 0), x));
  Value* sum = b.CreateFAdd(b.CreateFMul(a, b.CreateFAdd(m.Scalar(2), a)), b.CreateFMul(bb, bb));
  Value* near = m.Make(b.CreateFMul(m.Scalar(0.5), m.Real("log1p", sum)),
                       m.Real("atan2", bb, b.CreateFAdd(one, a)));
  Value* size = b.CreateFAdd(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a),
                             b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, bb));
  return b.CreateSelect(b.CreateFCmpOGE(size, m.Scalar(0.5)), far, near);
}

// XLA: 1^x = 1 and x^0 = 1; inf^(a + 0i) is inf for a > 0 and 0 for a < 0; else pow.
Value* Power(ComplexMath& m, llvm::IRBuilderBase& b, Value* base, Value* exponent) {
  Value* one = m.Constant(1, 0);
  Value* result = m.Function("pow", base, exponent);
  Value* base_is_inf =
      b.CreateAnd(b.CreateFCmpOEQ(m.Im(base), m.Scalar(0)),
                  b.CreateFCmpOEQ(m.Re(base), m.Scalar(std::numeric_limits<double>::infinity())));
  Value* real_exponent = b.CreateAnd(b.CreateFCmpOEQ(m.Im(exponent), m.Scalar(0)),
                                     b.CreateFCmpUNE(m.Re(exponent), m.Scalar(0)));
  Value* infinite =
      b.CreateSelect(b.CreateFCmpOGT(m.Re(exponent), m.Scalar(0)), base, m.Constant(0, 0));
  result = b.CreateSelect(b.CreateAnd(base_is_inf, real_exponent), infinite, result);
  Value* trivial = b.CreateOr(m.Equals(base, 1, 0), m.Equals(exponent, 0, 0));
  return b.CreateSelect(trivial, one, result);
}

// XLA: atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)).
Value* Atan2(ComplexMath& m, Value* y, Value* x) {
  Value* i = m.Constant(0, 1);
  Value* root = m.Function("sqrt", m.Add(m.Mul(x, x), m.Mul(y, y)));
  Value* log = m.Function("log", m.Div(m.Add(x, m.Mul(i, y)), root));
  return m.Mul(m.Neg(i), log);
}

}  // namespace

Value* EmitComplexMultiply(ElementalEmitter& emitter, PrimitiveType type, Value* x, Value* y) {
  ComplexMath math(emitter, type);
  return math.Mul(x, y);
}

Expected<ScalarValue> EmitComplexElementwise(ElementalEmitter& emitter,
                                             const hlo::HloInstruction& instruction,
                                             std::span<const ScalarValue> operands) {
  llvm::IRBuilder<>& b = emitter.builder();
  HloOpcode opcode = instruction.opcode();
  PrimitiveType result_type = instruction.shape().element_type();
  if (opcode == HloOpcode::kComplex) {
    return ScalarValue{MakeComplex(b, operands[0].value, operands[1].value), result_type};
  }
  PrimitiveType type = operands[0].type;
  ComplexMath m(emitter, type);
  Value* x = operands[0].value;
  Value* y = operands.size() > 1 ? operands[1].value : nullptr;
  Value* result = nullptr;
  switch (opcode) {
    case HloOpcode::kAbs:
      result = m.Abs(x);
      break;
    case HloOpcode::kReal:
      result = m.Re(x);
      break;
    case HloOpcode::kImag:
      result = m.Im(x);
      break;
    case HloOpcode::kNegate:
      result = m.Neg(x);
      break;
    case HloOpcode::kAdd:
      result = m.Add(x, y);
      break;
    case HloOpcode::kSubtract:
      result = m.Sub(x, y);
      break;
    case HloOpcode::kMultiply:
      result = m.Mul(x, y);
      break;
    case HloOpcode::kDivide:
      result = m.Div(x, y);
      break;
    case HloOpcode::kPower:
      result = Power(m, b, x, y);
      break;
    case HloOpcode::kAtan2:
      result = Atan2(m, x, y);
      break;
    case HloOpcode::kExpm1:
      result = Expm1(m, b, x);
      break;
    case HloOpcode::kLog1p:
      result = Log1p(m, b, x);
      break;
    case HloOpcode::kSign: {
      Value* magnitude = m.Abs(x);
      result = b.CreateSelect(b.CreateFCmpOEQ(magnitude, m.Scalar(0)), m.Constant(0, 0),
                              m.DivReal(x, magnitude));
      break;
    }
    case HloOpcode::kSqrt:
      result = m.Function("sqrt", x);
      break;
    case HloOpcode::kRsqrt:
      result = m.Div(m.Constant(1, 0), m.Function("sqrt", x));
      break;
    case HloOpcode::kLogistic:
      result = m.Div(m.Constant(1, 0), m.Add(m.Constant(1, 0), m.Function("exp", m.Neg(x))));
      break;
    case HloOpcode::kErf:
    case HloOpcode::kCbrt:
      break;  // real-only functions
    default:
      // The C library's complex functions have the real ones' names.
      if (const char* name = MathFunctionName(opcode)) result = m.Function(name, x);
      break;
  }
  if (result == nullptr) return UnsupportedOp(opcode, type);
  return ScalarValue{result, result_type};
}

}  // namespace tilesmith::codegen
