// Elementwise ops on scalars in LLVM IR, with hlo::Evaluate's semantics: the dispatcher,
// and arithmetic on real floats, integers and pred. Complex values, compare, convert and
// bitcast-convert have files of their own (elemental_internal.h lists them).
#include <llvm/IR/Intrinsics.h>

#include "compiler/codegen/elemental_internal.h"

namespace tilesmith::codegen {

std::unexpected<Error> UnsupportedOp(hlo::HloOpcode opcode, hlo::PrimitiveType type) {
  return Unimplemented("elemental code for '" + std::string(hlo::HloOpcodeName(opcode)) + "' on " +
                       std::string(hlo::PrimitiveTypeName(type)) + " is not implemented yet");
}

llvm::Value* CallMath(ElementalEmitter& emitter, std::string_view name, llvm::Value* x,
                      llvm::Value* y) {
  if (llvm::Value* inline_value = emitter.hooks().EmitMathInline(emitter.builder(), name, x, y)) {
    return inline_value;
  }
  llvm::FunctionCallee callee = emitter.hooks().MathFunction(emitter.module(), name, x->getType());
  if (y == nullptr) return emitter.builder().CreateCall(callee, {x});
  return emitter.builder().CreateCall(callee, {x, y});
}

const char* MathFunctionName(hlo::HloOpcode opcode) {
  using hlo::HloOpcode;
  switch (opcode) {
    case HloOpcode::kExp:
      return "exp";
    case HloOpcode::kExpm1:
      return "expm1";
    case HloOpcode::kLog:
      return "log";
    case HloOpcode::kLog1p:
      return "log1p";
    case HloOpcode::kTanh:
      return "tanh";
    case HloOpcode::kSin:
      return "sin";
    case HloOpcode::kCos:
      return "cos";
    case HloOpcode::kTan:
      return "tan";
    case HloOpcode::kErf:
      return "erf";
    case HloOpcode::kCbrt:
      return "cbrt";
    case HloOpcode::kAcos:
      return "acos";
    case HloOpcode::kAcosh:
      return "acosh";
    case HloOpcode::kAsin:
      return "asin";
    case HloOpcode::kAsinh:
      return "asinh";
    case HloOpcode::kAtanh:
      return "atanh";
    case HloOpcode::kCosh:
      return "cosh";
    case HloOpcode::kSinh:
      return "sinh";
    default:
      return nullptr;
  }
}

namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;

// Narrow floats are rounded to their type after every op.
llvm::Value* Finish(llvm::IRBuilderBase& b, llvm::Value* value, PrimitiveType type) {
  return hlo::IsNarrowFloat(type) ? RoundToNarrowFloat(b, value, type) : value;
}

llvm::Value* Intrinsic(llvm::IRBuilderBase& b, llvm::Intrinsic::ID id, llvm::Value* x) {
  return b.CreateUnaryIntrinsic(id, x);
}

Expected<llvm::Value*> FloatUnary(ElementalEmitter& emitter, HloOpcode opcode, llvm::Value* x) {
  llvm::IRBuilder<>& b = emitter.builder();
  llvm::Type* type = x->getType();
  switch (opcode) {
    case HloOpcode::kAbs:
      return Intrinsic(b, llvm::Intrinsic::fabs, x);
    case HloOpcode::kNegate:
      return b.CreateFNeg(x);
    case HloOpcode::kSign: {
      // ±0 and NaN are their own sign.
      llvm::Value* keep =
          b.CreateOr(b.CreateFCmpUNO(x, x), b.CreateFCmpOEQ(x, llvm::ConstantFP::get(type, 0.0)));
      llvm::Value* one =
          b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, llvm::ConstantFP::get(type, 1.0), x);
      return b.CreateSelect(keep, x, one);
    }
    case HloOpcode::kSqrt:
      return Intrinsic(b, llvm::Intrinsic::sqrt, x);
    case HloOpcode::kRsqrt:
      return b.CreateFDiv(llvm::ConstantFP::get(type, 1.0), Intrinsic(b, llvm::Intrinsic::sqrt, x));
    case HloOpcode::kFloor:
      return Intrinsic(b, llvm::Intrinsic::floor, x);
    case HloOpcode::kCeil:
      return Intrinsic(b, llvm::Intrinsic::ceil, x);
    case HloOpcode::kRoundNearestAfz:
      return Intrinsic(b, llvm::Intrinsic::round, x);
    case HloOpcode::kRoundNearestEven:
      return Intrinsic(b, llvm::Intrinsic::rint, x);
    case HloOpcode::kLogistic: {
      llvm::Value* one = llvm::ConstantFP::get(type, 1.0);
      return b.CreateFDiv(one, b.CreateFAdd(one, CallMath(emitter, "exp", b.CreateFNeg(x))));
    }
    default:
      if (const char* name = MathFunctionName(opcode)) return CallMath(emitter, name, x);
      return nullptr;
  }
}

