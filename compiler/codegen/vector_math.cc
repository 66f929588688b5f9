#include "compiler/codegen/vector_math.h"

#include <llvm/IR/Intrinsics.h>

#include <vector>

namespace tilesmith::codegen {
namespace {

llvm::Value* F(llvm::IRBuilderBase& b, double value) {
  return llvm::ConstantFP::get(b.getFloatTy(), value);
}

// sum(coefficients[i] * x^i) by Estrin's scheme: pairs c[2i] + c[2i+1] x, then the same
// over x^2, so the dependency chain is log2(n) multiply-adds deep instead of Horner's n.
// On the host these chains, not the FP units, bound GELU's throughput. fmuladd lets FMA
// targets fuse each step, which only improves the rounding.
llvm::Value* Estrin(llvm::IRBuilderBase& b, llvm::Value* x, std::vector<llvm::Value*> terms) {
  while (terms.size() > 1) {
    std::vector<llvm::Value*> pairs;
    for (size_t i = 0; i + 1 < terms.size(); i += 2) {
      pairs.push_back(
          b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()}, {terms[i + 1], x, terms[i]}));
    }
    if (terms.size() % 2 == 1) pairs.push_back(terms.back());
    terms = std::move(pairs);
    if (terms.size() > 1) x = b.CreateFMul(x, x);
  }
  return terms.front();
}

llvm::Value* Polynomial(llvm::IRBuilderBase& b, llvm::Value* x,
                        std::initializer_list<double> coefficients) {
  std::vector<llvm::Value*> terms;
  for (double c : coefficients) terms.push_back(llvm::ConstantFP::get(x->getType(), c));
  return Estrin(b, x, std::move(terms));
}

}  // namespace

