// convert with hlo::Evaluate's semantics: every conversion rounds or saturates once. Floats
// to integers truncate toward zero, saturate, and send NaN to 0; anything to pred is
// `x != 0`; a real value becomes (x, 0) as a complex. Conversions to narrow floats from
// values f32 cannot hold exactly (f64, wide integers) go through f32 rounded to odd: with
// 24 bits against at most 11 in the target, the one later rounding to nearest even then
// gives the correctly rounded result, as the evaluator's direct f64 path does.
#include <llvm/IR/Intrinsics.h>

#include "compiler/codegen/elemental_internal.h"

namespace tilesmith::codegen {
namespace {

using hlo::PrimitiveType;

bool IsIntegerLike(PrimitiveType type) {
  return hlo::IsIntegral(type) || type == PrimitiveType::kPred;
}

// The f32 nearest `x` (f64) toward zero, with the lowest mantissa bit set when inexact.
llvm::Value* DoubleToFloatRoundedToOdd(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Value* nearest = b.CreateFPTrunc(x, b.getFloatTy());
  llvm::Value* back = b.CreateFPExt(nearest, b.getDoubleTy());
  llvm::Value* inexact = b.CreateFCmpONE(back, x);  // false for NaN and exact values
  llvm::Value* rounded_up = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                            b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
  // One step toward zero on the magnitude bits; an overflow to inf becomes the largest
  // finite value.
  llvm::Value* bits = b.CreateBitCast(nearest, b.getInt32Ty());
  llvm::Value* truncated = b.CreateSelect(rounded_up, b.CreateSub(bits, b.getInt32(1)), bits);
  llvm::Value* odd = b.CreateOr(truncated, b.getInt32(1));
  return b.CreateBitCast(b.CreateSelect(inexact, odd, bits), b.getFloatTy());
}

// An integer as f32 rounded to odd: the top 24 significant bits of its magnitude, the
// lowest of them set when any bit below is, converted exactly.
llvm::Value* IntegerToFloatRoundedToOdd(llvm::IRBuilderBase& b, llvm::Value* x, bool is_signed) {
  llvm::IntegerType* type = llvm::cast<llvm::IntegerType>(x->getType());
  unsigned width = type->getBitWidth();
  if (width <= 24)
    return is_signed ? b.CreateSIToFP(x, b.getFloatTy()) : b.CreateUIToFP(x, b.getFloatTy());
  llvm::Value* zero = llvm::ConstantInt::get(type, 0);
  llvm::Value* negative = is_signed ? b.CreateICmpSLT(x, zero) : b.getFalse();
  llvm::Value* magnitude = b.CreateSelect(negative, b.CreateNeg(x), x);
  llvm::Value* significant =
      b.CreateSub(llvm::ConstantInt::get(type, width),
                  b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, magnitude, b.getFalse()));
  llvm::Value* excess = b.CreateSub(significant, llvm::ConstantInt::get(type, 24));
  llvm::Value* shift = b.CreateSelect(b.CreateICmpSGT(excess, zero), excess, zero);
  llvm::Value* kept = b.CreateLShr(magnitude, shift);
  llvm::Value* dropped = b.CreateSub(magnitude, b.CreateShl(kept, shift));
  llvm::Value* sticky = b.CreateZExt(b.CreateICmpNE(dropped, zero), type);
  llvm::Value* odd = b.CreateShl(b.CreateOr(kept, sticky), shift);
  llvm::Value* value = b.CreateUIToFP(odd, b.getFloatTy());  // at most 24 bits: exact
  return b.CreateSelect(negative, b.CreateFNeg(value), value);
}

// A real float or integer to a real float type, rounding once.
llvm::Value* ToFloat(llvm::IRBuilderBase& b, ScalarValue value, PrimitiveType to) {
  llvm::Type* target = ComputeType(b.getContext(), to);
  PrimitiveType from = value.type;
  llvm::Value* x = value.value;
  if (IsIntegerLike(from)) {
    bool is_signed = hlo::IsSignedIntegral(from);
    if (!hlo::IsNarrowFloat(to)) {
      return is_signed ? b.CreateSIToFP(x, target) : b.CreateUIToFP(x, target);
    }
    return RoundToNarrowFloat(b, IntegerToFloatRoundedToOdd(b, x, is_signed), to);
  }
  if (!hlo::IsNarrowFloat(to)) {
    if (x->getType() == target) return x;
    return target->getPrimitiveSizeInBits() > x->getType()->getPrimitiveSizeInBits()
               ? b.CreateFPExt(x, target)
               : b.CreateFPTrunc(x, target);
  }
  if (x->getType()->isDoubleTy()) x = DoubleToFloatRoundedToOdd(b, x);
  return RoundToNarrowFloat(b, x, to);
}

}  // namespace

Expected<ScalarValue> EmitConvert(ElementalEmitter& emitter, ScalarValue value, PrimitiveType to) {
  llvm::IRBuilder<>& b = emitter.builder();
  PrimitiveType from = value.type;
  if (from == to) return value;
  llvm::Type* target = ComputeType(b.getContext(), to);
  llvm::Value* x = value.value;
  if (hlo::IsComplex(from)) {
    if (!hlo::IsComplex(to)) {
      return Unimplemented("convert from " + std::string(hlo::PrimitiveTypeName(from)) + " to " +
                           std::string(hlo::PrimitiveTypeName(to)) +
                           " would drop the imaginary part; use real or imag");
    }
    PrimitiveType part_from = hlo::ComplexComponentType(from);
    PrimitiveType part_to = hlo::ComplexComponentType(to);
    llvm::Value* re = ToFloat(b, {b.CreateExtractValue(x, 0), part_from}, part_to);
    llvm::Value* im = ToFloat(b, {b.CreateExtractValue(x, 1), part_from}, part_to);
    return ScalarValue{MakeComplex(b, re, im), to};
  }
  if (hlo::IsComplex(to)) {
    PrimitiveType part = hlo::ComplexComponentType(to);
    llvm::Value* re = ToFloat(b, value, part);
    return ScalarValue{MakeComplex(b, re, llvm::ConstantFP::get(re->getType(), 0.0)), to};
  }
  if (to == PrimitiveType::kPred) {
    llvm::Value* nonzero = hlo::IsFloatingPoint(from)
                               ? b.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                               : b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
    return ScalarValue{nonzero, to};
  }
  if (hlo::IsFloatingPoint(to)) return ScalarValue{ToFloat(b, value, to), to};
  if (!hlo::IsIntegral(to)) return UnsupportedOp(hlo::HloOpcode::kConvert, to);
  if (hlo::IsFloatingPoint(from)) {
    // Saturating, NaN -> 0: the llvm.fpto*i.sat intrinsics are exactly XLA's rule.
    llvm::Intrinsic::ID id =
        hlo::IsSignedIntegral(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return ScalarValue{b.CreateIntrinsic(id, {target, x->getType()}, {x}), to};
  }
  if (IsIntegerLike(from)) {
    return ScalarValue{hlo::IsSignedIntegral(from) ? b.CreateSExtOrTrunc(x, target)
                                                   : b.CreateZExtOrTrunc(x, target),
                       to};
  }
  return UnsupportedOp(hlo::HloOpcode::kConvert, from);
}

}  // namespace tilesmith::codegen