// max/min that propagate NaN and order -0 below +0, like the evaluator. Spelled out with
// compares: llvm.maximum does not lower for every type on every target in LLVM 16.
llvm::Value* FloatMaxMin(llvm::IRBuilderBase& b, bool is_max, llvm::Value* x, llvm::Value* y) {
  llvm::Value* x_wins = is_max ? b.CreateFCmpOGT(x, y) : b.CreateFCmpOLT(x, y);
  llvm::Value* y_wins = is_max ? b.CreateFCmpOGT(y, x) : b.CreateFCmpOLT(y, x);
  // Equal values: only the signs of zeros differ; max prefers +0, min -0.
  llvm::Type* int_type = b.getIntNTy(x->getType()->getPrimitiveSizeInBits());
  llvm::Value* x_negative =
      b.CreateICmpSLT(b.CreateBitCast(x, int_type), llvm::ConstantInt::get(int_type, 0));
  llvm::Value* tie = is_max ? b.CreateSelect(x_negative, y, x) : b.CreateSelect(x_negative, x, y);
  llvm::Value* result = b.CreateSelect(x_wins, x, b.CreateSelect(y_wins, y, tie));
  result = b.CreateSelect(b.CreateFCmpUNO(y, y), y, result);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

Expected<llvm::Value*> FloatBinary(ElementalEmitter& emitter, HloOpcode opcode, llvm::Value* x,
                                   llvm::Value* y) {
  llvm::IRBuilder<>& b = emitter.builder();
  switch (opcode) {
    case HloOpcode::kAdd:
      return b.CreateFAdd(x, y);
    case HloOpcode::kSubtract:
      return b.CreateFSub(x, y);
    case HloOpcode::kMultiply:
      return b.CreateFMul(x, y);
    case HloOpcode::kDivide:
      return b.CreateFDiv(x, y);
    case HloOpcode::kRemainder:
      return b.CreateFRem(x, y);
    case HloOpcode::kMaximum:
      return FloatMaxMin(b, true, x, y);
    case HloOpcode::kMinimum:
      return FloatMaxMin(b, false, x, y);
    case HloOpcode::kPower:
      return CallMath(emitter, "pow", x, y);
    case HloOpcode::kAtan2:
      return CallMath(emitter, "atan2", x, y);
    default:
      return nullptr;
  }
}

// x^y by square-and-multiply over y's bits, wrapping; a negative exponent gives 1 for
// base 1 and 0 otherwise (XLA's rule, base -1 included).
llvm::Value* IntPower(llvm::IRBuilderBase& b, bool is_signed, llvm::Value* base,
                      llvm::Value* exponent) {
  llvm::Type* type = base->getType();
  unsigned width = type->getIntegerBitWidth();
  llvm::Value* one = llvm::ConstantInt::get(type, 1);
  llvm::Value* result = one;
  llvm::Value* factor = base;
  // Unrolled: one step per exponent bit, so no loop or branch is needed.
  for (unsigned bit = 0; bit < width; ++bit) {
    llvm::Value* set = b.CreateTrunc(b.CreateLShr(exponent, bit), b.getInt1Ty());
    result = b.CreateSelect(set, b.CreateMul(result, factor), result);
    factor = b.CreateMul(factor, factor);
  }
  if (!is_signed) return result;
  llvm::Value* negative = b.CreateICmpSLT(exponent, llvm::ConstantInt::get(type, 0));
  // No s1 value is +1 (its bit pattern 1 is -1).
  llvm::Value* base_is_one =
      width == 1 ? llvm::ConstantInt::get(type, 0) : b.CreateZExt(b.CreateICmpEQ(base, one), type);
  return b.CreateSelect(negative, base_is_one, result);
}

// Integer binary ops with XLA's rules for division by zero and overflowing shifts.
Expected<llvm::Value*> IntBinary(llvm::IRBuilderBase& b, HloOpcode opcode, bool is_signed,
                                 llvm::Value* x, llvm::Value* y) {
  llvm::Type* type = x->getType();
  unsigned width = type->getIntegerBitWidth();
  llvm::Value* zero = llvm::ConstantInt::get(type, 0);
  llvm::Value* all_ones = llvm::ConstantInt::getAllOnesValue(type);
  switch (opcode) {
    case HloOpcode::kAdd:
      return b.CreateAdd(x, y);
    case HloOpcode::kSubtract:
      return b.CreateSub(x, y);
    case HloOpcode::kMultiply:
      return b.CreateMul(x, y);
    case HloOpcode::kAnd:
      return b.CreateAnd(x, y);
    case HloOpcode::kOr:
      return b.CreateOr(x, y);
    case HloOpcode::kXor:
      return b.CreateXor(x, y);
    case HloOpcode::kMaximum:
      return b.CreateSelect(is_signed ? b.CreateICmpSGE(x, y) : b.CreateICmpUGE(x, y), x, y);
    case HloOpcode::kMinimum:
      return b.CreateSelect(is_signed ? b.CreateICmpSLE(x, y) : b.CreateICmpULE(x, y), x, y);
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder: {
      bool divide = opcode == HloOpcode::kDivide;
      llvm::Value* by_zero = b.CreateICmpEQ(y, zero);
      llvm::Value* overflow =
          is_signed
              ? b.CreateAnd(b.CreateICmpEQ(x, llvm::ConstantInt::get(
                                                  type, llvm::APInt::getSignedMinValue(width))),
                            b.CreateICmpEQ(y, all_ones))
              : b.getFalse();
      // Divide by a safe divisor, then patch the special cases: x/0 = -1, x%0 = x,
      // MIN/-1 = MIN, MIN%-1 = 0.
      llvm::Value* safe =
          b.CreateSelect(b.CreateOr(by_zero, overflow), llvm::ConstantInt::get(type, 1), y);
      llvm::Value* result = divide ? (is_signed ? b.CreateSDiv(x, safe) : b.CreateUDiv(x, safe))
                                   : (is_signed ? b.CreateSRem(x, safe) : b.CreateURem(x, safe));
      result = b.CreateSelect(overflow, divide ? x : zero, result);
      return b.CreateSelect(by_zero, divide ? all_ones : x, result);
    }
    case HloOpcode::kPower:
      return IntPower(b, is_signed, x, y);
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kShiftRightArithmetic: {
      llvm::Value* too_far = b.CreateICmpUGE(y, llvm::ConstantInt::get(type, width));
      llvm::Value* amount = b.CreateSelect(too_far, zero, y);
      if (opcode == HloOpcode::kShiftLeft) {
        return b.CreateSelect(too_far, zero, b.CreateShl(x, amount));
      }
      if (opcode == HloOpcode::kShiftRightLogical) {
        return b.CreateSelect(too_far, zero, b.CreateLShr(x, amount));
      }
      llvm::Value* sign_fill = b.CreateAShr(x, llvm::ConstantInt::get(type, width - 1));
      return b.CreateSelect(too_far, sign_fill, b.CreateAShr(x, amount));
    }
    default:
      return nullptr;
  }
}

// XLA's reduce-precision on the bits of x's type: round the mantissa to `mantissa_bits`
// (nearest even; a carry bumps the exponent), then send exponents outside the reduced
// range to signed infinity or zero. NaN stays NaN unless no mantissa bit is left, when it
// becomes +inf.
Expected<llvm::Value*> ReducePrecision(llvm::IRBuilderBase& b, llvm::Value* x,
                                       int64_t exponent_bits, int64_t mantissa_bits) {
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return InvalidArgument("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
  }
  llvm::Type* type = x->getType();
  bool is_double = type->isDoubleTy();
  int width = is_double ? 64 : 32;
  int mantissa = is_double ? 52 : 23;
  int exponent = width - mantissa - 1;
  llvm::IntegerType* int_type = b.getIntNTy(width);
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(int_type, v); };
  llvm::Value* bits = b.CreateBitCast(x, int_type);
  if (mantissa_bits < mantissa) {
    int dropped = mantissa - static_cast<int>(mantissa_bits);
    uint64_t last_kept = uint64_t{1} << dropped;
    llvm::Value* odd = b.CreateAnd(b.CreateLShr(bits, dropped), constant(1));
    llvm::Value* bias = b.CreateAdd(constant((last_kept >> 1) - 1), odd);
    bits = b.CreateAnd(b.CreateAdd(bits, bias), constant(~(last_kept - 1)));
  }
  if (exponent_bits < exponent) {
    uint64_t sign_mask = uint64_t{1} << (width - 1);
    uint64_t exponent_mask = ((uint64_t{1} << exponent) - 1) << mantissa;
    uint64_t bias = (uint64_t{1} << (exponent - 1)) - 1;
    uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    llvm::Value* biased = b.CreateAnd(bits, constant(exponent_mask));
    llvm::Value* sign = b.CreateAnd(bits, constant(sign_mask));
    llvm::Value* overflow = b.CreateICmpUGT(biased, constant((bias + reduced_bias) << mantissa));
    llvm::Value* underflow = b.CreateICmpULE(biased, constant((bias - reduced_bias) << mantissa));
    bits = b.CreateSelect(overflow, b.CreateOr(sign, constant(exponent_mask)),
                          b.CreateSelect(underflow, sign, bits));
  }
  llvm::Value* nan = mantissa_bits > 0 ? x : llvm::ConstantFP::getInfinity(type);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), nan, b.CreateBitCast(bits, type));
}

