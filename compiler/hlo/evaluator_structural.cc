// The structural half of the evaluator: dispatch by opcode, and the ops that create or pass
// values around without computing on them (constant, iota, tuple, get-tuple-element,
// fusion, call, map).
#include <cstring>

#include "compiler/hlo/evaluator_index.h"
#include "compiler/hlo/evaluator_ops.h"
#include "compiler/hlo/hlo_module.h"

namespace tilesmith::hlo::eval {
namespace {

bool HasElidedContents(const Literal& literal) {
  if (literal.elided()) return true;
  for (const Literal& element : literal.tuple_elements()) {
    if (HasElidedContents(element)) return true;
  }
  return false;
}

Expected<Literal> EvaluateConstant(const HloInstruction& instruction, const Context& context) {
  const Literal* literal = instruction.literal();
  if (literal == nullptr) {
    return InvalidArgument("constant '" + instruction.name() + "' has no value");
  }
  if (HasElidedContents(*literal)) {
    return InvalidArgument("constant '" + instruction.name() +
                           "' has elided contents ({...}) and cannot be evaluated");
  }
  return CopyAs(*literal, instruction.shape(), context);
}

// The values 0..n-1 along the iota dimension are written once into a vector of the result
// type (rounded as that type rounds), then broadcast over the other dimensions.
Expected<Literal> EvaluateIota(const HloInstruction& instruction, const Context& context) {
  const Shape& shape = instruction.shape();
  const int64_t iota_dimension = instruction.attributes().iota_dimension;
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(shape));
  const int64_t size = shape.dim(iota_dimension);
  PrimitiveType type = shape.element_type();
  Literal values(Shape::Array(type, {size}));
  for (int64_t i = 0; i < size; ++i) {
    if (IsIntegral(type) || type == PrimitiveType::kPred) {
      values.SetInt(i, i);
    } else if (IsComplex(type)) {
      values.SetComplex(i, {static_cast<double>(i), 0.0});
    } else {
      values.SetDouble(i, static_cast<double>(i));
    }
  }
  Walk walk;
  std::vector<int64_t> strides = RowMajorStrides(shape.dims());
  for (int64_t d = 0; d < shape.rank(); ++d) {
    walk.Add(shape.dim(d), strides[d], d == iota_dimension ? 1 : 0);
  }
  CopyBox(walk, result, values);
  return result;
}

Expected<Literal> EvaluateTuple(const HloInstruction& instruction, Operands operands,
                                const Context& context) {
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(instruction.shape()));
  std::span<Literal> elements = result.tuple_elements();
  for (size_t i = 0; i < operands.size(); ++i) {
    TS_RETURN_IF_ERROR(CopyInto(*operands[i], elements[i]));
  }
  return result;
}

Expected<Literal> EvaluateCall(const HloInstruction& instruction, Operands operands,
                               const Context& context) {
  TS_ASSIGN_OR_RETURN(Literal result, context.Call(*instruction.called_computation(0), operands));
  // The callee's root may carry another layout than the caller declares.
  if (result.shape() == instruction.shape()) return result;
  return CopyAs(result, instruction.shape(), context);
}

// The mapped computation runs once per element on rank-0 literals.
Expected<Literal> EvaluateMap(const HloInstruction& instruction, Operands operands,
                              const Context& context) {
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(instruction.shape()));
  const HloComputation& callee = *instruction.called_computation(0);
  std::vector<Literal> scalars;
  std::vector<const Literal*> arguments;
  scalars.reserve(operands.size());
  for (const Literal* operand : operands) {
    scalars.emplace_back(Shape::Scalar(operand->element_type()));
  }
  for (const Literal& scalar : scalars) arguments.push_back(&scalar);
  const int64_t result_bytes = result.element_bytes();
  for (int64_t i = 0; i < result.element_count(); ++i) {
    for (size_t k = 0; k < operands.size(); ++k) {
      const int64_t bytes = scalars[k].element_bytes();
      std::memcpy(scalars[k].bytes().data(), operands[k]->bytes().data() + i * bytes, bytes);
    }
    TS_ASSIGN_OR_RETURN(Literal value, context.Call(callee, arguments));
    if (!value.shape().IsArray() || value.element_type() != result.element_type() ||
        value.element_count() != 1) {
      return InvalidArgument("map computation '" + callee.name() + "' returned " +
                             ShapeToString(value.shape()) + "; it must return a " +
                             std::string(PrimitiveTypeName(result.element_type())) + " scalar");
    }
    std::memcpy(result.bytes().data() + i * result_bytes, value.bytes().data(), result_bytes);
  }
  return result;
}

}  // namespace

Expected<Literal> EvaluateStructural(const HloInstruction& instruction, Operands operands,
                                     const Context& context) {
  switch (instruction.opcode()) {
    case HloOpcode::kConstant:
      return EvaluateConstant(instruction, context);
    case HloOpcode::kIota:
      return EvaluateIota(instruction, context);
    case HloOpcode::kTuple:
      return EvaluateTuple(instruction, operands, context);
    case HloOpcode::kGetTupleElement:
      return CopyAs(operands[0]->tuple_elements()[instruction.tuple_index()], instruction.shape(),
                    context);
    case HloOpcode::kFusion:
    case HloOpcode::kCall:
      return EvaluateCall(instruction, operands, context);
    case HloOpcode::kMap:
      return EvaluateMap(instruction, operands, context);
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
      return EvaluateDataMovement(instruction, operands, context);
    case HloOpcode::kReduce:
      return EvaluateReduce(instruction, operands, context);
    case HloOpcode::kReduceWindow:
      return EvaluateReduceWindow(instruction, operands, context);
    case HloOpcode::kDot:
      return EvaluateDot(instruction, operands, context);
    case HloOpcode::kGather:
      return EvaluateGather(instruction, operands, context);
    case HloOpcode::kScatter:
      return EvaluateScatter(instruction, operands, context);
    default:
      return Unimplemented("the evaluator does not implement '" + OpName(instruction) + "'");
  }
}

}  // namespace tilesmith::hlo::eval
