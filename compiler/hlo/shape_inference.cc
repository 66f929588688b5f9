#include "compiler/hlo/shape_inference.h"

#include <algorithm>
#include <string>

#include "compiler/hlo/hlo_module.h"
#include "compiler/hlo/shape_inference_internal.h"

namespace tilesmith::hlo {
namespace {

using shape_check::DimsText;
using shape_check::ExpectArray;
using shape_check::ExpectOperandCount;
using shape_check::ExpectUniqueDims;
using shape_check::Fail;
using shape_check::TypeName;

enum class TypeClass { kAny, kFloat, kFloatOrComplex, kIntegral, kIntegralOrPred, kNumeric };

bool InClass(PrimitiveType type, TypeClass type_class) {
  switch (type_class) {
    case TypeClass::kAny:
      return true;
    case TypeClass::kFloat:
      return IsFloatingPoint(type);
    case TypeClass::kFloatOrComplex:
      return IsFloatingPoint(type) || IsComplex(type);
    case TypeClass::kIntegral:
      return IsIntegral(type);
    case TypeClass::kIntegralOrPred:
      return IsIntegral(type) || type == PrimitiveType::kPred;
    case TypeClass::kNumeric:
      return type != PrimitiveType::kPred;
  }
  return false;
}

std::string_view ClassText(TypeClass type_class) {
  switch (type_class) {
    case TypeClass::kFloat:
      return "a floating-point type";
    case TypeClass::kFloatOrComplex:
      return "a floating-point or complex type";
    case TypeClass::kIntegral:
      return "an integer type";
    case TypeClass::kIntegralOrPred:
      return "an integer or pred type";
    case TypeClass::kNumeric:
      return "a numeric type";
    case TypeClass::kAny:
      break;
  }
  return "any type";
}

TypeClass UnaryClass(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kIsFinite:
    case HloOpcode::kErf:
    case HloOpcode::kReducePrecision:
      return TypeClass::kFloat;
    case HloOpcode::kNot:
      return TypeClass::kIntegralOrPred;
    case HloOpcode::kPopulationCount:
    case HloOpcode::kClz:
      return TypeClass::kIntegral;
    case HloOpcode::kAbs:
    case HloOpcode::kNegate:
    case HloOpcode::kSign:
      return TypeClass::kNumeric;
    case HloOpcode::kCopy:
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      return TypeClass::kAny;
    default:
      return TypeClass::kFloatOrComplex;  // exp, log, tanh, sin, …
  }
}

TypeClass BinaryClass(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      return TypeClass::kIntegralOrPred;
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
      return TypeClass::kIntegral;
    case HloOpcode::kAtan2:
      return TypeClass::kFloatOrComplex;
    case HloOpcode::kComplex:
      return TypeClass::kFloat;
    case HloOpcode::kCompare:
      return TypeClass::kAny;
    default:
      return TypeClass::kNumeric;  // add, divide, power, maximum, …
  }
}

Expected<Shape> InferUnary(const HloInstruction& instruction, const Shape* declared) {
  TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 1));
  const Shape& operand = instruction.operand(0)->shape();
  HloOpcode opcode = instruction.opcode();
  if (opcode == HloOpcode::kCopy) return operand;
  TS_RETURN_IF_ERROR(ExpectArray(operand, "the operand"));
  PrimitiveType type = operand.element_type();
  TypeClass type_class = UnaryClass(opcode);
  if (!InClass(type, type_class)) {
    return Fail(std::string(HloOpcodeName(opcode)) + " needs " +
                std::string(ClassText(type_class)) + ", not " + TypeName(type));
  }
  Shape result = Shape::Array(type, {operand.dims().begin(), operand.dims().end()});
  switch (opcode) {
    case HloOpcode::kIsFinite:
      result.set_element_type(PrimitiveType::kPred);
      break;
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kAbs:
      if (IsComplex(type)) result.set_element_type(ComplexComponentType(type));
      break;
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
      return shape_check::InferConvert(instruction, declared);
    case HloOpcode::kReducePrecision: {
      const HloAttributes& attributes = instruction.attributes();
      if (attributes.exponent_bits < 1 || attributes.mantissa_bits < 0) {
        return Fail("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
      }
      break;
    }
    default:
      break;
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (operand.IsDynamicDim(d)) result.set_dynamic_dim(d, true);
  }
  return result;
}

