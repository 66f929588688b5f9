#include "compiler/hlo/literal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "compiler/hlo/float_types.h"

namespace tilesmith::hlo {
namespace {

template <typename T>
T Load(const std::vector<uint8_t>& data, int64_t i) {
  T value;
  std::memcpy(&value, data.data() + i * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void Store(std::vector<uint8_t>& data, int64_t i, T value) {
  std::memcpy(data.data() + i * sizeof(T), &value, sizeof(T));
}

std::string FloatText(double value, bool is_double) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  std::to_chars_result result =
      is_double ? std::to_chars(buffer, buffer + sizeof(buffer), value)
                : std::to_chars(buffer, buffer + sizeof(buffer), static_cast<float>(value));
  return std::string(buffer, result.ptr);
}

}  // namespace

int64_t WrapToIntegerType(PrimitiveType type, int64_t value) {
  int bits = BitWidth(type);
  if (type == PrimitiveType::kPred) return value != 0 ? 1 : 0;
  if (bits >= 64) return value;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t raw = static_cast<uint64_t>(value) & mask;
  if (IsSignedIntegral(type) && (raw >> (bits - 1)) != 0) raw |= ~mask;
  return static_cast<int64_t>(raw);
}

Literal::Literal(Shape shape) : shape_(std::move(shape)) {
  if (shape_.IsTuple()) {
    for (const Shape& element : shape_.tuple_elements()) tuple_.emplace_back(element);
  } else if (shape_.IsArray()) {
    int64_t count = std::max<int64_t>(shape_.ElementCount(), 0);  // unbounded: no storage
    data_.assign(static_cast<size_t>(count * element_bytes()), 0);
  }
}

uint64_t Literal::GetBits(int64_t i) const {
  int bits = BitWidth(element_type());
  switch (element_bytes()) {
    case 1: {
      uint64_t raw = data_[i];
      return bits < 8 ? raw & ((1u << bits) - 1) : raw;
    }
    case 2:
      return Load<uint16_t>(data_, i);
    case 4:
      return Load<uint32_t>(data_, i);
    case 8:
      return Load<uint64_t>(data_, i);
    default:
      return 0;  // c128 has no single bit pattern of 64 bits
  }
}

void Literal::SetBits(int64_t i, uint64_t bits) {
  PrimitiveType type = element_type();
  if (IsIntegral(type) || type == PrimitiveType::kPred) {
    // Keep the unpacked value sign-extended for narrow signed types.
    int width = BitWidth(type);
    uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    SetInt(i, WrapToIntegerType(type, static_cast<int64_t>(bits & mask)));
    return;
  }
  switch (element_bytes()) {
    case 1:
      data_[i] = static_cast<uint8_t>(bits);
      break;
    case 2:
      Store<uint16_t>(data_, i, static_cast<uint16_t>(bits));
      break;
    case 4:
      Store<uint32_t>(data_, i, static_cast<uint32_t>(bits));
      break;
    case 8:
      Store<uint64_t>(data_, i, bits);
      break;
    default:
      break;
  }
}

double Literal::GetDouble(int64_t i) const {
  PrimitiveType type = element_type();
  switch (type) {
    case PrimitiveType::kF32:
      return Load<float>(data_, i);
    case PrimitiveType::kF64:
      return Load<double>(data_, i);
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
      return GetComplex(i).real();
    case PrimitiveType::kU64:
      return static_cast<double>(static_cast<uint64_t>(GetInt(i)));
    default:
      if (IsNarrowFloat(type)) {
        return DecodeNarrowFloat(type, static_cast<uint32_t>(GetBits(i)));
      }
      return static_cast<double>(GetInt(i));
  }
}

int64_t Literal::GetInt(int64_t i) const {
  switch (element_type()) {
    case PrimitiveType::kPred:
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
    case PrimitiveType::kU8:
      return data_[i];
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kS8:
      return static_cast<int8_t>(data_[i]);
    case PrimitiveType::kS16:
      return Load<int16_t>(data_, i);
    case PrimitiveType::kU16:
      return Load<uint16_t>(data_, i);
    case PrimitiveType::kS32:
      return Load<int32_t>(data_, i);
    case PrimitiveType::kU32:
      return Load<uint32_t>(data_, i);
    case PrimitiveType::kS64:
    case PrimitiveType::kU64:
      return Load<int64_t>(data_, i);
    default:
      return static_cast<int64_t>(GetDouble(i));
  }
}

std::complex<double> Literal::GetComplex(int64_t i) const {
  switch (element_type()) {
    case PrimitiveType::kC64: {
      auto value = Load<std::complex<float>>(data_, i);
      return {value.real(), value.imag()};
    }
    case PrimitiveType::kC128:
      return Load<std::complex<double>>(data_, i);
    default:
      return {GetDouble(i), 0.0};
  }
}

void Literal::SetDouble(int64_t i, double value) {
  PrimitiveType type = element_type();
  switch (type) {
    case PrimitiveType::kF32:
      Store<float>(data_, i, static_cast<float>(value));
      return;
    case PrimitiveType::kF64:
      Store<double>(data_, i, value);
      return;
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
      SetComplex(i, {value, 0.0});
      return;
    default:
      if (IsNarrowFloat(type)) {
        SetBits(i, EncodeNarrowFloatFromDouble(type, value));
        return;
      }
      if (type == PrimitiveType::kPred) {
        data_[i] = value != 0 ? 1 : 0;
        return;
      }
      // Out-of-range float to int conversions are undefined in C++: clamp first.
      if (std::isnan(value)) value = 0;
      if (type == PrimitiveType::kU64) {
        value = std::clamp(value, 0.0, 18446744073709549568.0);
        SetInt(i, static_cast<int64_t>(static_cast<uint64_t>(value)));
        return;
      }
      SetInt(i, static_cast<int64_t>(
                    std::clamp(value, -9223372036854775808.0, 9223372036854774784.0)));
  }
}

void Literal::SetInt(int64_t i, int64_t value) {
  PrimitiveType type = element_type();
  if (!IsIntegral(type) && type != PrimitiveType::kPred) {
    SetDouble(i, static_cast<double>(value));
    return;
  }
  int64_t wrapped = WrapToIntegerType(type, value);
  switch (element_bytes()) {
    case 1:
      data_[i] = static_cast<uint8_t>(wrapped);
      break;
    case 2:
      Store<uint16_t>(data_, i, static_cast<uint16_t>(wrapped));
      break;
    case 4:
      Store<uint32_t>(data_, i, static_cast<uint32_t>(wrapped));
      break;
    default:
      Store<int64_t>(data_, i, wrapped);
      break;
  }
}

void Literal::SetComplex(int64_t i, std::complex<double> value) {
  switch (element_type()) {
    case PrimitiveType::kC64:
      Store<std::complex<float>>(
          data_, i, {static_cast<float>(value.real()), static_cast<float>(value.imag())});
      return;
    case PrimitiveType::kC128:
      Store<std::complex<double>>(data_, i, value);
      return;
    default:
      SetDouble(i, value.real());
  }
}

std::string ScalarToString(const Literal& literal, int64_t i) {
  PrimitiveType type = literal.element_type();
  if (type == PrimitiveType::kPred) return literal.GetInt(i) != 0 ? "true" : "false";
  if (type == PrimitiveType::kU64) return std::to_string(static_cast<uint64_t>(literal.GetInt(i)));
  if (IsIntegral(type)) return std::to_string(literal.GetInt(i));
  if (IsComplex(type)) {
    std::complex<double> value = literal.GetComplex(i);
    bool is_double = type == PrimitiveType::kC128;
    std::string out = "(";
    out += FloatText(value.real(), is_double);
    out += ", ";
    out += FloatText(value.imag(), is_double);
    out += ')';
    return out;
  }
  return FloatText(literal.GetDouble(i), type == PrimitiveType::kF64);
}

std::string Literal::ToString() const {
  if (shape_.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i > 0) out += ", ";
      out += tuple_[i].ToString();
    }
    return out + ")";
  }
  if (elided_) return "{...}";
  if (shape_.rank() == 0) return shape_.IsArray() ? ScalarToString(*this, 0) : "";
  std::string out;
  int64_t rank = shape_.rank();
  int64_t count = element_count();
  if (count == 0) {
    // Nest empty braces down to the first zero-sized dimension.
    int64_t depth = 0;
    while (depth < rank && shape_.dim(depth) != 0) ++depth;
    std::string inner = "{}";
    for (int64_t d = depth - 1; d >= 0; --d) {
      std::string level = "{";
      for (int64_t k = 0; k < shape_.dim(d); ++k) {
        if (k > 0) level += ", ";
        level += inner;
      }
      level += '}';
      inner = std::move(level);
    }
    return inner;
  }
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < count; ++n) {
    // Open a brace for every dimension whose index just wrapped to 0.
    int64_t opened = 0;
    for (int64_t d = rank - 1; d >= 0 && index[d] == 0; --d) ++opened;
    if (n > 0) out += ", ";
    out.append(opened, '{');
    out += ScalarToString(*this, n);
    int64_t closed = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape_.dim(d)) break;
      index[d] = 0;
      ++closed;
    }
    out.append(closed, '}');
  }
  return out;
}

bool operator==(const Literal& a, const Literal& b) {
  return a.shape_ == b.shape_ && a.elided_ == b.elided_ && a.data_ == b.data_ &&
         a.tuple_ == b.tuple_;
}

Literal LiteralFromDoubles(const Shape& shape, std::span<const double> values) {
  Literal literal(shape);
  int64_t count = std::min<int64_t>(literal.element_count(), values.size());
  for (int64_t i = 0; i < count; ++i) literal.SetDouble(i, values[i]);
  return literal;
}

}  // namespace tilesmith::hlo
