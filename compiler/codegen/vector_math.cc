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
  for (double c : coefficients) terms.push_back(F(b, c));
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

llvm::Value* EmitVectorMath(llvm::IRBuilderBase& b, std::string_view name, llvm::Value* x) {
  if (!x->getType()->isFloatTy()) return nullptr;
  if (name == "exp") return EmitVectorExpF32(b, x);
  if (name == "tanh") return EmitVectorTanhF32(b, x);
  return nullptr;
}

}  // namespace tilesmith::codegen