Expected<llvm::Value*> IntUnary(llvm::IRBuilderBase& b, HloOpcode opcode, bool is_signed,
                                llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Value* zero = llvm::ConstantInt::get(type, 0);
  switch (opcode) {
    case HloOpcode::kNegate:
      return b.CreateNeg(x);
    case HloOpcode::kAbs:
      return is_signed ? b.CreateSelect(b.CreateICmpSLT(x, zero), b.CreateNeg(x), x) : x;
    case HloOpcode::kNot:
      return b.CreateNot(x);
    case HloOpcode::kSign:
      if (!is_signed) return b.CreateZExt(b.CreateICmpNE(x, zero), type);
      return b.CreateSelect(b.CreateICmpSLT(x, zero), llvm::ConstantInt::getAllOnesValue(type),
                            b.CreateZExt(b.CreateICmpNE(x, zero), type));
    case HloOpcode::kPopulationCount:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
    case HloOpcode::kClz:
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, b.getFalse());
    default:
      return nullptr;
  }
}

}  // namespace

Expected<ScalarValue> ElementalEmitter::EmitElementwise(const HloInstruction& instruction,
                                                        std::span<const ScalarValue> operands) {
  llvm::IRBuilder<>& b = builder_;
  HloOpcode opcode = instruction.opcode();
  PrimitiveType result_type = instruction.shape().element_type();
  PrimitiveType operand_type = operands.empty() ? result_type : operands[0].type;
  switch (opcode) {
    case HloOpcode::kConvert:
      return EmitConvert(*this, operands[0], result_type);
    case HloOpcode::kCompare:
      return EmitCompare(*this, instruction, operands[0], operands[1]);
    case HloOpcode::kSelect:
      return ScalarValue{b.CreateSelect(operands[0].value, operands[1].value, operands[2].value),
                         result_type};
    case HloOpcode::kComplex:
      return EmitComplexElementwise(*this, instruction, operands);
    default:
      break;
  }
  if (hlo::IsComplex(operand_type)) return EmitComplexElementwise(*this, instruction, operands);
  if (opcode == HloOpcode::kReal) return operands[0];
  if (opcode == HloOpcode::kImag) return ConstantOfType(b, result_type, 0.0);
  if (opcode == HloOpcode::kClamp) {
    // clamp(lo, x, hi) = min(max(x, lo), hi)
    ScalarValue lo = operands[0], x = operands[1], hi = operands[2];
    if (hlo::IsFloatingPoint(result_type)) {
      return ScalarValue{FloatMaxMin(b, false, FloatMaxMin(b, true, x.value, lo.value), hi.value),
                         result_type};
    }
    bool is_signed = hlo::IsSignedIntegral(result_type);
    TS_ASSIGN_OR_RETURN(llvm::Value * lower,
                        IntBinary(b, HloOpcode::kMaximum, is_signed, x.value, lo.value));
    TS_ASSIGN_OR_RETURN(llvm::Value * clamped,
                        IntBinary(b, HloOpcode::kMinimum, is_signed, lower, hi.value));
    return ScalarValue{clamped, result_type};
  }
  if (hlo::IsFloatingPoint(operand_type)) {
    llvm::Value* x = operands[0].value;
    if (opcode == HloOpcode::kIsFinite) {
      llvm::Value* magnitude = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      return ScalarValue{b.CreateFCmpOLT(magnitude, llvm::ConstantFP::getInfinity(x->getType())),
                         PrimitiveType::kPred};
    }
    llvm::Value* result = nullptr;
    if (opcode == HloOpcode::kReducePrecision) {
      TS_ASSIGN_OR_RETURN(result, ReducePrecision(b, x, instruction.attributes().exponent_bits,
                                                  instruction.attributes().mantissa_bits));
    } else if (operands.size() == 1) {
      TS_ASSIGN_OR_RETURN(result, FloatUnary(*this, opcode, x));
    } else if (operands.size() == 2) {
      TS_ASSIGN_OR_RETURN(result, FloatBinary(*this, opcode, x, operands[1].value));
    }
    if (result == nullptr) return UnsupportedOp(opcode, operand_type);
    return ScalarValue{Finish(b, result, result_type), result_type};
  }
  if (hlo::IsIntegral(operand_type) || operand_type == PrimitiveType::kPred) {
    bool is_signed = hlo::IsSignedIntegral(operand_type);
    llvm::Value* result = nullptr;
    if (operands.size() == 1) {
      TS_ASSIGN_OR_RETURN(result, IntUnary(b, opcode, is_signed, operands[0].value));
    } else if (operands.size() == 2) {
      TS_ASSIGN_OR_RETURN(result,
                          IntBinary(b, opcode, is_signed, operands[0].value, operands[1].value));
    }
    if (result == nullptr) return UnsupportedOp(opcode, operand_type);
    return ScalarValue{result, result_type};
  }
  return UnsupportedOp(opcode, operand_type);
}

}  // namespace tilesmith::codegen
