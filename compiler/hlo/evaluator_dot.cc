// dot: operands are converted to the accumulation type and packed as [batch, free,
// contracting] (lhs) and [batch, contracting, free] (rhs), multiplied with the contracting
// index innermost in increasing order, and rounded once to the result type.
#include <algorithm>
#include <complex>
#include <cstring>

#include "compiler/hlo/evaluator_index.h"
#include "compiler/hlo/evaluator_ops.h"
#include "compiler/hlo/float_types.h"

namespace tilesmith::hlo::eval {
namespace {

template <typename T>
T LoadAt(const uint8_t* data, int64_t i) {
  T value;
  std::memcpy(&value, data + i * sizeof(T), sizeof(T));
  return value;
}

// Converts `count` elements of `type`, element i at src[i * stride], into Acc.
template <typename Acc>
void ConvertRow(PrimitiveType type, const uint8_t* src, int64_t stride, int64_t count, Acc* dst) {
  auto convert = [&](auto load) {
    for (int64_t i = 0; i < count; ++i) {
      auto value = load(i * stride);
      if constexpr (std::is_same_v<Acc, std::complex<double>>) {
        dst[i] = Acc(value);
      } else if constexpr (std::is_arithmetic_v<decltype(value)>) {
        // A real accumulator never sees complex operands: the accumulator is complex then.
        dst[i] = static_cast<Acc>(value);
      }
    }
  };
  switch (type) {
    case PrimitiveType::kPred:
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
    case PrimitiveType::kU8:
      return convert([&](int64_t i) { return src[i]; });
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kS8:
      return convert([&](int64_t i) { return static_cast<int8_t>(src[i]); });
    case PrimitiveType::kS16:
      return convert([&](int64_t i) { return LoadAt<int16_t>(src, i); });
    case PrimitiveType::kU16:
      return convert([&](int64_t i) { return LoadAt<uint16_t>(src, i); });
    case PrimitiveType::kS32:
      return convert([&](int64_t i) { return LoadAt<int32_t>(src, i); });
    case PrimitiveType::kU32:
      return convert([&](int64_t i) { return LoadAt<uint32_t>(src, i); });
    case PrimitiveType::kS64:
      return convert([&](int64_t i) { return LoadAt<int64_t>(src, i); });
    case PrimitiveType::kU64:
      return convert([&](int64_t i) { return LoadAt<uint64_t>(src, i); });
    case PrimitiveType::kF32:
      return convert([&](int64_t i) { return LoadAt<float>(src, i); });
    case PrimitiveType::kF64:
      return convert([&](int64_t i) { return LoadAt<double>(src, i); });
    case PrimitiveType::kBF16:
      return convert([&](int64_t i) { return Bf16BitsToFloat(LoadAt<uint16_t>(src, i)); });
    case PrimitiveType::kF16:
      return convert([&](int64_t i) { return F16BitsToFloat(LoadAt<uint16_t>(src, i)); });
    case PrimitiveType::kC64:
      return convert([&](int64_t i) {
        auto value = LoadAt<std::complex<float>>(src, i);
        return std::complex<double>(value.real(), value.imag());
      });
    case PrimitiveType::kC128:
      return convert([&](int64_t i) { return LoadAt<std::complex<double>>(src, i); });
    default:  // the f8 and f4 types, one byte each
      return convert([&](int64_t i) { return DecodeNarrowFloat(type, src[i]); });
  }
}

// Dimension groups of a dot operand: batch, free (in dimension order) and contracting.
struct OperandDims {
  std::vector<int64_t> batch;
  std::vector<int64_t> free;
  std::vector<int64_t> contracting;
};

OperandDims Classify(const Shape& shape, const std::vector<int64_t>& batch,
                     const std::vector<int64_t>& contracting) {
  OperandDims dims{batch, {}, contracting};
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      dims.free.push_back(d);
    }
  }
  return dims;
}

// The element type whose literals hold Acc values, so scratch arrays are allocated through
// the context and count against its memory limit.
template <typename Acc>
constexpr PrimitiveType kAccumulatorType = std::is_same_v<Acc, float>    ? PrimitiveType::kF32
                                           : std::is_same_v<Acc, double> ? PrimitiveType::kF64
                                           : std::is_integral_v<Acc>     ? PrimitiveType::kS64
                                                                         : PrimitiveType::kC128;

