// Reading constant literals from HLO text.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "compiler/hlo/parse_internal.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::hlo {
namespace {

constexpr int kMaxLiteralNesting = 64;
// A constant's text holds every element, so this bounds memory by the input size anyway;
// the cap stops a huge declared shape from allocating before the text is read.
constexpr int64_t kMaxLiteralBytes = int64_t{1} << 31;

template <typename T>
Expected<T> ReadNumber(TextCursor& cursor, std::string_view what) {
  cursor.SkipSpace();
  size_t at = cursor.position();
  std::string_view text = cursor.text();
  const char* first = text.data() + at;
  const char* last = text.data() + text.size();
  if (first < last && *first == '+') ++first;
  T value{};
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) {
    if constexpr (std::is_floating_point_v<T>) {
      // Decimal beyond the type's range: from_chars reports it but XLA reads it as inf/0.
      std::string copy(first, static_cast<size_t>(std::min<ptrdiff_t>(last - first, 64)));
      value = static_cast<T>(std::strtod(copy.c_str(), nullptr));
    } else {
      return cursor.Fail(at, std::string(what) + " does not fit in 64 bits");
    }
  } else if (ec != std::errc()) {
    return cursor.Fail(at, "expected " + std::string(what) + ", found " + cursor.DescribeNext());
  }
  cursor.set_position(static_cast<size_t>(ptr - text.data()));
  return value;
}

Status ReadScalar(TextCursor& cursor, Literal& literal, int64_t i) {
  PrimitiveType type = literal.element_type();
  cursor.SkipSpace();
  size_t at = cursor.position();
  if (type == PrimitiveType::kPred) {
    if (cursor.ConsumeWord("true")) {
      literal.SetInt(i, 1);
      return OkStatus();
    }
    if (cursor.ConsumeWord("false")) {
      literal.SetInt(i, 0);
      return OkStatus();
    }
    TS_ASSIGN_OR_RETURN(int64_t value, ReadNumber<int64_t>(cursor, "true, false, 0 or 1"));
    if (value != 0 && value != 1) return cursor.Fail(at, "a pred constant must be 0 or 1");
    literal.SetInt(i, value);
    return OkStatus();
  }
  if (IsComplex(type)) {
    TS_RETURN_IF_ERROR(cursor.Expect('(', "'(' to start a complex value (re, im)"));
    TS_ASSIGN_OR_RETURN(double real, ReadNumber<double>(cursor, "a real part"));
    TS_RETURN_IF_ERROR(cursor.Expect(',', "',' in a complex value"));
    TS_ASSIGN_OR_RETURN(double imag, ReadNumber<double>(cursor, "an imaginary part"));
    TS_RETURN_IF_ERROR(cursor.Expect(')', "')' to close a complex value"));
    literal.SetComplex(i, {real, imag});
    return OkStatus();
  }
  if (type == PrimitiveType::kF32) {
    TS_ASSIGN_OR_RETURN(float value, ReadNumber<float>(cursor, "a number"));
    literal.SetDouble(i, value);
    return OkStatus();
  }
  if (IsFloatingPoint(type)) {
    TS_ASSIGN_OR_RETURN(double value, ReadNumber<double>(cursor, "a number"));
    literal.SetDouble(i, value);
    return OkStatus();
  }
  if (type == PrimitiveType::kU64) {
    TS_ASSIGN_OR_RETURN(uint64_t value, ReadNumber<uint64_t>(cursor, "an unsigned integer"));
    literal.SetInt(i, static_cast<int64_t>(value));
    return OkStatus();
  }
  if (IsIntegral(type)) {
    TS_ASSIGN_OR_RETURN(int64_t value, ReadNumber<int64_t>(cursor, "an integer"));
    if (WrapToIntegerType(type, value) != value) {
      return cursor.Fail(
          at, std::to_string(value) + " does not fit in " + std::string(PrimitiveTypeName(type)));
    }
    literal.SetInt(i, value);
    return OkStatus();
  }
  return cursor.Fail(
      at, "constants of type " + std::string(PrimitiveTypeName(type)) + " are not supported");
}

