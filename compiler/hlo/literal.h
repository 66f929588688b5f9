// Values of HLO arrays and tuples, held in logical (row-major, dimension-order) element
// order; the layout in the shape only matters when a literal becomes a raw buffer.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/shape.h"
#include "support/status.h"

namespace tilesmith::hlo {

/// An array or tuple value. Elements are stored unpacked, one C++ value per element:
/// pred as uint8 0/1; s1..s8 as int8 and u1..u8 as uint8 (sign- or zero-extended); wider
/// integers natively; f32/f64 natively; bf16, f16 as their 16 bits; the f8/f4 types as
/// their bits in a uint8; c64/c128 as std::complex<float/double>.
class Literal {
 public:
  Literal() = default;
  /// A zero-filled value of `shape` (all-zero bits; tuples recursively).
  explicit Literal(Shape shape);

  const Shape& shape() const { return shape_; }
  PrimitiveType element_type() const { return shape_.element_type(); }
  int64_t element_count() const {
    return shape_.IsArray() ? std::max<int64_t>(shape_.ElementCount(), 0) : 0;
  }
  /// Bytes per unpacked element (`UnpackedByteWidth`).
  int64_t element_bytes() const { return UnpackedByteWidth(shape_.element_type()); }

  std::span<uint8_t> bytes() { return data_; }
  std::span<const uint8_t> bytes() const { return data_; }
  /// The elements viewed as `T`; T must match the unpacked storage type.
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(data_.data());
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(data_.data());
  }

  std::span<Literal> tuple_elements() { return tuple_; }
  std::span<const Literal> tuple_elements() const { return tuple_; }

  /// A constant written `{...}` in HLO text: shape known, contents not.
  bool elided() const { return elided_; }
  void set_elided(bool elided) { elided_ = elided; }

  // Element access by logical linear index, converting through the widest type of the
  // class. Convenient for tests, printing and parsing; the evaluator uses typed loops.
  double GetDouble(int64_t i) const;  ///< floats and integers; pred as 0/1
  int64_t GetInt(int64_t i) const;    ///< integers and pred (u64 reinterpreted)
  std::complex<double> GetComplex(int64_t i) const;
  /// Raw storage bits of element i, zero-extended (bf16 -> its 16 bits, s4 -> low 4 bits).
  uint64_t GetBits(int64_t i) const;
  void SetDouble(int64_t i, double value);  ///< floats: rounds to the type; ints: truncates
  void SetInt(int64_t i, int64_t value);    ///< integers and pred; wraps to the type width
  void SetComplex(int64_t i, std::complex<double> value);
  void SetBits(int64_t i, uint64_t bits);

  /// HLO literal text: `1.5`, `{1, 2}`, `{{1, 2}, {3, 4}}`, `(1, 0)`, `true`, `{...}`.
  std::string ToString() const;

  /// Bitwise equality of shape (layouts included) and contents.
  friend bool operator==(const Literal& a, const Literal& b);

 private:
  Shape shape_;
  std::vector<uint8_t> data_;
  std::vector<Literal> tuple_;
  bool elided_ = false;
};

/// Shortest decimal text that reads back as the same value of `type` ("0.5", "-inf",
/// "nan", "1e+30"). For integers and pred, the plain value.
std::string ScalarToString(const Literal& literal, int64_t i);

/// Wraps an integer to the range of `type` (two's complement for signed types).
int64_t WrapToIntegerType(PrimitiveType type, int64_t value);

/// Literal with the values converted to `shape`'s element type (same dims); used by
/// tests and the CLI. Floats round to nearest even, integers wrap.
Literal LiteralFromDoubles(const Shape& shape, std::span<const double> values);

}  // namespace tilesmith::hlo