// Copies `literal` converted to Acc into a row-major array over the concatenation of
// `groups` of its dimensions.
template <typename Acc>
Expected<Literal> Pack(const Literal& literal,
                       std::initializer_list<const std::vector<int64_t>*> groups,
                       const Context& context) {
  const Shape& shape = literal.shape();
  std::vector<int64_t> order;
  for (const std::vector<int64_t>* group : groups) {
    order.insert(order.end(), group->begin(), group->end());
  }
  std::vector<int64_t> dims;
  for (int64_t d : order) dims.push_back(shape.dim(d));
  TS_ASSIGN_OR_RETURN(Literal packed, context.Allocate(Shape::Array(kAccumulatorType<Acc>, dims)));
  std::vector<int64_t> packed_strides = RowMajorStrides(dims);
  std::vector<int64_t> strides = RowMajorStrides(shape.dims());
  Walk walk;
  for (size_t i = 0; i < order.size(); ++i) walk.Add(dims[i], packed_strides[i], strides[order[i]]);
  Acc* to = packed.data<Acc>();
  const uint8_t* from = literal.bytes().data();
  const int64_t bytes = literal.element_bytes();
  ForEachRow(walk, [&](int64_t a, int64_t b, int64_t count, int64_t a_stride, int64_t b_stride) {
    // The packed order is contiguous only along a; convert element by element otherwise.
    if (a_stride == 1) {
      ConvertRow(literal.element_type(), from + b * bytes, b_stride, count, to + a);
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      ConvertRow(literal.element_type(), from + (b + i * b_stride) * bytes, 0, 1,
                 to + a + i * a_stride);
    }
  });
  return packed;
}

int64_t Product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t d : dims) product *= shape.dim(d);
  return product;
}

// Integers multiply and add modulo 2^64, which wraps correctly to any narrower result.
template <typename Acc>
Acc MultiplyAdd(Acc sum, Acc a, Acc b) {
  if constexpr (std::is_integral_v<Acc>) {
    auto product = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
    return static_cast<Acc>(static_cast<uint64_t>(sum) + product);
  } else {
    Acc product = a * b;
    return sum + product;
  }
}

template <typename Acc>
void StoreResult(Literal& result, int64_t i, Acc value) {
  if constexpr (std::is_same_v<Acc, std::complex<double>>) {
    result.SetComplex(i, value);
  } else if constexpr (std::is_integral_v<Acc>) {
    result.SetInt(i, value);
  } else if (result.element_type() == PrimitiveType::kF32) {
    const float stored = static_cast<float>(value);
    std::memcpy(result.bytes().data() + i * sizeof(float), &stored, sizeof(float));
  } else {
    result.SetDouble(i, static_cast<double>(value));  // rounds once to the result type
  }
}

template <typename Acc>
Status Multiply(const Literal& lhs, const Literal& rhs, const DotDimensions& numbers,
                const Context& context, Literal& result) {
  OperandDims l = Classify(lhs.shape(), numbers.lhs_batch, numbers.lhs_contracting);
  OperandDims r = Classify(rhs.shape(), numbers.rhs_batch, numbers.rhs_contracting);
  const int64_t batch = Product(lhs.shape(), l.batch);
  const int64_t m = Product(lhs.shape(), l.free);
  const int64_t k = Product(lhs.shape(), l.contracting);
  const int64_t n = Product(rhs.shape(), r.free);
  TS_ASSIGN_OR_RETURN(Literal packed_lhs,
                      Pack<Acc>(lhs, {&l.batch, &l.free, &l.contracting}, context));
  TS_ASSIGN_OR_RETURN(Literal packed_rhs,
                      Pack<Acc>(rhs, {&r.batch, &r.contracting, &r.free}, context));
  TS_ASSIGN_OR_RETURN(Literal sums,
                      context.Allocate(Shape::Array(kAccumulatorType<Acc>, {batch * m * n})));
  const Acc* a = packed_lhs.data<Acc>();
  const Acc* b = packed_rhs.data<Acc>();
  Acc* sum = sums.data<Acc>();
  for (int64_t g = 0; g < batch; ++g) {
    for (int64_t i = 0; i < m; ++i) {
      Acc* out = sum + (g * m + i) * n;
      const Acc* lhs_row = a + (g * m + i) * k;
      for (int64_t c = 0; c < k; ++c) {
        const Acc x = lhs_row[c];
        const Acc* rhs_row = b + (g * k + c) * n;
        for (int64_t j = 0; j < n; ++j) out[j] = MultiplyAdd(out[j], x, rhs_row[j]);
      }
    }
  }
  for (int64_t i = 0; i < batch * m * n; ++i) StoreResult(result, i, sum[i]);
  return OkStatus();
}

}  // namespace

Expected<Literal> EvaluateDot(const HloInstruction& instruction, Operands operands,
                              const Context& context) {
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(instruction.shape()));
  DotDimensions numbers = instruction.attributes().dot.value_or(DotDimensions{});
  PrimitiveType types[] = {lhs.element_type(), rhs.element_type(), result.element_type()};
  auto any = [&](auto predicate) {
    return std::any_of(std::begin(types), std::end(types), predicate);
  };
  if (any([](PrimitiveType t) { return IsComplex(t); })) {
    TS_RETURN_IF_ERROR(Multiply<std::complex<double>>(lhs, rhs, numbers, context, result));
  } else if (any([](PrimitiveType t) { return t == PrimitiveType::kF64; })) {
    TS_RETURN_IF_ERROR(Multiply<double>(lhs, rhs, numbers, context, result));
  } else if (any([](PrimitiveType t) { return IsFloatingPoint(t); })) {
    TS_RETURN_IF_ERROR(Multiply<float>(lhs, rhs, numbers, context, result));
  } else {
    TS_RETURN_IF_ERROR(Multiply<int64_t>(lhs, rhs, numbers, context, result));
  }
  return result;
}

}  // namespace tilesmith::hlo::eval