Expected<Shape> InferBinary(const HloInstruction& instruction, const Shape* declared) {
  HloOpcode opcode = instruction.opcode();
  if (opcode == HloOpcode::kStochasticConvert) return shape_check::InferOpaque(declared);
  TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 2));
  const Shape& lhs = instruction.operand(0)->shape();
  const Shape& rhs = instruction.operand(1)->shape();
  TS_RETURN_IF_ERROR(ExpectArray(lhs, "operand 0"));
  TS_RETURN_IF_ERROR(ExpectArray(rhs, "operand 1"));
  if (!lhs.EqualsIgnoringLayout(rhs)) {
    return Fail("operands must have the same shape; they are " + ShapeToStringNoLayout(lhs) +
                " and " + ShapeToStringNoLayout(rhs));
  }
  TypeClass type_class = BinaryClass(opcode);
  if (!InClass(lhs.element_type(), type_class)) {
    return Fail(std::string(HloOpcodeName(opcode)) + " needs " +
                std::string(ClassText(type_class)) + ", not " + TypeName(lhs.element_type()));
  }
  Shape result = Shape::Array(lhs.element_type(), {lhs.dims().begin(), lhs.dims().end()});
  if (opcode == HloOpcode::kCompare) {
    if (!instruction.attributes().direction) return Fail("compare needs a direction=");
    ComparisonType type = instruction.attributes().comparison_type;
    PrimitiveType element = lhs.element_type();
    if ((type == ComparisonType::kSigned || type == ComparisonType::kUnsigned) &&
        !IsIntegral(element) && element != PrimitiveType::kPred) {
      return Fail("comparison type " + std::string(ComparisonTypeName(type)) +
                  " needs integer operands, not " + TypeName(element));
    }
    if ((type == ComparisonType::kFloat || type == ComparisonType::kTotalOrder) &&
        !IsFloatingPoint(element) && !IsComplex(element)) {
      return Fail("comparison type " + std::string(ComparisonTypeName(type)) +
                  " needs floating-point operands, not " + TypeName(element));
    }
    ComparisonDirection direction = *instruction.attributes().direction;
    if (IsComplex(element) && direction != ComparisonDirection::kEq &&
        direction != ComparisonDirection::kNe) {
      return Fail("complex values compare only with EQ or NE");
    }
    result.set_element_type(PrimitiveType::kPred);
  } else if (opcode == HloOpcode::kComplex) {
    if (lhs.element_type() != PrimitiveType::kF32 && lhs.element_type() != PrimitiveType::kF64) {
      return Fail("complex needs f32 or f64 operands, not " + TypeName(lhs.element_type()));
    }
    result.set_element_type(lhs.element_type() == PrimitiveType::kF32 ? PrimitiveType::kC64
                                                                      : PrimitiveType::kC128);
  }
  return result;
}

Expected<Shape> InferTernary(const HloInstruction& instruction) {
  TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 3));
  const Shape& a = instruction.operand(0)->shape();
  const Shape& b = instruction.operand(1)->shape();
  const Shape& c = instruction.operand(2)->shape();
  TS_RETURN_IF_ERROR(ExpectArray(a, "operand 0"));
  TS_RETURN_IF_ERROR(ExpectArray(b, "operand 1"));
  TS_RETURN_IF_ERROR(ExpectArray(c, "operand 2"));
  auto same_or_scalar = [](const Shape& small, const Shape& full, bool check_type) {
    if (check_type && small.element_type() != full.element_type()) return false;
    return small.rank() == 0 || std::equal(small.dims().begin(), small.dims().end(),
                                           full.dims().begin(), full.dims().end());
  };
  if (instruction.opcode() == HloOpcode::kSelect) {
    if (a.element_type() != PrimitiveType::kPred) {
      return Fail("select's predicate must be pred, not " + TypeName(a.element_type()));
    }
    if (!b.EqualsIgnoringLayout(c)) {
      return Fail("select's branches differ: " + ShapeToStringNoLayout(b) + " and " +
                  ShapeToStringNoLayout(c));
    }
    if (!same_or_scalar(a, b, /*check_type=*/false)) {
      return Fail("select's predicate " + ShapeToStringNoLayout(a) + " does not match " +
                  ShapeToStringNoLayout(b));
    }
    return Shape::Array(b.element_type(), {b.dims().begin(), b.dims().end()});
  }
  // clamp(min, operand, max)
  if (!same_or_scalar(a, b, true) || !same_or_scalar(c, b, true)) {
    return Fail("clamp bounds " + ShapeToStringNoLayout(a) + " and " + ShapeToStringNoLayout(c) +
                " must be scalars or match the operand " + ShapeToStringNoLayout(b));
  }
  return Shape::Array(b.element_type(), {b.dims().begin(), b.dims().end()});
}