llvm::Value* EmitVectorExpF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // Beyond these exp(x) is inf or 0 in f32; clamping first keeps 2^k representable.
  constexpr double kOverflow = 88.72283935546875;     // just above ln(FLT_MAX)
  constexpr double kUnderflow = -103.97208404541016;  // below ln(smallest subnormal / 2)
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOGT(x, F(b, kOverflow)), F(b, kOverflow), x);
  clamped = b.CreateSelect(b.CreateFCmpOLT(clamped, F(b, kUnderflow)), F(b, kUnderflow), clamped);
  // x = k ln2 + r, |r| <= ln2 / 2, with ln2 split so that k * ln2_high is exact.
  llvm::Value* k = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint,
                                          b.CreateFMul(clamped, F(b, 1.4426950408889634)));
  llvm::Value* r = b.CreateFSub(clamped, b.CreateFMul(k, F(b, 0.693145751953125)));
  r = b.CreateFSub(r, b.CreateFMul(k, F(b, 1.428606765330187e-06)));
  // exp(r) by its Taylor series: the error of the degree-7 truncation is below 2^-30.
  llvm::Value* p =
      Polynomial(b, r, {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040});
  // Scale by 2^k in two steps so that subnormal results and k = 128 stay exact.
  llvm::Value* ki = b.CreateFPToSI(k, b.getInt32Ty());
  llvm::Value* half = b.CreateAShr(ki, 1);
  auto power_of_two = [&](llvm::Value* e) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, b.getInt32(127)), 23), b.getFloatTy());
  };
  llvm::Value* result =
      b.CreateFMul(b.CreateFMul(p, power_of_two(half)), power_of_two(b.CreateSub(ki, half)));
  result = b.CreateSelect(b.CreateFCmpOGT(x, F(b, kOverflow)),
                          llvm::ConstantFP::getInfinity(b.getFloatTy()), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, F(b, kUnderflow)), F(b, 0.0), result);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* EmitVectorTanhF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // XLA's f32 tanh on CPU and GPU: a rational minimax approximation (odd degree-13
  // numerator over even degree-6 denominator) on [-7.905, 7.905], where f32 tanh reaches
  // +-1, and x itself below 0.0004 where tanh(x) rounds to x. One division and a dozen
  // multiply-adds, against an exp and a series for the textbook form: GELU is bound by
  // this function on the host.
  constexpr double kClamp = 7.90531110763549805;
  llvm::Value* magnitude = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* clamped = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::maxnum, b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, F(b, kClamp)),
      F(b, -kClamp));
  llvm::Value* x2 = b.CreateFMul(clamped, clamped);
  llvm::Value* numerator = b.CreateFMul(
      clamped, Polynomial(b, x2,
                          {4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05,
                           5.12229709037114e-08, -8.60467152213735e-11, 2.00018790482477e-13,
                           -2.76076847742355e-16}));
  llvm::Value* denominator = Polynomial(
      b, x2,
      {4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06});
  llvm::Value* result = b.CreateFDiv(numerator, denominator);
  // Below the threshold x is the answer (and keeps -0's sign); NaN and inf compare
  // neither way, minnum/maxnum already clamp inf, and NaN must stay NaN.
  result = b.CreateSelect(b.CreateFCmpOLT(magnitude, F(b, 0.0004)), x, result);
  // Beyond the clamp the fit ends a few ulp short of 1; tanh(inf) must be exactly 1.
  result = b.CreateSelect(b.CreateFCmpOGT(magnitude, F(b, kClamp)),
                          b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, F(b, 1.0), x), result);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* EmitVectorLogF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* i32 = b.getInt32Ty();
  // Subnormals first become normal (x 2^23), so the exponent field is the whole exponent.
  llvm::Value* subnormal = b.CreateFCmpOLT(x, F(b, 1.1754943508222875e-38));
  llvm::Value* scaled = b.CreateSelect(subnormal, b.CreateFMul(x, F(b, 8388608.0)), x);
  llvm::Value* bits = b.CreateBitCast(scaled, i32);
  llvm::Value* exponent = b.CreateSub(b.CreateLShr(bits, 23), b.getInt32(127));
  exponent = b.CreateSelect(subnormal, b.CreateSub(exponent, b.getInt32(23)), exponent);
  llvm::Value* mantissa =
      b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, b.getInt32(0x007FFFFF)), b.getInt32(0x3F800000)),
                      b.getFloatTy());
  // m in [sqrt(1/2), sqrt(2)), so that f = m - 1 is small on both sides of 1.
  llvm::Value* high = b.CreateFCmpOGT(mantissa, F(b, 1.4142135623730951));
  mantissa = b.CreateSelect(high, b.CreateFMul(mantissa, F(b, 0.5)), mantissa);
  exponent = b.CreateSelect(high, b.CreateAdd(exponent, b.getInt32(1)), exponent);
  llvm::Value* e = b.CreateSIToFP(exponent, b.getFloatTy());
  llvm::Value* f = b.CreateFSub(mantissa, F(b, 1.0));
  llvm::Value* f2 = b.CreateFMul(f, f);
  // log(1 + f) = f - f^2/2 + f^3 P(f): Cephes' minimax P on [sqrt(1/2) - 1, sqrt(2) - 1],
  // and ln 2 split in two so that e * ln2_high is exact.
  llvm::Value* tail = b.CreateFMul(
      b.CreateFMul(f, f2), Polynomial(b, f,
                                      {3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1,
                                       -1.6668057665e-1, 1.4249322787e-1, -1.2420140846e-1,
                                       1.1676998740e-1, -1.1514610310e-1, 7.0376836292e-2}));
  tail = b.CreateFAdd(tail, b.CreateFMul(e, F(b, -2.12194440e-4)));
  tail = b.CreateFSub(tail, b.CreateFMul(f2, F(b, 0.5)));
  llvm::Value* result = b.CreateFAdd(b.CreateFAdd(f, tail), b.CreateFMul(e, F(b, 0.693359375)));
  llvm::Type* type = b.getFloatTy();
  result = b.CreateSelect(b.CreateFCmpOEQ(x, F(b, 0.0)), llvm::ConstantFP::getInfinity(type, true),
                          result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, F(b, 0.0)), llvm::ConstantFP::getNaN(type), result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(type)), x, result);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* EmitVectorLog1pF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // Goldberg's identity: with u = 1 + x rounded, log1p(x) = log(u) * x / (u - 1); the
  // ratio corrects the rounding of u, so the error is log's plus a couple of ulp.
  llvm::Value* u = b.CreateFAdd(x, F(b, 1.0));
  llvm::Value* d = b.CreateFSub(u, F(b, 1.0));
  llvm::Value* result = b.CreateFMul(EmitVectorLogF32(b, u), b.CreateFDiv(x, d));
  result = b.CreateSelect(b.CreateFCmpOEQ(d, F(b, 0.0)), x, result);
  // x = +inf: inf / inf would be NaN.
  return b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(b.getFloatTy())), x,
                        result);
}

