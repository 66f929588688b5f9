#include "compiler/hlo/evaluator_combiner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

#include "compiler/hlo/float_types.h"
#include "compiler/hlo/hlo_module.h"

namespace tilesmith::hlo::eval {
namespace {

enum class FastOp { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor };

// Signed overflow is undefined in C++; two's complement wrapping is what HLO integers do.
template <typename T>
T WrappingAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}

template <typename T>
T WrappingMultiply(T a, T b) {
  // Promote to at least unsigned int so that u16 * u16 cannot overflow a signed int.
  using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// NaN wins, and -0 orders below +0 (IEEE 754-2019 maximum/minimum), so the result does not
// depend on the operand order.
template <typename T>
T FloatMaximum(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

template <typename T>
T FloatMinimum(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

template <FastOp kOp, typename C>
C Apply(C a, C b) {
  if constexpr (kOp == FastOp::kAdd) {
    if constexpr (std::is_integral_v<C>)
      return WrappingAdd(a, b);
    else
      return a + b;
  } else if constexpr (kOp == FastOp::kMultiply) {
    if constexpr (std::is_integral_v<C>)
      return WrappingMultiply(a, b);
    else
      return a * b;
  } else if constexpr (kOp == FastOp::kMaximum) {
    if constexpr (std::is_floating_point_v<C>)
      return FloatMaximum(a, b);
    else
      return std::max(a, b);
  } else if constexpr (kOp == FastOp::kMinimum) {
    if constexpr (std::is_floating_point_v<C>)
      return FloatMinimum(a, b);
    else
      return std::min(a, b);
  } else if constexpr (kOp == FastOp::kAnd) {
    return static_cast<C>(a & b);
  } else if constexpr (kOp == FastOp::kOr) {
    return static_cast<C>(a | b);
  } else {
    return static_cast<C>(a ^ b);
  }
}

// A codec reads elements of one storage type into the type computed in, writes them back
// (rounding or wrapping to the storage type), and says which ops the type supports.
template <typename S, typename C = S>
struct MemCodec {
  using Compute = C;
  C Load(const uint8_t* p, int64_t i) const {
    S value;
    std::memcpy(&value, p + i * sizeof(S), sizeof(S));
    return static_cast<C>(value);
  }
  void Store(uint8_t* p, int64_t i, C value) const {
    S stored = static_cast<S>(value);
    std::memcpy(p + i * sizeof(S), &stored, sizeof(S));
  }
  C Round(C value) const { return value; }
};

template <typename T>
struct FloatCodec : MemCodec<T> {
  static constexpr bool kArithmetic = true, kOrdered = true, kBitwise = false;
};

template <typename T>
struct ComplexCodec : MemCodec<T> {
  static constexpr bool kArithmetic = true, kOrdered = false, kBitwise = false;
};

template <typename T>
struct IntCodec : MemCodec<T> {
  static constexpr bool kArithmetic = true, kOrdered = true, kBitwise = true;
};

// pred is stored as 0/1 bytes: and/or/xor (and max/min, which are or/and) stay in {0, 1}.
struct PredCodec : MemCodec<uint8_t> {
  static constexpr bool kArithmetic = false, kOrdered = true, kBitwise = true;
};

// s1..s4 / u1..u4 live sign- or zero-extended in a byte; results wrap to the type's width.
struct SubByteIntCodec {
  using Compute = int64_t;
  static constexpr bool kArithmetic = true, kOrdered = true, kBitwise = true;
  PrimitiveType type;
  int64_t Load(const uint8_t* p, int64_t i) const {
    return IsSignedIntegral(type) ? static_cast<int8_t>(p[i]) : p[i];
  }
  void Store(uint8_t* p, int64_t i, int64_t value) const {
    p[i] = static_cast<uint8_t>(WrapToIntegerType(type, value));
  }
  int64_t Round(int64_t value) const { return WrapToIntegerType(type, value); }
};

struct Bf16Codec {
  using Compute = float;
  static constexpr bool kArithmetic = true, kOrdered = true, kBitwise = false;
  float Load(const uint8_t* p, int64_t i) const {
    uint16_t bits;
    std::memcpy(&bits, p + 2 * i, 2);
    return Bf16BitsToFloat(bits);
  }
  void Store(uint8_t* p, int64_t i, float value) const {
    uint16_t bits = FloatToBf16Bits(value);
    std::memcpy(p + 2 * i, &bits, 2);
  }
  float Round(float value) const { return Bf16BitsToFloat(FloatToBf16Bits(value)); }
};

struct F16Codec {
  using Compute = float;
  static constexpr bool kArithmetic = true, kOrdered = true, kBitwise = false;
  float Load(const uint8_t* p, int64_t i) const {
    uint16_t bits;
    std::memcpy(&bits, p + 2 * i, 2);
    return F16BitsToFloat(bits);
  }
  void Store(uint8_t* p, int64_t i, float value) const {
    uint16_t bits = FloatToF16Bits(value);
    std::memcpy(p + 2 * i, &bits, 2);
  }
  float Round(float value) const { return F16BitsToFloat(FloatToF16Bits(value)); }
};

// The f8 and f4 types: one byte each, decoded through a table.
struct ByteFloatCodec {
  using Compute = float;
  static constexpr bool kArithmetic = true, kOrdered = true, kBitwise = false;
  PrimitiveType type;
  std::array<float, 256> decoded;
  explicit ByteFloatCodec(PrimitiveType t) : type(t) {
    const uint32_t patterns = uint32_t{1} << BitWidth(t);
    decoded.fill(0.0f);
    for (uint32_t bits = 0; bits < patterns; ++bits) decoded[bits] = DecodeNarrowFloat(t, bits);
  }
  float Load(const uint8_t* p, int64_t i) const { return decoded[p[i]]; }
  void Store(uint8_t* p, int64_t i, float value) const {
    p[i] = static_cast<uint8_t>(EncodeNarrowFloat(type, value));
  }
  float Round(float value) const { return RoundToNarrowFloat(type, value); }
};

template <FastOp kOp, typename Codec>
Combiner::RowFn BindRow(Codec codec) {
  return [codec](uint8_t* acc, int64_t acc_stride, const uint8_t* values, int64_t value_stride,
                 int64_t count) {
    if (acc_stride == 0) {
      // One accumulator: keep it in a register, rounding as storing it would.
      typename Codec::Compute a = codec.Load(acc, 0);
      for (int64_t i = 0; i < count; ++i) {
        a = codec.Round(Apply<kOp>(a, codec.Load(values, i * value_stride)));
      }
      codec.Store(acc, 0, a);
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      codec.Store(
          acc, i * acc_stride,
          Apply<kOp>(codec.Load(acc, i * acc_stride), codec.Load(values, i * value_stride)));
    }
  };
}

template <typename Codec>
Combiner::RowFn MakeRowFor(Codec codec, HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAdd:
      if constexpr (Codec::kArithmetic) return BindRow<FastOp::kAdd>(codec);
      break;
    case HloOpcode::kMultiply:
      if constexpr (Codec::kArithmetic) return BindRow<FastOp::kMultiply>(codec);
      break;
    case HloOpcode::kMaximum:
      if constexpr (Codec::kOrdered) return BindRow<FastOp::kMaximum>(codec);
      break;
    case HloOpcode::kMinimum:
      if constexpr (Codec::kOrdered) return BindRow<FastOp::kMinimum>(codec);
      break;
    case HloOpcode::kAnd:
      if constexpr (Codec::kBitwise) return BindRow<FastOp::kAnd>(codec);
      break;
    case HloOpcode::kOr:
      if constexpr (Codec::kBitwise) return BindRow<FastOp::kOr>(codec);
      break;
    case HloOpcode::kXor:
      if constexpr (Codec::kBitwise) return BindRow<FastOp::kXor>(codec);
      break;
    default:
      break;
  }
  return nullptr;
}

// The typed loop for `opcode` on `type`, or null where the combination has none.
Combiner::RowFn MakeRow(PrimitiveType type, HloOpcode opcode) {
  switch (type) {
    case PrimitiveType::kPred:
      return MakeRowFor(PredCodec{}, opcode);
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
      return MakeRowFor(SubByteIntCodec{type}, opcode);
    case PrimitiveType::kS8:
      return MakeRowFor(IntCodec<int8_t>{}, opcode);
    case PrimitiveType::kS16:
      return MakeRowFor(IntCodec<int16_t>{}, opcode);
    case PrimitiveType::kS32:
      return MakeRowFor(IntCodec<int32_t>{}, opcode);
    case PrimitiveType::kS64:
      return MakeRowFor(IntCodec<int64_t>{}, opcode);
    case PrimitiveType::kU8:
      return MakeRowFor(IntCodec<uint8_t>{}, opcode);
    case PrimitiveType::kU16:
      return MakeRowFor(IntCodec<uint16_t>{}, opcode);
    case PrimitiveType::kU32:
      return MakeRowFor(IntCodec<uint32_t>{}, opcode);
    case PrimitiveType::kU64:
      return MakeRowFor(IntCodec<uint64_t>{}, opcode);
    case PrimitiveType::kF32:
      return MakeRowFor(FloatCodec<float>{}, opcode);
    case PrimitiveType::kF64:
      return MakeRowFor(FloatCodec<double>{}, opcode);
    case PrimitiveType::kBF16:
      return MakeRowFor(Bf16Codec{}, opcode);
    case PrimitiveType::kF16:
      return MakeRowFor(F16Codec{}, opcode);
    case PrimitiveType::kC64:
      return MakeRowFor(ComplexCodec<std::complex<float>>{}, opcode);
    case PrimitiveType::kC128:
      return MakeRowFor(ComplexCodec<std::complex<double>>{}, opcode);
    default:
      if (IsNarrowFloat(type)) return MakeRowFor(ByteFloatCodec(type), opcode);
      return nullptr;
  }
}

bool IsParameter(const HloInstruction* instruction, int64_t number) {
  return instruction->opcode() == HloOpcode::kParameter &&
         instruction->parameter_number() == number;
}

// The typed loop when the reducer's root is op(acc, x) or op(x, acc) of its parameters (every
// op with a loop is commutative); null otherwise.
Combiner::RowFn FastRowFor(const HloComputation& to_apply,
                           std::span<const PrimitiveType> accumulator_types,
                           std::span<const PrimitiveType> value_types) {
  if (accumulator_types.size() != 1 || accumulator_types[0] != value_types[0]) return nullptr;
  const HloInstruction* root = to_apply.root();
  if (to_apply.parameter_count() != 2 || root->operand_count() != 2) return nullptr;
  const HloInstruction* lhs = root->operand(0);
  const HloInstruction* rhs = root->operand(1);
  if (!(IsParameter(lhs, 0) && IsParameter(rhs, 1)) &&
      !(IsParameter(lhs, 1) && IsParameter(rhs, 0))) {
    return nullptr;
  }
  const Shape& shape = root->shape();
  if (!shape.IsArray() || shape.rank() != 0 || shape.element_type() != accumulator_types[0]) {
    return nullptr;
  }
  return MakeRow(accumulator_types[0], root->opcode());
}

}  // namespace

Expected<Combiner> Combiner::Create(const HloComputation& to_apply,
                                    std::span<const PrimitiveType> accumulator_types,
                                    std::span<const PrimitiveType> value_types,
                                    const Context& context) {
  if (accumulator_types.size() != value_types.size() ||
      to_apply.parameter_count() != static_cast<int64_t>(2 * accumulator_types.size())) {
    return InvalidArgument("reducer '" + to_apply.name() + "' takes " +
                           std::to_string(to_apply.parameter_count()) + " parameters, not " +
                           std::to_string(2 * accumulator_types.size()));
  }
  Combiner combiner(to_apply, context);
  combiner.row_ = FastRowFor(to_apply, accumulator_types, value_types);
  if (combiner.row_) return combiner;
  for (PrimitiveType type : accumulator_types) combiner.scalars_.emplace_back(Shape::Scalar(type));
  for (PrimitiveType type : value_types) combiner.scalars_.emplace_back(Shape::Scalar(type));
  return combiner;
}

Status Combiner::Combine(std::span<Literal> accumulators, int64_t acc, int64_t acc_stride,
                         std::span<const Literal* const> values, int64_t value,
                         int64_t value_stride, int64_t count) {
  if (!row_) {
    return CombineByCalls(accumulators, acc, acc_stride, values, value, value_stride, count);
  }
  const int64_t bytes = accumulators[0].element_bytes();
  row_(accumulators[0].bytes().data() + acc * bytes, acc_stride,
       values[0]->bytes().data() + value * bytes, value_stride, count);
  return OkStatus();
}

Status Combiner::CombineByCalls(std::span<Literal> accumulators, int64_t acc, int64_t acc_stride,
                                std::span<const Literal* const> values, int64_t value,
                                int64_t value_stride, int64_t count) {
  const size_t n = accumulators.size();
  std::vector<const Literal*> arguments;
  for (const Literal& scalar : scalars_) arguments.push_back(&scalar);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t a = acc + i * acc_stride;
    const int64_t v = value + i * value_stride;
    for (size_t k = 0; k < n; ++k) {
      const int64_t acc_bytes = accumulators[k].element_bytes();
      const int64_t value_bytes = values[k]->element_bytes();
      std::memcpy(scalars_[k].bytes().data(), accumulators[k].bytes().data() + a * acc_bytes,
                  acc_bytes);
      std::memcpy(scalars_[n + k].bytes().data(), values[k]->bytes().data() + v * value_bytes,
                  value_bytes);
    }
    TS_ASSIGN_OR_RETURN(Literal result, context_->Call(*to_apply_, arguments));
    std::span<const Literal> outputs =
        n == 1 ? std::span<const Literal>(&result, 1) : result.tuple_elements();
    for (size_t k = 0; k < n; ++k) {
      const int64_t acc_bytes = accumulators[k].element_bytes();
      if (k >= outputs.size() || outputs[k].element_type() != accumulators[k].element_type() ||
          static_cast<int64_t>(outputs[k].bytes().size()) != acc_bytes) {
        return InvalidArgument("reducer '" + to_apply_->name() + "' returned " +
                               ShapeToString(result.shape()) +
                               " instead of its accumulator scalars");
      }
      std::memcpy(accumulators[k].bytes().data() + a * acc_bytes, outputs[k].bytes().data(),
                  acc_bytes);
    }
  }
  return OkStatus();
}

}  // namespace tilesmith::hlo::eval
