// convert and bitcast-convert.
//
// convert reads each element as a carrier that holds every value of its class exactly
// (int64_t or uint64_t for integers and pred, float or double for real floats) and writes
// the carrier to the result type, rounding or saturating once: floats to integers
// truncate toward zero, saturate, and send NaN to 0; integers to floats round to nearest
// even; anything to pred is `x != 0`; a real value becomes (x, 0) as a complex.
#include <algorithm>

#include "compiler/hlo/evaluator_elementwise.h"

namespace tilesmith::hlo::eval {
namespace {

template <typename T>
struct IntReader {
  using Storage = T;
  auto operator()(T x) const {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<int64_t>(x);
    } else {
      return static_cast<uint64_t>(x);
    }
  }
};

template <typename Codec>
struct FloatReader {
  using Storage = typename Codec::Storage;
  Codec codec;
  auto operator()(Storage x) const { return codec.Decode(x); }
};

// An integer as a double that any format of at most 51 significant bits rounds exactly
// as it would round the integer: past 2^53 the dropped bits fold into the lowest kept
// bit (round to odd), so the one later rounding sees ties and near-ties correctly.
template <typename I>
double RoundToOddDouble(I value) {
  bool negative = false;
  if constexpr (std::is_signed_v<I>) negative = value < 0;
  uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  int excess = std::bit_width(magnitude) - 53;
  double result = static_cast<double>(magnitude);
  if (excess > 0) {
    uint64_t kept = magnitude >> excess;
    if ((magnitude & ((uint64_t{1} << excess) - 1)) != 0) kept |= 1;
    result = std::ldexp(static_cast<double>(kept), excess);
  }
  return negative ? -result : result;
}

template <typename T>
struct IntWriter {
  using Storage = T;
  IntType<T> type;

  template <typename V>
  T operator()(V value) const {
    if constexpr (std::is_integral_v<V>) {
      return type.Wrap(static_cast<uint64_t>(value));
    } else {
      return Saturate(static_cast<double>(value));
    }
  }

  T Saturate(double value) const {
    if (std::isnan(value)) return 0;
    double truncated = std::trunc(value);
    // The bounds are powers of two, exact in a double even for 64-bit types.
    if constexpr (std::is_signed_v<T>) {
      double limit = std::ldexp(1.0, type.bits - 1);
      if (truncated < -limit) truncated = -limit;
      if (truncated >= limit) return type.Wrap(static_cast<uint64_t>(limit) - 1);
      return static_cast<T>(static_cast<int64_t>(truncated));
    } else {
      double limit = std::ldexp(1.0, type.bits);
      if (truncated <= 0) return 0;
      if (truncated >= limit) return type.Wrap(~uint64_t{0});
      return static_cast<T>(static_cast<uint64_t>(truncated));
    }
  }
};

struct PredWriter {
  using Storage = uint8_t;
  template <typename V>
  uint8_t operator()(V value) const {
    return value != V{0} ? 1 : 0;
  }
};

template <typename Codec>
struct FloatWriter {
  using Storage = typename Codec::Storage;
  using Value = typename Codec::Value;
  Codec codec;
  PrimitiveType type;