Expected<Shape> InferCallee(const HloInstruction& instruction) {
  if (instruction.called_computations().size() != 1) {
    return Fail(std::string(HloOpcodeName(instruction.opcode())) +
                " calls exactly one computation");
  }
  const HloComputation& callee = *instruction.called_computation(0);
  if (callee.parameter_count() != instruction.operand_count()) {
    return Fail("'" + callee.name() + "' takes " + std::to_string(callee.parameter_count()) +
                " parameters but " + std::to_string(instruction.operand_count()) +
                " operands are passed");
  }
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& parameter = callee.parameter(i)->shape();
    const Shape& operand = instruction.operand(i)->shape();
    if (!parameter.EqualsIgnoringLayout(operand)) {
      return Fail("operand " + std::to_string(i) + " is " + ShapeToStringNoLayout(operand) +
                  " but parameter " + std::to_string(i) + " of '" + callee.name() + "' is " +
                  ShapeToStringNoLayout(parameter));
    }
  }
  return callee.root()->shape();
}

}  // namespace

bool IsShapeOpaque(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kCustomCall:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kConvolution:
    case HloOpcode::kFft:
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kBatchNormGrad:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kTopK:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
    case HloOpcode::kAfterAll:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kDynamicReshape:
    case HloOpcode::kDomain:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

// Mirrors InferUnary and InferBinary for the ops whose result is the operand's element type
// and dims; any other case is left to them.
bool ElementwiseShapeHolds(const HloInstruction& instruction, const Shape& declared) {
  HloOpcode opcode = instruction.opcode();
  if (IsShapeOpaque(opcode)) return false;
  if (IsUnaryElementwise(opcode)) {
    switch (opcode) {
      case HloOpcode::kCopy:
      case HloOpcode::kIsFinite:
      case HloOpcode::kReal:
      case HloOpcode::kImag:
      case HloOpcode::kAbs:
      case HloOpcode::kConvert:
      case HloOpcode::kBitcastConvert:
      case HloOpcode::kReducePrecision:
        return false;
      default:
        break;
    }
    if (instruction.operand_count() != 1) return false;
    const Shape& operand = instruction.operand(0)->shape();
    // The inferred shape is the operand's type, dims and dynamic dims.
    return operand.IsArray() && InClass(operand.element_type(), UnaryClass(opcode)) &&
           declared.EqualsIgnoringLayout(operand);
  }
  if (IsBinaryElementwise(opcode)) {
    if (opcode == HloOpcode::kCompare || opcode == HloOpcode::kComplex) return false;
    if (instruction.operand_count() != 2) return false;
    const Shape& lhs = instruction.operand(0)->shape();
    const Shape& rhs = instruction.operand(1)->shape();
    if (!lhs.IsArray() || !rhs.IsArray() || !lhs.EqualsIgnoringLayout(rhs)) return false;
    if (!InClass(lhs.element_type(), BinaryClass(opcode))) return false;
    // The inferred shape is the lhs's type and dims, all static.
    if (declared.element_type() != lhs.element_type() || declared.IsTuple() ||
        !std::ranges::equal(declared.dims(), lhs.dims())) {
      return false;
    }
    for (int64_t d = 0; d < declared.rank(); ++d) {
      if (declared.IsDynamicDim(d)) return false;
    }
    return true;
  }
  return false;
}

Expected<Shape> InferShape(const HloInstruction& instruction, const Shape* declared) {
  HloOpcode opcode = instruction.opcode();
  if (opcode == HloOpcode::kConstant) {
    if (declared == nullptr || instruction.literal() == nullptr) {
      return Fail("a constant needs its shape and value");
    }
    return *declared;
  }
  if (IsShapeOpaque(opcode)) return shape_check::InferOpaque(declared);
  if (IsUnaryElementwise(opcode)) return InferUnary(instruction, declared);
  if (IsBinaryElementwise(opcode)) return InferBinary(instruction, declared);
  if (IsTernaryElementwise(opcode)) return InferTernary(instruction);
  switch (opcode) {
    case HloOpcode::kTuple: {
      std::vector<Shape> elements;
      for (const HloInstruction* operand : instruction.operands()) {
        elements.push_back(operand->shape());
      }
      return Shape::Tuple(std::move(elements));
    }
    case HloOpcode::kGetTupleElement: {
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 1));
      const Shape& tuple = instruction.operand(0)->shape();
      if (!tuple.IsTuple()) return Fail("the operand is not a tuple");
      int64_t index = instruction.tuple_index();
      if (index < 0 || index >= static_cast<int64_t>(tuple.tuple_elements().size())) {
        return Fail("index=" + std::to_string(index) + " is outside the " +
                    std::to_string(tuple.tuple_elements().size()) + "-element tuple");
      }
      return tuple.tuple_element(index);
    }
    case HloOpcode::kFusion:
    case HloOpcode::kCall:
      return InferCallee(instruction);
    default:
      return shape_check::InferStructural(instruction, declared);
  }
}

}  // namespace tilesmith::hlo
