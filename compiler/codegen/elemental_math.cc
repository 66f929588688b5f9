// Elementwise ops on scalars in LLVM IR, with hlo::Evaluate's semantics.
#include <llvm/IR/Intrinsics.h>

#include "compiler/codegen/elemental_internal.h"

namespace tilesmith::codegen {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;

std::unexpected<Error> UnsupportedOp(HloOpcode opcode, PrimitiveType type) {
  return Unimplemented("elemental code for '" + std::string(hlo::HloOpcodeName(opcode)) + "' on " +
                       std::string(hlo::PrimitiveTypeName(type)) + " is not implemented yet");
}

// Narrow floats are rounded to their type after every op.
llvm::Value* Finish(llvm::IRBuilderBase& b, llvm::Value* value, PrimitiveType type) {
  return hlo::IsNarrowFloat(type) ? RoundToNarrowFloat(b, value, type) : value;
}

llvm::Value* CallMath(ElementalEmitter& emitter, std::string_view name, llvm::Value* x,
                      llvm::Value* y = nullptr) {
  llvm::FunctionCallee callee = emitter.hooks().MathFunction(emitter.module(), name, x->getType());
  if (y == nullptr) return emitter.builder().CreateCall(callee, {x});
  return emitter.builder().CreateCall(callee, {x, y});
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
    case HloOpcode::kExp:
      return CallMath(emitter, "exp", x);
    case HloOpcode::kExpm1:
      return CallMath(emitter, "expm1", x);
    case HloOpcode::kLog:
      return CallMath(emitter, "log", x);
    case HloOpcode::kLog1p:
      return CallMath(emitter, "log1p", x);
    case HloOpcode::kTanh:
      return CallMath(emitter, "tanh", x);
    case HloOpcode::kSin:
      return CallMath(emitter, "sin", x);
    case HloOpcode::kCos:
      return CallMath(emitter, "cos", x);
    case HloOpcode::kTan:
      return CallMath(emitter, "tan", x);
    case HloOpcode::kErf:
      return CallMath(emitter, "erf", x);
    case HloOpcode::kCbrt:
      return CallMath(emitter, "cbrt", x);
    case HloOpcode::kAcos:
      return CallMath(emitter, "acos", x);
    case HloOpcode::kAcosh:
      return CallMath(emitter, "acosh", x);
    case HloOpcode::kAsin:
      return CallMath(emitter, "asin", x);
    case HloOpcode::kAsinh:
      return CallMath(emitter, "asinh", x);
    case HloOpcode::kAtanh:
      return CallMath(emitter, "atanh", x);
    case HloOpcode::kCosh:
      return CallMath(emitter, "cosh", x);
    case HloOpcode::kSinh:
      return CallMath(emitter, "sinh", x);
    case HloOpcode::kLogistic: {
      llvm::Value* one = llvm::ConstantFP::get(type, 1.0);
      return b.CreateFDiv(one, b.CreateFAdd(one, CallMath(emitter, "exp", b.CreateFNeg(x))));
    }
    default:
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
  llvm::Value* x_negative = b.CreateICmpSLT(b.CreateBitCast(x, int_type), llvm::ConstantInt::get(int_type, 0));
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

llvm::Value* FloatCompare(llvm::IRBuilderBase& b, hlo::ComparisonDirection direction,
                          llvm::Value* x, llvm::Value* y) {
  switch (direction) {
    case hlo::ComparisonDirection::kEq:
      return b.CreateFCmpOEQ(x, y);
    case hlo::ComparisonDirection::kNe:
      return b.CreateFCmpUNE(x, y);
    case hlo::ComparisonDirection::kLt:
      return b.CreateFCmpOLT(x, y);
    case hlo::ComparisonDirection::kLe:
      return b.CreateFCmpOLE(x, y);
    case hlo::ComparisonDirection::kGt:
      return b.CreateFCmpOGT(x, y);
    case hlo::ComparisonDirection::kGe:
      return b.CreateFCmpOGE(x, y);
  }
  return nullptr;
}

llvm::Value* IntCompare(llvm::IRBuilderBase& b, hlo::ComparisonDirection direction, bool is_signed,
                        llvm::Value* x, llvm::Value* y) {
  using P = llvm::CmpInst::Predicate;
  P predicate = P::ICMP_EQ;
  switch (direction) {
    case hlo::ComparisonDirection::kEq:
      predicate = P::ICMP_EQ;
      break;
    case hlo::ComparisonDirection::kNe:
      predicate = P::ICMP_NE;
      break;
    case hlo::ComparisonDirection::kLt:
      predicate = is_signed ? P::ICMP_SLT : P::ICMP_ULT;
      break;
    case hlo::ComparisonDirection::kLe:
      predicate = is_signed ? P::ICMP_SLE : P::ICMP_ULE;
      break;
    case hlo::ComparisonDirection::kGt:
      predicate = is_signed ? P::ICMP_SGT : P::ICMP_UGT;
      break;
    case hlo::ComparisonDirection::kGe:
      predicate = is_signed ? P::ICMP_SGE : P::ICMP_UGE;
      break;
  }
  return b.CreateICmp(predicate, x, y);
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
      llvm::Value* overflow = is_signed
                                  ? b.CreateAnd(b.CreateICmpEQ(x, llvm::ConstantInt::get(
                                                                      type, llvm::APInt::getSignedMinValue(width))),
                                                b.CreateICmpEQ(y, all_ones))
                                  : b.getFalse();
      // Divide by a safe divisor, then patch the special cases: x/0 = -1, x%0 = x,
      // MIN/-1 = MIN, MIN%-1 = 0.
      llvm::Value* safe = b.CreateSelect(b.CreateOr(by_zero, overflow), llvm::ConstantInt::get(type, 1), y);
      llvm::Value* result = divide ? (is_signed ? b.CreateSDiv(x, safe) : b.CreateUDiv(x, safe))
                                   : (is_signed ? b.CreateSRem(x, safe) : b.CreateURem(x, safe));
      result = b.CreateSelect(overflow, divide ? x : zero, result);
      return b.CreateSelect(by_zero, divide ? all_ones : x, result);
    }
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kShiftRightArithmetic: {
      llvm::Value* too_far = b.CreateICmpUGE(y, llvm::ConstantInt::get(type, width));
      llvm::Value* amount = b.CreateSelect(too_far, zero, y);
      if (opcode == HloOpcode::kShiftLeft) return b.CreateSelect(too_far, zero, b.CreateShl(x, amount));
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
  if (opcode == HloOpcode::kConvert) return EmitConvert(*this, operands[0], result_type);
  if (opcode == HloOpcode::kSelect) {
    return ScalarValue{b.CreateSelect(operands[0].value, operands[1].value, operands[2].value),
                       result_type};
  }
  if (opcode == HloOpcode::kClamp) {
    // clamp(lo, x, hi) = min(max(x, lo), hi)
    ScalarValue lo = operands[0], x = operands[1], hi = operands[2];
    if (hlo::IsFloatingPoint(result_type)) {
      return ScalarValue{FloatMaxMin(b, false, FloatMaxMin(b, true, x.value, lo.value), hi.value),
                         result_type};
    }
    bool is_signed = hlo::IsSignedIntegral(result_type);
    TS_ASSIGN_OR_RETURN(llvm::Value* lower, IntBinary(b, HloOpcode::kMaximum, is_signed, x.value, lo.value));
    TS_ASSIGN_OR_RETURN(llvm::Value* clamped, IntBinary(b, HloOpcode::kMinimum, is_signed, lower, hi.value));
    return ScalarValue{clamped, result_type};
  }
  if (opcode == HloOpcode::kCompare) {
    hlo::ComparisonDirection direction = *instruction.attributes().direction;
    hlo::ComparisonType kind = instruction.attributes().comparison_type;
    if (hlo::IsFloatingPoint(operand_type) && kind != hlo::ComparisonType::kTotalOrder) {
      return ScalarValue{FloatCompare(b, direction, operands[0].value, operands[1].value),
                         PrimitiveType::kPred};
    }
    if (hlo::IsIntegral(operand_type) || operand_type == PrimitiveType::kPred) {
      bool is_signed = kind == hlo::ComparisonType::kSigned ||
                       (kind == hlo::ComparisonType::kDefault && hlo::IsSignedIntegral(operand_type));
      return ScalarValue{IntCompare(b, direction, is_signed, operands[0].value, operands[1].value),
                         PrimitiveType::kPred};
    }
    return UnsupportedOp(opcode, operand_type);
  }
  if (hlo::IsFloatingPoint(operand_type)) {
    if (opcode == HloOpcode::kIsFinite) {
      llvm::Value* magnitude = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, operands[0].value);
      llvm::Value* infinity = llvm::ConstantFP::getInfinity(operands[0].value->getType());
      return ScalarValue{b.CreateFCmpOLT(magnitude, infinity), PrimitiveType::kPred};
    }
    llvm::Value* result = nullptr;
    if (operands.size() == 1) {
      TS_ASSIGN_OR_RETURN(result, FloatUnary(*this, opcode, operands[0].value));
    } else if (operands.size() == 2) {
      TS_ASSIGN_OR_RETURN(result, FloatBinary(*this, opcode, operands[0].value, operands[1].value));
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
      TS_ASSIGN_OR_RETURN(result, IntBinary(b, opcode, is_signed, operands[0].value, operands[1].value));
    }
    if (result == nullptr) return UnsupportedOp(opcode, operand_type);
    return ScalarValue{result, result_type};
  }
  return UnsupportedOp(opcode, operand_type);
}

Expected<ScalarValue> EmitConvert(ElementalEmitter& emitter, ScalarValue value, PrimitiveType to) {
  llvm::IRBuilder<>& b = emitter.builder();
  PrimitiveType from = value.type;
  llvm::Type* target = ComputeType(b.getContext(), to);
  if (from == to) return value;
  bool from_float = hlo::IsFloatingPoint(from);
  bool to_float = hlo::IsFloatingPoint(to);
  if (to == PrimitiveType::kPred) {
    llvm::Value* nonzero = from_float
                               ? b.CreateFCmpUNE(value.value, llvm::ConstantFP::get(value.value->getType(), 0.0))
                               : b.CreateICmpNE(value.value, llvm::ConstantInt::get(value.value->getType(), 0));
    return ScalarValue{nonzero, to};
  }
  if (from_float && to_float) {
    llvm::Value* converted = value.value;
    if (converted->getType() != target) {
      converted = target->getPrimitiveSizeInBits() > converted->getType()->getPrimitiveSizeInBits()
                      ? b.CreateFPExt(converted, target)
                      : b.CreateFPTrunc(converted, target);
    }
    return ScalarValue{Finish(b, converted, to), to};
  }
  if (from_float) {
    if (!hlo::IsIntegral(to)) return UnsupportedOp(hlo::HloOpcode::kConvert, to);
    // Saturating, NaN -> 0: the llvm.fpto*i.sat intrinsics are exactly XLA's rule.
    llvm::Intrinsic::ID id = hlo::IsSignedIntegral(to) ? llvm::Intrinsic::fptosi_sat
                                                        : llvm::Intrinsic::fptoui_sat;
    return ScalarValue{b.CreateIntrinsic(id, {target, value.value->getType()}, {value.value}), to};
  }
  if (hlo::IsIntegral(from) || from == PrimitiveType::kPred) {
    bool is_signed = hlo::IsSignedIntegral(from);
    if (to_float) {
      llvm::Value* converted = is_signed ? b.CreateSIToFP(value.value, target)
                                         : b.CreateUIToFP(value.value, target);
      return ScalarValue{Finish(b, converted, to), to};
    }
    if (hlo::IsIntegral(to)) {
      return ScalarValue{is_signed ? b.CreateSExtOrTrunc(value.value, target)
                                   : b.CreateZExtOrTrunc(value.value, target),
                         to};
    }
  }
  return UnsupportedOp(hlo::HloOpcode::kConvert, from);
}

}  // namespace tilesmith::codegen