llvm::Value* EmitVectorExpm1F32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // Near 0, exp(x) - 1 cancels: there its Taylor series, x (1 + x (1/2! + x/3! + …)), whose
  // truncation after x^11/11! is below 2^-25 of the result for |x| < 1. Beyond, exp(x) - 1
  // loses at most a factor e/(e-1) of exp's accuracy.
  llvm::Value* series = b.CreateFMul(
      x,
      b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()},
                        {x,
                         Polynomial(b, x,
                                    {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                                     1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800}),
                         F(b, 1.0)}));
  llvm::Value* large = b.CreateFSub(EmitVectorExpF32(b, x), F(b, 1.0));
  llvm::Value* small = b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), F(b, 1.0));
  return b.CreateSelect(small, series, large);
}

llvm::Value* EmitVectorErfF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // Eigen's and XLA's rational approximation, x p(x^2) / q(x^2) on [-4, 4] (beyond, erf
  // rounds to +-1 in f32): about 1 ulp in exact arithmetic, 6 in f32, as XLA has it.
  llvm::Value* clamped = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::maxnum, b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, F(b, 4.0)),
      F(b, -4.0));
  llvm::Value* x2 = b.CreateFMul(clamped, clamped);
  llvm::Value* numerator = Polynomial(
      b, x2,
      {-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04, -5.69250639462346e-05,
       -2.10102402082508e-06, 2.77068142495902e-08, -2.72614225801306e-10});
  llvm::Value* denominator =
      Polynomial(b, x2,
                 {-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03,
                  -2.13374055278905e-04, -1.45660718464996e-05});
  // x times the ratio, not the ratio of x p: x p would go subnormal for tiny x.
  llvm::Value* result = b.CreateFMul(clamped, b.CreateFDiv(numerator, denominator));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* EmitVectorAtan2F32(llvm::IRBuilderBase& b, llvm::Value* y, llvm::Value* x) {
  llvm::Type* type = b.getFloatTy();
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* ay = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y);
  // atan of t = min/max in [0, 1], then the octant and the quadrant put back. Both zero:
  // t = 0; both infinite: t = 1 (pi/4 and 3pi/4, as C's atan2 has them).
  llvm::Value* low = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, ax, ay);
  llvm::Value* high = b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, ax, ay);
  llvm::Value* t = b.CreateFDiv(low, high);
  t = b.CreateSelect(b.CreateFCmpOEQ(high, F(b, 0.0)), F(b, 0.0), t);
  t = b.CreateSelect(b.CreateFCmpOEQ(low, llvm::ConstantFP::getInfinity(type)), F(b, 1.0), t);
  // Above tan(pi/8), atan(t) = pi/4 + atan((t - 1) / (t + 1)), so that the odd polynomial
  // (Cephes' atanf, about 1 ulp) only meets |t| <= tan(pi/8).
  llvm::Value* reduce = b.CreateFCmpOGT(t, F(b, 0.41421356237309503));
  llvm::Value* u = b.CreateSelect(
      reduce, b.CreateFDiv(b.CreateFSub(t, F(b, 1.0)), b.CreateFAdd(t, F(b, 1.0))), t);
  llvm::Value* u2 = b.CreateFMul(u, u);
  llvm::Value* angle = b.CreateIntrinsic(
      llvm::Intrinsic::fmuladd, {type},
      {b.CreateFMul(u, u2),
       Polynomial(b, u2,
                  {-3.33329491539e-1, 1.99777106478e-1, -1.38776856032e-1, 8.05374449538e-2}),
       u});
  angle = b.CreateSelect(reduce, b.CreateFAdd(angle, F(b, 0.78539816339744831)), angle);
  angle =
      b.CreateSelect(b.CreateFCmpOGT(ay, ax), b.CreateFSub(F(b, 1.5707963267948966), angle), angle);
  llvm::Value* x_negative = b.CreateICmpSLT(b.CreateBitCast(x, b.getInt32Ty()), b.getInt32(0));
  angle = b.CreateSelect(x_negative, b.CreateFSub(F(b, 3.1415926535897931), angle), angle);
  llvm::Value* result = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, angle, y);
  return b.CreateSelect(b.CreateFCmpUNO(x, y), b.CreateFAdd(x, y), result);
}

