// The elementwise evaluator's front door: checks operands, allocates the result, and
// routes each op to its family by element type. The ops that only pick or move elements
// (copy, select, clamp, real/imag of a real value) are evaluated here.
#include "compiler/hlo/evaluator_elementwise.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <memory>
#include <mutex>

namespace tilesmith::hlo::eval {
namespace {

struct Narrow8Tables {
  std::array<float, 256> decode;
  std::array<uint8_t, 1 << 17> encode;
};

std::unique_ptr<Narrow8Tables> BuildNarrow8Tables(PrimitiveType type) {
  // The round bit of an f32 must be among the 16 bits the encode key keeps.
  assert(FormatOf(type).mantissa_bits <= 6);
  auto tables = std::make_unique<Narrow8Tables>();
  for (uint32_t bits = 0; bits < tables->decode.size(); ++bits) {
    tables->decode[bits] = DecodeNarrowFloat(type, bits);
  }
  for (uint32_t key = 0; key < tables->encode.size(); ++key) {
    // Any f32 with this key rounds the same way; take its top 16 bits plus a low bit if
    // the key says some lower bit is set.
    float representative = std::bit_cast<float>((key >> 1) << 16 | (key & 1));
    tables->encode[key] = static_cast<uint8_t>(EncodeNarrowFloat(type, representative));
  }
  return tables;
}

Status CopyValue(const Literal& from, Literal& to) {
  if (to.shape().IsTuple()) {
    for (size_t i = 0; i < to.tuple_elements().size(); ++i) {
      TS_RETURN_IF_ERROR(CopyValue(from.tuple_elements()[i], to.tuple_elements()[i]));
    }
    return OkStatus();
  }
  std::ranges::copy(from.bytes(), to.bytes().begin());
  return OkStatus();
}

// Moves stored elements as opaque words of their size, so one loop serves every type.
template <typename Word>
void SelectWords(const Literal& pred, const Literal& on_true, const Literal& on_false,
                 Literal& out) {
  const uint8_t* p = pred.data<uint8_t>();
  int64_t step = BroadcastStep(pred);
  const Word* t = on_true.data<Word>();
  const Word* f = on_false.data<Word>();
  Word* result = out.data<Word>();
  int64_t count = out.element_count();
  for (int64_t i = 0; i < count; ++i) result[i] = p[i * step] != 0 ? t[i] : f[i];
}

Status Select(const Literal& pred, const Literal& on_true, const Literal& on_false, Literal& out) {
  switch (out.element_bytes()) {
    case 1:
      SelectWords<uint8_t>(pred, on_true, on_false, out);
      break;
    case 2:
      SelectWords<uint16_t>(pred, on_true, on_false, out);
      break;
    case 4:
      SelectWords<uint32_t>(pred, on_true, on_false, out);
      break;
    case 8:
      SelectWords<uint64_t>(pred, on_true, on_false, out);
      break;
    case 16:
      SelectWords<std::complex<double>>(pred, on_true, on_false, out);
      break;
    default:
      return UnsupportedOp(HloOpcode::kSelect, out.element_type());
  }
  return OkStatus();
}

template <typename S, typename Fn>
void ClampElements(const Literal& low, const Literal& x, const Literal& high, Literal& out, Fn fn) {
  const S* l = low.data<S>();
  const S* v = x.data<S>();
  const S* h = high.data<S>();
  int64_t low_step = BroadcastStep(low);
  int64_t high_step = BroadcastStep(high);
  S* result = out.data<S>();
  int64_t count = out.element_count();
  for (int64_t i = 0; i < count; ++i) result[i] = fn(l[i * low_step], v[i], h[i * high_step]);
}

// clamp(low, x, high) = minimum(maximum(x, low), high), so NaN anywhere gives NaN.
Status Clamp(const Literal& low, const Literal& x, const Literal& high, Literal& out) {
  PrimitiveType type = x.element_type();
  if (IsComplex(type)) return UnsupportedOp(HloOpcode::kClamp, type);
  if (IsFloatingPoint(type)) {
    return VisitFloatCodec(type, [&](const auto& codec) -> Status {
      using S = typename std::decay_t<decltype(codec)>::Storage;
      ClampElements<S>(low, x, high, out, [&](S l, S v, S h) {
        return codec.Encode(
            FloatMinimum(FloatMaximum(codec.Decode(v), codec.Decode(l)), codec.Decode(h)));
      });
      return OkStatus();
    });
  }
  // Stored integers order like their values: signed ones are kept sign-extended.
  return VisitIntType(type, [&](auto int_type) -> Status {
    using S = typename decltype(int_type)::Storage;
    ClampElements<S>(low, x, high, out, [](S l, S v, S h) { return std::min(std::max(v, l), h); });
    return OkStatus();
  });
}

// real(x) = x and imag(x) = 0 for a real x.
Status RealOrImagOfReal(HloOpcode opcode, const Literal& operand, Literal& out) {
  if (opcode == HloOpcode::kReal) return CopyValue(operand, out);
  if (!IsFloatingPoint(out.element_type())) return OkStatus();  // already zero
  return VisitFloatCodec(out.element_type(), [&](const auto& codec) -> Status {
    using V = typename std::decay_t<decltype(codec)>::Value;
    MapFloats(codec, operand, out, [](V) { return V{0}; });
    return OkStatus();
  });
}

Status EvaluateInto(const HloInstruction& instruction, Operands operands, Literal& out) {
  HloOpcode opcode = instruction.opcode();
  const Literal& first = *operands[0];
  PrimitiveType type = first.element_type();
  switch (opcode) {
    case HloOpcode::kCopy:
      return CopyValue(first, out);
    case HloOpcode::kConvert:
      return EvaluateConvert(first, out);
    case HloOpcode::kBitcastConvert:
      return EvaluateBitcastConvert(first, out);
    case HloOpcode::kCompare:
      return EvaluateCompare(instruction, first, *operands[1], out);
    case HloOpcode::kSelect:
      return Select(first, *operands[1], *operands[2], out);
    case HloOpcode::kClamp:
      return Clamp(first, *operands[1], *operands[2], out);
    case HloOpcode::kComplex:
      return EvaluateComplexBinary(opcode, first, *operands[1], out);
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      if (!IsComplex(type)) return RealOrImagOfReal(opcode, first, out);
      break;
    default:
      break;
  }
  bool unary = IsUnaryElementwise(opcode);
  if (IsComplex(type)) {
    return unary ? EvaluateComplexUnary(opcode, first, out)
                 : EvaluateComplexBinary(opcode, first, *operands[1], out);
  }
  if (IsFloatingPoint(type)) {
    return unary ? EvaluateFloatUnary(instruction, first, out)
                 : EvaluateFloatBinary(opcode, first, *operands[1], out);
  }
  if (IsIntegral(type) || type == PrimitiveType::kPred) {
    return unary ? EvaluateIntUnary(opcode, first, out)
                 : EvaluateIntBinary(opcode, first, *operands[1], out);
  }
  return UnsupportedOp(opcode, type);
}

// Shape inference guarantees all of this; checking it here keeps a bad caller from
// turning into out-of-bounds reads in the typed loops.
Status CheckOperands(const HloInstruction& instruction, Operands operands) {
  HloOpcode opcode = instruction.opcode();
  size_t arity = IsBinaryElementwise(opcode) ? 2 : IsTernaryElementwise(opcode) ? 3 : 1;
  if (operands.size() != arity) {
    return MakeError(ErrorCode::kInternal, std::string(HloOpcodeName(opcode)) + " got " +
                                               std::to_string(operands.size()) + " operands");
  }
  if (opcode == HloOpcode::kCopy) {
    if (!operands[0]->shape().EqualsIgnoringLayout(instruction.shape())) {
      return MakeError(ErrorCode::kInternal, "copy operand and result shapes differ");
    }
    return OkStatus();
  }
  if (!instruction.shape().IsArray()) {
    return MakeError(ErrorCode::kInternal, "elementwise result is not an array");
  }
  int64_t count = instruction.shape().ElementCount();
  for (size_t i = 0; i < operands.size(); ++i) {
    const Literal* operand = operands[i];
    // select's predicate and clamp's bounds may be scalars.
    bool may_be_scalar =
        (opcode == HloOpcode::kSelect && i == 0) || (opcode == HloOpcode::kClamp && i != 1);
    bool matches = operand->shape().IsArray() && (operand->element_count() == count ||
                                                  (may_be_scalar && operand->shape().rank() == 0) ||
                                                  opcode == HloOpcode::kBitcastConvert);
    if (!matches) {
      return MakeError(ErrorCode::kInternal, "operand " + ShapeToStringNoLayout(operand->shape()) +
                                                 " does not fit result " +
                                                 ShapeToStringNoLayout(instruction.shape()));
    }
  }
  return OkStatus();
}

}  // namespace

std::unexpected<Error> UnsupportedOp(HloOpcode opcode, PrimitiveType type) {
  return Unimplemented("the evaluator does not support " + std::string(HloOpcodeName(opcode)) +
                       " on " + std::string(PrimitiveTypeName(type)));
}

Narrow8Codec MakeNarrow8Codec(PrimitiveType type) {
  constexpr size_t kTypes = static_cast<size_t>(PrimitiveType::kTuple) + 1;
  static std::array<std::once_flag, kTypes> once;
  static std::array<std::unique_ptr<Narrow8Tables>, kTypes> tables;
  size_t index = static_cast<size_t>(type);
  std::call_once(once[index], [&] { tables[index] = BuildNarrow8Tables(type); });
  return {tables[index]->decode.data(), tables[index]->encode.data()};
}

Expected<Literal> EvaluateElementwise(const HloInstruction& instruction, Operands operands,
                                      const Context& context) {
  if (instruction.opcode() == HloOpcode::kStochasticConvert) {
    return Unimplemented("the evaluator does not support stochastic-convert");
  }
  TS_RETURN_IF_ERROR(CheckOperands(instruction, operands));
  TS_ASSIGN_OR_RETURN(Literal out, context.Allocate(instruction.shape()));
  TS_RETURN_IF_ERROR(EvaluateInto(instruction, operands, out));
  return out;
}

}  // namespace tilesmith::hlo::eval
