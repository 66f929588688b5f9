// compare with hlo::Evaluate's semantics: FLOAT is IEEE (NaN unordered, only NE holds);
// TOTALORDER orders floats by sign-magnitude keys, -NaN < -inf < … < -0 < +0 < … < +NaN;
// SIGNED and UNSIGNED read integer bits one way or the other; complex values compare for
// EQ and NE, part by part (by total-order keys under TOTALORDER).
#include "compiler/codegen/elemental_internal.h"

namespace tilesmith::codegen {
namespace {

using hlo::ComparisonDirection;
using hlo::ComparisonType;
using hlo::PrimitiveType;
using Predicate = llvm::CmpInst::Predicate;

// The IEEE predicate of a direction: ordered, except NE which holds for NaN.
Predicate FloatPredicate(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return Predicate::FCMP_OEQ;
    case ComparisonDirection::kNe:
      return Predicate::FCMP_UNE;
    case ComparisonDirection::kLt:
      return Predicate::FCMP_OLT;
    case ComparisonDirection::kLe:
      return Predicate::FCMP_OLE;
    case ComparisonDirection::kGt:
      return Predicate::FCMP_OGT;
    case ComparisonDirection::kGe:
      return Predicate::FCMP_OGE;
  }
  return Predicate::FCMP_FALSE;
}

Predicate IntPredicate(ComparisonDirection direction, bool is_signed) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return Predicate::ICMP_EQ;
    case ComparisonDirection::kNe:
      return Predicate::ICMP_NE;
    case ComparisonDirection::kLt:
      return is_signed ? Predicate::ICMP_SLT : Predicate::ICMP_ULT;
    case ComparisonDirection::kLe:
      return is_signed ? Predicate::ICMP_SLE : Predicate::ICMP_ULE;
    case ComparisonDirection::kGt:
      return is_signed ? Predicate::ICMP_SGT : Predicate::ICMP_UGT;
    case ComparisonDirection::kGe:
      return is_signed ? Predicate::ICMP_SGE : Predicate::ICMP_UGE;
  }
  return Predicate::ICMP_EQ;
}

// Sign-magnitude bits as a two's complement integer that orders like the total order.
// Narrow floats are keyed through their exact f32 value, as the evaluator keys bf16 and
// f16 (for the one-byte types this orders as their bit keys do: a NaN's payload is the
// only thing the f32 value does not keep).
llvm::Value* TotalOrderKey(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::IntegerType* type = b.getIntNTy(x->getType()->getPrimitiveSizeInBits());
  llvm::Value* bits = b.CreateBitCast(x, type);
  llvm::Value* flipped = b.CreateXor(
      bits, llvm::ConstantInt::get(type, llvm::APInt::getSignedMaxValue(type->getBitWidth())));
  return b.CreateSelect(b.CreateICmpSLT(bits, llvm::ConstantInt::get(type, 0)), flipped, bits);
}

// Whether two complex values are equal, part by part.
llvm::Value* ComplexEqual(llvm::IRBuilderBase& b, bool total_order, llvm::Value* x,
                          llvm::Value* y) {
  llvm::Value* equal = nullptr;
  for (unsigned part = 0; part < 2; ++part) {
    llvm::Value* a = b.CreateExtractValue(x, part);
    llvm::Value* c = b.CreateExtractValue(y, part);
    llvm::Value* same = total_order ? b.CreateICmpEQ(TotalOrderKey(b, a), TotalOrderKey(b, c))
                                    : b.CreateFCmpOEQ(a, c);
    equal = equal == nullptr ? same : b.CreateAnd(equal, same);
  }
  return equal;
}

}  // namespace

Expected<ScalarValue> EmitCompare(ElementalEmitter& emitter, const hlo::HloInstruction& compare,
                                  ScalarValue lhs, ScalarValue rhs) {
  llvm::IRBuilder<>& b = emitter.builder();
  const hlo::HloAttributes& attributes = compare.attributes();
  if (!attributes.direction) return InvalidArgument("compare needs a direction");
  ComparisonDirection direction = *attributes.direction;
  ComparisonType kind = attributes.comparison_type;
  bool total_order = kind == ComparisonType::kTotalOrder;
  PrimitiveType type = lhs.type;
  llvm::Value* result = nullptr;
  if (hlo::IsComplex(type)) {
    if (direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
      return Unimplemented("compare of complex values with direction=" +
                           std::string(hlo::ComparisonDirectionName(direction)) + " in '" +
                           compare.name() + "'");
    }
    result = ComplexEqual(b, total_order, lhs.value, rhs.value);
    if (direction == ComparisonDirection::kNe) result = b.CreateNot(result);
  } else if (hlo::IsFloatingPoint(type) && total_order) {
    result = b.CreateICmp(IntPredicate(direction, /*is_signed=*/true), TotalOrderKey(b, lhs.value),
                          TotalOrderKey(b, rhs.value));
  } else if (hlo::IsFloatingPoint(type)) {
    result = b.CreateFCmp(FloatPredicate(direction), lhs.value, rhs.value);
  } else if (hlo::IsIntegral(type) || type == PrimitiveType::kPred) {
    bool is_signed = kind == ComparisonType::kSigned ||
                     (kind != ComparisonType::kUnsigned && hlo::IsSignedIntegral(type));
    result = b.CreateICmp(IntPredicate(direction, is_signed), lhs.value, rhs.value);
  } else {
    return UnsupportedOp(compare.opcode(), type);
  }
  return ScalarValue{result, PrimitiveType::kPred};
}

}  // namespace tilesmith::codegen