  template <typename V>
  Storage operator()(V value) const {
    constexpr bool kNarrow = !std::is_same_v<Codec, IdentityCodec<Value>>;
    if constexpr (std::is_integral_v<V> && kNarrow) {
      // Small integers are exact in f32 and take the fast encoder.
      bool small = value <= V{1 << 24};
      if constexpr (std::is_signed_v<V>) small = small && value >= -V{1 << 24};
      if (small) return codec.Encode(static_cast<float>(value));
      return static_cast<Storage>(EncodeNarrowFloatFromDouble(type, RoundToOddDouble(value)));
    } else if constexpr (std::is_same_v<V, double> && kNarrow) {
      return static_cast<Storage>(EncodeNarrowFloatFromDouble(type, value));
    } else {
      // Exact, or the single correctly rounded C++ conversion (to f32 or f64).
      return codec.Encode(static_cast<Value>(value));
    }
  }
};

template <typename R>
struct ComplexWriter {
  using Storage = std::complex<R>;
  template <typename V>
  Storage operator()(V value) const {
    return {static_cast<R>(value), R{0}};
  }
};

// Calls fn(reader) for a real (non-complex) element type.
template <typename Fn>
Status VisitReader(PrimitiveType type, Fn&& fn) {
  if (IsFloatingPoint(type)) {
    return VisitFloatCodec(type, [&](const auto& codec) {
      return fn(FloatReader<std::decay_t<decltype(codec)>>{codec});
    });
  }
  return VisitIntType(
      type, [&](auto int_type) { return fn(IntReader<typename decltype(int_type)::Storage>{}); });
}

template <typename Fn>
Status VisitWriter(PrimitiveType type, Fn&& fn) {
  switch (type) {
    case PrimitiveType::kPred:
      return fn(PredWriter{});
    case PrimitiveType::kC64:
      return fn(ComplexWriter<float>{});
    case PrimitiveType::kC128:
      return fn(ComplexWriter<double>{});
    default:
      break;
  }
  if (IsFloatingPoint(type)) {
    return VisitFloatCodec(type, [&](const auto& codec) {
      return fn(FloatWriter<std::decay_t<decltype(codec)>>{codec, type});
    });
  }
  return VisitIntType(type, [&](auto int_type) {
    return fn(IntWriter<typename decltype(int_type)::Storage>{int_type});
  });
}

template <typename From, typename To>
void ConvertComplex(const Literal& in, Literal& out) {
  MapElements<From, To>(in, out, [](From x) { return To(x); });
}

// ---------------------------------------------------------------------------------------
// bitcast-convert of sub-byte types: the operand is a little-endian bit stream, element
// after element, which the result re-reads in its own width.

// Reads `count` bits at `offset` of the stream; they never straddle a byte or element.
uint32_t ReadStreamBits(const Literal& literal, int64_t offset, int count) {
  int width = BitWidth(literal.element_type());
  uint64_t word = width % 8 == 0 ? literal.bytes()[offset / 8] >> (offset % 8)
                                 : literal.GetBits(offset / width) >> (offset % width);
  return static_cast<uint32_t>(word & ((1u << count) - 1));
}

// ORs `bits` in at `offset` of a zero-initialized stream.
void WriteStreamBits(Literal& literal, int64_t offset, uint32_t bits) {
  int width = BitWidth(literal.element_type());
  if (width % 8 == 0) {
    literal.bytes()[offset / 8] |= static_cast<uint8_t>(bits << (offset % 8));
    return;
  }
  int64_t element = offset / width;
  literal.SetBits(element, literal.GetBits(element) | uint64_t{bits} << (offset % width));
}

}  // namespace

Status EvaluateConvert(const Literal& operand, Literal& out) {
  PrimitiveType from = operand.element_type();
  PrimitiveType to = out.element_type();
  if (from == to) {
    std::ranges::copy(operand.bytes(), out.bytes().begin());
    return OkStatus();
  }
  if (IsComplex(from)) {
    if (to == PrimitiveType::kC64) {
      ConvertComplex<std::complex<double>, std::complex<float>>(operand, out);
    } else if (to == PrimitiveType::kC128) {
      ConvertComplex<std::complex<float>, std::complex<double>>(operand, out);
    } else {
      return Unimplemented("convert from " + std::string(PrimitiveTypeName(from)) + " to " +
                           std::string(PrimitiveTypeName(to)) +
                           " would drop the imaginary part; use real or imag");
    }
    return OkStatus();
  }
  return VisitReader(from, [&](auto reader) {
    return VisitWriter(to, [&](auto writer) -> Status {
      using In = typename decltype(reader)::Storage;
      using Out = typename decltype(writer)::Storage;
      MapElements<In, Out>(operand, out, [&](In x) { return writer(reader(x)); });
      return OkStatus();
    });
  });
}

Status EvaluateBitcastConvert(const Literal& operand, Literal& out) {
  PrimitiveType from = operand.element_type();
  PrimitiveType to = out.element_type();
  if (from == PrimitiveType::kPred || to == PrimitiveType::kPred) {
    return UnsupportedOp(HloOpcode::kBitcastConvert, PrimitiveType::kPred);
  }
  int from_bits = BitWidth(from);
  int to_bits = BitWidth(to);
  int64_t total_bits = operand.element_count() * from_bits;
  if (total_bits != out.element_count() * to_bits) {
    return MakeError(ErrorCode::kInternal, "bitcast-convert sizes differ");
  }
  if (from_bits % 8 == 0 && to_bits % 8 == 0) {
    // Whole-byte types are stored as their little-endian bytes, so the logical-order
    // buffers hold the same bytes: pieces low-order first, as XLA splits them.
    std::ranges::copy(operand.bytes(), out.bytes().begin());
    return OkStatus();
  }
  int chunk = std::min(from_bits, to_bits);  // 1, 2 or 4, dividing both widths
  for (int64_t offset = 0; offset < total_bits; offset += chunk) {
    WriteStreamBits(out, offset, ReadStreamBits(operand, offset, chunk));
  }
  return OkStatus();
}

}  // namespace tilesmith::hlo::eval
