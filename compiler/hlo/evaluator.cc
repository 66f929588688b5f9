// The evaluation driver: walks a computation in operand-first order, dispatches each
// instruction to its op family, and frees intermediate values after their last use.
#include "compiler/hlo/evaluator.h"

#include <random>

#include "compiler/hlo/evaluator_internal.h"
#include "compiler/hlo/float_types.h"

namespace tilesmith::hlo {
namespace eval {
namespace {

int64_t ValueBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_elements()) {
      if (__builtin_add_overflow(total, ValueBytes(element), &total)) return INT64_MAX;
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  int64_t bytes;
  if (__builtin_mul_overflow(shape.ElementCount(), UnpackedByteWidth(shape.element_type()),
                             &bytes)) {
    return INT64_MAX;
  }
  return bytes;
}

std::string ByteText(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  return text;
}

Expected<Literal> EvaluateComputation(const HloComputation& computation, Operands arguments,
                                      const Context& context) {
  if (static_cast<int64_t>(arguments.size()) != computation.parameter_count()) {
    return InvalidArgument("'" + computation.name() + "' takes " +
                           std::to_string(computation.parameter_count()) + " arguments, got " +
                           std::to_string(arguments.size()));
  }
  for (int64_t i = 0; i < computation.parameter_count(); ++i) {
    const Shape& expected = computation.parameter(i)->shape();
    if (!arguments[i]->shape().EqualsIgnoringLayout(expected)) {
      return InvalidArgument("argument " + std::to_string(i) + " is " +
                             ShapeToStringNoLayout(arguments[i]->shape()) + " but parameter '" +
                             computation.parameter(i)->name() + "' is " +
                             ShapeToStringNoLayout(expected));
    }
  }
  // Only what the root needs is evaluated; dead instructions are skipped. Side tables
  // are indexed by instruction id.
  std::vector<const HloInstruction*> order = computation.PostOrder();
  size_t size = static_cast<size_t>(computation.instruction_count());
  std::vector<char> live(size, 0);
  live[computation.root()->id()] = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!live[(*it)->id()]) continue;
    for (const HloInstruction* operand : (*it)->operands()) live[operand->id()] = 1;
  }
  std::vector<int64_t> uses_left(size, 0);
  for (const HloInstruction* instruction : order) {
    if (!live[instruction->id()]) continue;
    for (const HloInstruction* operand : instruction->operands()) ++uses_left[operand->id()];
  }
  std::vector<Literal> owned(size);
  std::vector<const Literal*> values(size, nullptr);
  std::vector<const Literal*> operand_values;
  for (const HloInstruction* instruction : order) {
    if (!live[instruction->id()]) continue;
    if (instruction->opcode() == HloOpcode::kParameter) {
      values[instruction->id()] = arguments[instruction->parameter_number()];
      continue;
    }
    operand_values.clear();
    for (const HloInstruction* operand : instruction->operands()) {
      operand_values.push_back(values[operand->id()]);
    }
    HloOpcode opcode = instruction->opcode();
    Expected<Literal> result = IsElementwise(opcode) || opcode == HloOpcode::kCopy
                                   ? EvaluateElementwise(*instruction, operand_values, context)
                                   : EvaluateStructural(*instruction, operand_values, context);
    if (!result) {
      if (result.error().message.starts_with("evaluating '")) return result;
      return std::unexpected(result.error().WithContext("evaluating '" + instruction->name() +
                                                        "' (" + std::string(HloOpcodeName(opcode)) +
                                                        ") in '" + computation.name() + "'"));
    }
    if (!(result->shape() == instruction->shape())) {
      return MakeError(ErrorCode::kInternal, "evaluating '" + instruction->name() + "' produced " +
                                                 ShapeToString(result->shape()) + " instead of " +
                                                 ShapeToString(instruction->shape()));
    }
    owned[instruction->id()] = std::move(*result);
    values[instruction->id()] = &owned[instruction->id()];
    for (const HloInstruction* operand : instruction->operands()) {
      if (--uses_left[operand->id()] == 0 && operand != computation.root()) {
        owned[operand->id()] = Literal();  // frees the value after its last use
      }
    }
  }
  int64_t root = computation.root()->id();
  if (computation.root()->opcode() != HloOpcode::kParameter) return std::move(owned[root]);
  return *values[root];  // a parameter: copy the argument
}

}  // namespace