// Reads one brace level of an array literal: `{a, b}` at the innermost dimension, `{{…},
// {…}}` above it. `next` is the row-major index of the next element.
Status ReadArrayLevel(TextCursor& cursor, Literal& literal, int64_t dim, int64_t& next) {
  const Shape& shape = literal.shape();
  size_t at = cursor.position();
  TS_RETURN_IF_ERROR(
      cursor.Expect('{', "'{' to start dimension " + std::to_string(dim) + " of the constant"));
  int64_t count = 0;
  if (cursor.Peek() != '}') {
    do {
      if (count >= shape.dim(dim)) {
        return cursor.Fail(at, "dimension " + std::to_string(dim) + " of " + ShapeToString(shape) +
                                   " has " + std::to_string(shape.dim(dim)) +
                                   " elements; the constant "
                                   "has more");
      }
      if (dim + 1 == shape.rank()) {
        TS_RETURN_IF_ERROR(ReadScalar(cursor, literal, next++));
      } else {
        TS_RETURN_IF_ERROR(ReadArrayLevel(cursor, literal, dim + 1, next));
      }
      ++count;
    } while (cursor.Consume(','));
  }
  TS_RETURN_IF_ERROR(cursor.Expect('}', "',' or '}' in the constant"));
  if (count != shape.dim(dim)) {
    return cursor.Fail(at, "dimension " + std::to_string(dim) + " of " + ShapeToString(shape) +
                               " has " + std::to_string(shape.dim(dim)) +
                               " elements; the constant gives " + std::to_string(count));
  }
  return OkStatus();
}

Expected<Literal> ReadLiteralImpl(TextCursor& cursor, const Shape& shape, int depth) {
  if (depth > kMaxLiteralNesting) return cursor.FailHere("constant nested too deeply");
  if (shape.IsTuple()) {
    TS_RETURN_IF_ERROR(cursor.Expect('(', "'(' to start a tuple constant"));
    Literal literal(shape);
    for (size_t i = 0; i < literal.tuple_elements().size(); ++i) {
      if (i > 0) TS_RETURN_IF_ERROR(cursor.Expect(',', "',' between tuple elements"));
      TS_ASSIGN_OR_RETURN(literal.tuple_elements()[i],
                          ReadLiteralImpl(cursor, shape.tuple_element(i), depth + 1));
    }
    TS_RETURN_IF_ERROR(cursor.Expect(')', "')' to close the tuple constant"));
    return literal;
  }
  if (!shape.IsArray()) return cursor.FailHere("a constant must be an array or a tuple");
  if (!shape.IsStatic()) return cursor.FailHere("a constant must have a static shape");
  if (shape.ElementCount() > kMaxLiteralBytes / UnpackedByteWidth(shape.element_type())) {
    return cursor.FailHere("constant of shape " + ShapeToString(shape) + " is too large");
  }
  // `{...}` stands for contents the printer elided.
  size_t saved = cursor.position();
  if (cursor.Consume('{') && cursor.Peek() == '.' &&
      cursor.text().substr(cursor.position(), 3) == "...") {
    cursor.set_position(cursor.position() + 3);
    TS_RETURN_IF_ERROR(cursor.Expect('}', "'}' after '{...'"));
    Literal literal(shape);
    literal.set_elided(true);
    return literal;
  }
  cursor.set_position(saved);
  Literal literal(shape);
  if (shape.rank() == 0) {
    TS_RETURN_IF_ERROR(ReadScalar(cursor, literal, 0));
    return literal;
  }
  int64_t next = 0;
  TS_RETURN_IF_ERROR(ReadArrayLevel(cursor, literal, 0, next));
  return literal;
}

}  // namespace

Expected<Literal> ParseLiteral(std::string_view text, const Shape& shape) {
  TextCursor cursor(text, "<literal>");
  TS_ASSIGN_OR_RETURN(Literal literal, ReadLiteralImpl(cursor, shape, 0));
  if (!cursor.AtEnd()) {
    return cursor.FailHere("unexpected " + cursor.DescribeNext() + " after the literal");
  }
  return literal;
}

Expected<Literal> ReadLiteral(TextCursor& cursor, const Shape& shape) {
  return ReadLiteralImpl(cursor, shape, 0);
}

}  // namespace tilesmith::hlo