llvm::Value* EmitVectorPowF32(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y) {
  // y log|x| in f64, then exp of it in f64 rounded once to f32: an f32 log's error would be
  // multiplied by |y log x| (up to ~100) in the result. A 2^-40 log and exp leave the
  // double-rounded result within 1 ulp.
  llvm::Type* f64 = b.getDoubleTy();
  llvm::Type* i64 = b.getInt64Ty();
  auto D = [&](double v) { return llvm::ConstantFP::get(f64, v); };
  llvm::Value* xd = b.CreateFPExt(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), f64);
  llvm::Value* yd = b.CreateFPExt(y, f64);
  // log|x|: x is an f32, so normal in f64; m in [sqrt(1/2), sqrt(2)) and
  // log(m) = 2 atanh(s), s = (m - 1)/(m + 1), |s| <= 0.172: 9 odd terms reach 2^-45.
  llvm::Value* bits = b.CreateBitCast(xd, i64);
  llvm::Value* exponent = b.CreateSub(b.CreateLShr(bits, 52), b.getInt64(1023));
  llvm::Value* mantissa = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, b.getInt64(0x000FFFFFFFFFFFFF)), b.getInt64(0x3FF0000000000000)),
      f64);
  llvm::Value* high = b.CreateFCmpOGT(mantissa, D(1.4142135623730951));
  mantissa = b.CreateSelect(high, b.CreateFMul(mantissa, D(0.5)), mantissa);
  exponent = b.CreateSelect(high, b.CreateAdd(exponent, b.getInt64(1)), exponent);
  llvm::Value* s = b.CreateFDiv(b.CreateFSub(mantissa, D(1.0)), b.CreateFAdd(mantissa, D(1.0)));
  llvm::Value* s2 = b.CreateFMul(s, s);
  llvm::Value* log_m =
      b.CreateFMul(b.CreateFMul(s, D(2.0)), Polynomial(b, s2,
                                                       {1.0, 1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9,
                                                        1.0 / 11, 1.0 / 13, 1.0 / 15, 1.0 / 17}));
  llvm::Value* log_x =
      b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f64},
                        {b.CreateSIToFP(exponent, f64), D(0.69314718055994531), log_m});
  log_x =
      b.CreateSelect(b.CreateFCmpOEQ(xd, D(0.0)), llvm::ConstantFP::getInfinity(f64, true), log_x);
  log_x = b.CreateSelect(b.CreateFCmpOEQ(xd, llvm::ConstantFP::getInfinity(f64)), xd, log_x);
  // exp(t): clamped where the f32 result is already inf or 0, t = k ln2 + r, |r| <= ln2/2,
  // Taylor to r^12 (below 2^-45), 2^k by the exponent field (k within f64's range here).
  llvm::Value* t = b.CreateFMul(yd, log_x);
  llvm::Value* clamped = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::maxnum, b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, t, D(200.0)),
      D(-200.0));
  llvm::Value* k =
      b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(clamped, D(1.4426950408889634)));
  llvm::Value* r =
      b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f64}, {k, D(-0.69314718055994531), clamped});
  r = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f64}, {k, D(-2.3190468138462996e-17), r});
  llvm::Value* exp_r =
      Polynomial(b, r,
                 {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                  1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600});
  llvm::Value* scale =
      b.CreateBitCast(b.CreateShl(b.CreateAdd(b.CreateFPToSI(k, i64), b.getInt64(1023)), 52), f64);
  llvm::Value* magnitude = b.CreateFMul(exp_r, scale);
  magnitude =
      b.CreateSelect(b.CreateFCmpOGT(t, D(200.0)), llvm::ConstantFP::getInfinity(f64), magnitude);
  magnitude = b.CreateSelect(b.CreateFCmpOLT(t, D(-200.0)), D(0.0), magnitude);
  llvm::Value* result = b.CreateFPTrunc(magnitude, b.getFloatTy());
  // The sign and C's special cases: a negative base needs an integral exponent (an odd one
  // keeps the sign), unless it is infinite; x^0 = 1 and 1^y = 1 even for NaN; (-1)^+-inf = 1.
  llvm::Value* integral = b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, yd), yd);
  llvm::Value* half = b.CreateFMul(yd, D(0.5));
  llvm::Value* odd = b.CreateAnd(
      integral, b.CreateFCmpONE(b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, half), half));
  llvm::Value* x_negative = b.CreateICmpSLT(b.CreateBitCast(x, b.getInt32Ty()), b.getInt32(0));
  result = b.CreateSelect(b.CreateAnd(x_negative, odd), b.CreateFNeg(result), result);
  llvm::Type* type = b.getFloatTy();
  llvm::Value* finite_negative = b.CreateAnd(
      b.CreateFCmpOLT(x, F(b, 0.0)), b.CreateFCmpONE(x, llvm::ConstantFP::getInfinity(type, true)));
  result = b.CreateSelect(b.CreateAnd(finite_negative, b.CreateNot(integral)),
                          llvm::ConstantFP::getNaN(type), result);
  result = b.CreateSelect(b.CreateFCmpUNO(x, y), llvm::ConstantFP::getNaN(type), result);
  llvm::Value* y_infinite = b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y),
                                            llvm::ConstantFP::getInfinity(type));
  llvm::Value* one =
      b.CreateOr(b.CreateFCmpOEQ(y, F(b, 0.0)),
                 b.CreateOr(b.CreateFCmpOEQ(x, F(b, 1.0)),
                            b.CreateAnd(b.CreateFCmpOEQ(x, F(b, -1.0)), y_infinite)));
  return b.CreateSelect(one, F(b, 1.0), result);
}

llvm::Value* EmitVectorMath(llvm::IRBuilderBase& b, std::string_view name, llvm::Value* x,
                            llvm::Value* y) {
  if (!x->getType()->isFloatTy()) return nullptr;
  if (y != nullptr) {
    if (name == "atan2") return EmitVectorAtan2F32(b, x, y);
    if (name == "pow") return EmitVectorPowF32(b, x, y);
    return nullptr;
  }
  if (name == "exp") return EmitVectorExpF32(b, x);
  if (name == "tanh") return EmitVectorTanhF32(b, x);
  if (name == "log") return EmitVectorLogF32(b, x);
  if (name == "log1p") return EmitVectorLog1pF32(b, x);
  if (name == "expm1") return EmitVectorExpm1F32(b, x);
  if (name == "erf") return EmitVectorErfF32(b, x);
  return nullptr;
}

}  // namespace tilesmith::codegen