Expected<Literal> Context::Allocate(const Shape& shape) const {
  if (!shape.IsStatic()) {
    bool unbounded = false;
    auto check = [&](auto&& self, const Shape& s) -> void {
      if (s.IsTuple()) {
        for (const Shape& e : s.tuple_elements()) self(self, e);
      } else if (s.IsArray()) {
        unbounded = unbounded || s.ElementCount() < 0;
      }
    };
    check(check, shape);
    if (unbounded) {
      return InvalidArgument("the evaluator needs sizes for every dimension; " +
                             ShapeToStringNoLayout(shape) + " has an unbounded one");
    }
  }
  int64_t bytes = ValueBytes(shape);
  if (bytes > options_.max_value_bytes) {
    return MakeError(ErrorCode::kResourceExhausted,
                     "a value of " + ShapeToStringNoLayout(shape) + " needs " + ByteText(bytes) +
                         ", over the evaluator's limit of " + ByteText(options_.max_value_bytes));
  }
  return Literal(shape);
}

Expected<Literal> Context::Call(const HloComputation& computation, Operands arguments) const {
  return EvaluateComputation(computation, arguments, *this);
}

}  // namespace eval

Expected<Literal> Evaluate(const HloComputation& computation, std::span<const Literal> arguments,
                           const EvaluatorOptions& options) {
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  eval::Context context(options);
  return context.Call(computation, pointers);
}

namespace {

Status FillRandom(Literal& literal, std::mt19937_64& random, const eval::Context& context) {
  if (literal.shape().IsTuple()) {
    for (Literal& element : literal.tuple_elements()) {
      TS_RETURN_IF_ERROR(FillRandom(element, random, context));
    }
    return OkStatus();
  }
  PrimitiveType type = literal.element_type();
  int64_t count = literal.element_count();
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  if (type == PrimitiveType::kF32) {
    float* data = literal.data<float>();
    for (int64_t i = 0; i < count; ++i) data[i] = static_cast<float>(real(random));
  } else if (IsNarrowFloat(type) && BitWidth(type) == 16) {
    uint16_t* data = literal.data<uint16_t>();
    for (int64_t i = 0; i < count; ++i) {
      data[i] = static_cast<uint16_t>(EncodeNarrowFloat(type, static_cast<float>(real(random))));
    }
  } else if (IsNarrowFloat(type)) {
    uint8_t* data = literal.data<uint8_t>();
    for (int64_t i = 0; i < count; ++i) {
      data[i] = static_cast<uint8_t>(EncodeNarrowFloat(type, static_cast<float>(real(random))));
    }
  } else if (IsFloatingPoint(type)) {
    for (int64_t i = 0; i < count; ++i) literal.SetDouble(i, real(random));
  } else if (IsComplex(type)) {
    for (int64_t i = 0; i < count; ++i) literal.SetComplex(i, {real(random), real(random)});
  } else if (type == PrimitiveType::kPred) {
    for (int64_t i = 0; i < count; ++i) literal.SetInt(i, static_cast<int64_t>(random() & 1));
  } else if (IsSignedIntegral(type)) {
    int64_t span = BitWidth(type) >= 4 ? 16 : int64_t{1} << BitWidth(type);
    for (int64_t i = 0; i < count; ++i) {
      literal.SetInt(i, static_cast<int64_t>(random() % span) - span / 2);
    }
  } else if (IsUnsignedIntegral(type)) {
    int64_t span = BitWidth(type) >= 4 ? 16 : int64_t{1} << BitWidth(type);
    for (int64_t i = 0; i < count; ++i) literal.SetInt(i, static_cast<int64_t>(random() % span));
  }
  return OkStatus();
}

}  // namespace

Expected<std::vector<Literal>> MakeRandomArguments(const HloComputation& computation, uint64_t seed,
                                                   const EvaluatorOptions& options) {
  eval::Context context(options);
  std::mt19937_64 random(seed);
  std::vector<Literal> arguments;
  for (const HloInstruction* parameter : computation.parameters()) {
    TS_ASSIGN_OR_RETURN(Literal argument, context.Allocate(parameter->shape()));
    TS_RETURN_IF_ERROR(FillRandom(argument, random, context));
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

}  // namespace tilesmith::hlo
