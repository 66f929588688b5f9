#include "compiler/hlo/npy.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>

namespace tilesmith::hlo {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npy.cc copies little-endian file data straight into literals");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kPrefixBytes = 8;  // magic and the two version bytes
constexpr int64_t kAlignment = 64;  // numpy pads headers so that data starts aligned
constexpr int kGrowthDigits = 21;   // numpy leaves room to grow the first dimension in place

/// A parsed `descr`: byte order ('<', '|', '='), kind ('b', 'i', 'u', 'f', 'c') and
/// item size in bytes.
struct Dtype {
  char order = '|';
  char kind = 0;
  int64_t size = 0;
  std::string text;
};

struct Header {
  Dtype dtype;
  bool fortran_order = false;
  std::vector<int64_t> dims;
};

std::string DimsText(std::span<const int64_t> dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(dims[i]);
  }
  if (dims.size() == 1) out += ',';
  out += ')';
  return out;
}

std::string Quoted(std::string_view text) {
  std::string out = "'";
  out += text;
  out += '\'';
  return out;
}

// Reads the Python dict literal numpy writes: {'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), } with keys in any order and either quote style.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Expected<Header> Parse() {
    Header header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    TS_RETURN_IF_ERROR(Expect('{'));
    while (true) {
      SkipSpace();
      if (Peek() == '}') break;
      TS_ASSIGN_OR_RETURN(std::string key, ParseString());
      TS_RETURN_IF_ERROR(Expect(':'));
      SkipSpace();
      if (key == "descr" && !seen_descr) {
        if (Peek() == '[') return Fail("structured dtypes (a list descr) are not supported");
        TS_ASSIGN_OR_RETURN(std::string descr, ParseString());
        TS_ASSIGN_OR_RETURN(header.dtype, ParseDtype(descr));
        seen_descr = true;
      } else if (key == "fortran_order" && !seen_order) {
        TS_ASSIGN_OR_RETURN(header.fortran_order, ParseBool());
        seen_order = true;
      } else if (key == "shape" && !seen_shape) {
        TS_ASSIGN_OR_RETURN(header.dims, ParseDims());
        seen_shape = true;
      } else {
        return Fail("unexpected or repeated key " + Quoted(key));
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != '}') {
        return Fail("expected ',' or '}'");
      }
    }
    ++pos_;
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text after the header dict");
    if (!seen_descr || !seen_order || !seen_shape) {
      return Fail("the header dict needs 'descr', 'fortran_order' and 'shape'");
    }
    return header;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  std::unexpected<Error> Fail(std::string what) const {
    std::string message = "malformed npy header at offset ";
    message += std::to_string(pos_);
    message += ": ";
    message += what;
    return InvalidArgument(std::move(message));
  }
  Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) return Fail(std::string("expected '") + c + "'");
    ++pos_;
    return OkStatus();
  }

  Expected<std::string> ParseString() {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return Fail("expected a quoted string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return Fail("unterminated string");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }

  Expected<bool> ParseBool() {
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_).starts_with(word)) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    return Fail("expected True or False");
  }

  Expected<std::vector<int64_t>> ParseDims() {
    std::vector<int64_t> dims;
    TS_RETURN_IF_ERROR(Expect('('));
    while (true) {
      SkipSpace();
      if (Peek() == ')') break;
      if (Peek() < '0' || Peek() > '9') return Fail("expected a non-negative dimension size");
      int64_t value = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        int digit = Peek() - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
          return Fail("dimension size too large");
        }
        value = value * 10 + digit;
        ++pos_;
      }
      if (Peek() == 'L') ++pos_;  // Python 2 long literal
      dims.push_back(value);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ')') {
        return Fail("expected ',' or ')' in shape");
      }
    }
    ++pos_;
    return dims;
  }

  Expected<Dtype> ParseDtype(const std::string& descr) {
    Dtype dtype;
    dtype.text = descr;
    if (descr.size() < 2) return Fail("unsupported dtype " + Quoted(descr));
    dtype.order = descr[0];
    dtype.kind = descr[1];
    if (dtype.order == '>') {
      return Fail("big-endian data (" + Quoted(descr) + ") is not supported; save it as '<'");
    }
    if (dtype.kind == 'O') {
      return Fail("object arrays (" + Quoted(descr) + ") hold Python objects, not data");
    }
    if (dtype.order != '<' && dtype.order != '|' && dtype.order != '=') {
      return Fail("unsupported dtype " + Quoted(descr));
    }
    if (descr.size() < 3) return Fail("unsupported dtype " + Quoted(descr));
    int64_t size = 0;
    for (size_t i = 2; i < descr.size(); ++i) {
      if (descr[i] < '0' || descr[i] > '9' || size > 1000) {
        return Fail("unsupported dtype " + Quoted(descr));
      }
      size = size * 10 + (descr[i] - '0');
    }
    dtype.size = size;
    if (dtype.order == '|' && size != 1) {
      return Fail("dtype " + Quoted(descr) + " has no byte order but is wider than a byte");
    }
    return dtype;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// The HLO type a dtype stands for when nothing else is known.
std::optional<PrimitiveType> NaturalType(const Dtype& dtype) {
  using P = PrimitiveType;
  struct Entry {
    char kind;
    int64_t size;
    P type;
  };
  static constexpr Entry kEntries[] = {{'b', 1, P::kPred}, {'i', 1, P::kS8},   {'i', 2, P::kS16},
                                       {'i', 4, P::kS32},  {'i', 8, P::kS64},  {'u', 1, P::kU8},
                                       {'u', 2, P::kU16},  {'u', 4, P::kU32},  {'u', 8, P::kU64},
                                       {'f', 2, P::kF16},  {'f', 4, P::kF32},  {'f', 8, P::kF64},
                                       {'c', 8, P::kC64},  {'c', 16, P::kC128}};
  for (const Entry& e : kEntries) {
    if (e.kind == dtype.kind && e.size == dtype.size) return e.type;
  }
  return std::nullopt;
}

// The unsigned integer dtype of `type`'s unpacked width, holding its raw bits; "" for
// c128, which NumPy has no 16-byte integer for.
std::string CarrierDtypeFor(PrimitiveType type) {
  int bytes = UnpackedByteWidth(type);
  if (bytes == 1) return "|u1";
  if (bytes > 8) return "";
  return "<u" + std::to_string(bytes);
}

bool DtypeIs(const Dtype& dtype, const std::string& text) {
  if (text.empty() || dtype.kind != text[1] || dtype.size != std::stoll(text.substr(2))) {
    return false;
  }
  return true;  // '<', '|' and '=' all mean little-endian here
}

// Checks and normalises the unpacked value of element `i` read from a one-byte item:
// pred becomes 0/1, sub-byte values must fit (raw bits from a 'u' carrier are
// sign-extended for signed types).
Status NormaliseByte(Literal& literal, int64_t i, char kind) {
  PrimitiveType type = literal.element_type();
  uint8_t& byte = literal.bytes()[i];
  if (type == PrimitiveType::kPred) {
    byte = byte != 0 ? 1 : 0;
    return OkStatus();
  }
  int bits = BitWidth(type);
  if (bits >= 8) return OkStatus();
  bool fits;
  if (IsSignedIntegral(type) && kind == 'i') {
    int value = static_cast<int8_t>(byte);
    fits = value >= -(1 << (bits - 1)) && value < (1 << (bits - 1));
  } else {
    fits = byte < (1u << bits);
    if (fits) literal.SetBits(i, byte);  // sign-extends signed types
  }
  if (fits) return OkStatus();
  std::string message = "element ";
  message += std::to_string(i);
  message += " (item value ";
  message += std::to_string(kind == 'i' ? static_cast<int8_t>(byte) : byte);
  message += ") does not fit in ";
  message += PrimitiveTypeName(type);
  return MakeError(ErrorCode::kOutOfRange, std::move(message));
}

Expected<Shape> ResultShape(const Header& header, const std::optional<Shape>& expected) {
  if (!expected.has_value()) {
    std::optional<PrimitiveType> type = NaturalType(header.dtype);
    if (!type.has_value()) {
      return InvalidArgument("unsupported dtype " + Quoted(header.dtype.text));
    }
    return Shape::Array(*type, header.dims);
  }
  if (!expected->IsArray()) {
    return InvalidArgument("npy files hold arrays, not " + ShapeToString(*expected));
  }
  PrimitiveType type = expected->element_type();
  std::string natural = NpyDtypeFor(type), carrier = CarrierDtypeFor(type);
  bool dtype_ok = DtypeIs(header.dtype, natural) || DtypeIs(header.dtype, carrier);
  bool dims_ok = std::equal(header.dims.begin(), header.dims.end(), expected->dims().begin(),
                            expected->dims().end());
  if (dtype_ok && dims_ok) return *expected;
  std::string message = "expected ";
  message += ShapeToStringNoLayout(*expected);
  message += " (dtype ";
  message += Quoted(natural);
  if (carrier != natural && !carrier.empty()) {
    message += " or ";
    message += Quoted(carrier);
  }
  message += ", shape ";
  message += DimsText(expected->dims());
  message += ") but the file has dtype ";
  message += Quoted(header.dtype.text);
  message += ", shape ";
  message += DimsText(header.dims);
  return InvalidArgument(std::move(message));
}

uint32_t ReadLittleEndian(std::span<const uint8_t> bytes) {
  uint32_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

}  // namespace

std::string NpyDtypeFor(PrimitiveType type) {
  using P = PrimitiveType;
  switch (type) {
    case P::kPred:
      return "|b1";
    case P::kF16:
      return "<f2";
    case P::kF32:
      return "<f4";
    case P::kF64:
      return "<f8";
    case P::kC64:
      return "<c8";
    case P::kC128:
      return "<c16";
    default:
      break;
  }
  if (!IsArrayType(type)) return "";
  int bytes = UnpackedByteWidth(type);
  if (IsSignedIntegral(type)) return bytes == 1 ? "|i1" : "<i" + std::to_string(bytes);
  return CarrierDtypeFor(type);  // unsigned integers and the floats NumPy lacks
}

Expected<Literal> ParseNpy(std::span<const uint8_t> bytes, std::optional<Shape> expected) {
  std::string_view view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (!view.starts_with(kMagic)) {
    return InvalidArgument("not a .npy file: it does not start with \"\\x93NUMPY\"");
  }
  if (bytes.size() < kPrefixBytes) return InvalidArgument("truncated .npy file: no version");
  int major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0) {
    return Unimplemented("unsupported .npy format version " + std::to_string(major) + "." +
                         std::to_string(minor) + " (1.0, 2.0 and 3.0 are read)");
  }
  size_t length_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < kPrefixBytes + length_bytes) {
    return InvalidArgument("truncated .npy file: no header length");
  }
  size_t header_length = ReadLittleEndian(bytes.subspan(kPrefixBytes, length_bytes));
  size_t data_offset = kPrefixBytes + length_bytes + header_length;
  if (bytes.size() < data_offset) {
    return InvalidArgument("truncated .npy file: header of " + std::to_string(header_length) +
                           " bytes but only " +
                           std::to_string(bytes.size() - kPrefixBytes - length_bytes) + " follow");
  }
  HeaderParser parser(view.substr(kPrefixBytes + length_bytes, header_length));
  TS_ASSIGN_OR_RETURN(Header header, parser.Parse());
  TS_ASSIGN_OR_RETURN(Shape shape, ResultShape(header, expected));

  int64_t count = 1;
  for (int64_t d : header.dims) {
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d / header.dtype.size) {
      return InvalidArgument("shape " + DimsText(header.dims) + " is too large");
    }
    count *= d;
  }
  int64_t data_bytes = count * header.dtype.size;
  int64_t available = static_cast<int64_t>(bytes.size() - data_offset);
  if (available != data_bytes) {
    std::string message = available < data_bytes ? "truncated .npy file: " : ".npy file: ";
    message += "shape " + DimsText(header.dims) + " of " + Quoted(header.dtype.text) + " needs " +
               std::to_string(data_bytes) + " data bytes but " + std::to_string(available) +
               " follow the header";
    return InvalidArgument(std::move(message));
  }

  Literal literal(shape);
  std::span<const uint8_t> data = bytes.subspan(data_offset);
  size_t item = static_cast<size_t>(header.dtype.size);
  int64_t rank = static_cast<int64_t>(header.dims.size());
  if (data.empty()) {
    // Nothing to copy (and memcpy must not see the null pointers of empty buffers).
  } else if (!header.fortran_order || rank <= 1) {
    std::memcpy(literal.bytes().data(), data.data(), data.size());
  } else {
    // Walk logical (row-major) order while tracking the column-major file offset.
    std::vector<int64_t> index(rank, 0), stride(rank, 1);
    for (int64_t d = 1; d < rank; ++d) stride[d] = stride[d - 1] * header.dims[d - 1];
    int64_t offset = 0;
    for (int64_t n = 0; n < count; ++n) {
      std::memcpy(literal.bytes().data() + n * item, data.data() + offset * item, item);
      for (int64_t d = rank - 1; d >= 0; --d) {
        offset += stride[d];
        if (++index[d] < header.dims[d]) break;
        offset -= stride[d] * header.dims[d];
        index[d] = 0;
      }
    }
  }
  if (item == 1) {
    for (int64_t i = 0; i < count; ++i) {
      TS_RETURN_IF_ERROR(NormaliseByte(literal, i, header.dtype.kind));
    }
  }
  return literal;
}

Expected<Literal> ReadNpy(const std::string& path, std::optional<Shape> expected) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kNotFound, "cannot open " + path + ": " + std::strerror(errno));
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) return MakeError(ErrorCode::kIo, "error reading " + path);
  auto literal = ParseNpy(bytes, std::move(expected));
  if (!literal) return std::unexpected(literal.error().WithContext(path));
  return literal;
}

Expected<std::vector<uint8_t>> SerializeNpy(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (!shape.IsArray()) {
    return InvalidArgument("only arrays can be saved as .npy, not " + ShapeToString(shape));
  }
  if (literal.elided()) {
    return InvalidArgument("the value of " + ShapeToString(shape) + " is elided ({...})");
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.IsUnboundedDim(i)) {
      return InvalidArgument(ShapeToString(shape) + " has an unbounded dimension");
    }
  }
  // Byte for byte what numpy.save writes, growth padding included.
  std::string dict = "{'descr': ";
  dict += Quoted(NpyDtypeFor(shape.element_type()));
  dict += ", 'fortran_order': False, 'shape': ";
  dict += DimsText(shape.dims());
  dict += ", }";
  if (shape.rank() > 0) {
    dict.append(kGrowthDigits - std::to_string(shape.dim(0)).size(), ' ');
  }
  int64_t text_length = static_cast<int64_t>(dict.size()) + 1;  // with the final '\n'
  int major = 1;
  int64_t length_bytes = 2;
  int64_t padding = kAlignment - (kPrefixBytes + length_bytes + text_length) % kAlignment;
  if (text_length + padding > 0xFFFF) {
    major = 2;
    length_bytes = 4;
    padding = kAlignment - (kPrefixBytes + length_bytes + text_length) % kAlignment;
  }
  dict.append(padding, ' ');
  dict += '\n';
  std::vector<uint8_t> out(kMagic.begin(), kMagic.end());
  out.push_back(static_cast<uint8_t>(major));
  out.push_back(0);
  uint32_t header_length = static_cast<uint32_t>(dict.size());
  for (int64_t i = 0; i < length_bytes; ++i) out.push_back((header_length >> (8 * i)) & 0xFF);
  out.insert(out.end(), dict.begin(), dict.end());
  // The unpacked literal storage is exactly the C-order little-endian item data.
  out.insert(out.end(), literal.bytes().begin(), literal.bytes().end());
  return out;
}

Status WriteNpy(const std::string& path, const Literal& literal) {
  TS_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, SerializeNpy(literal));
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      return MakeError(ErrorCode::kIo, "cannot create " + temporary + ": " + std::strerror(errno));
    }
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      return MakeError(ErrorCode::kIo, "error writing " + temporary);
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    return MakeError(ErrorCode::kIo,
                     "cannot rename " + temporary + " to " + path + ": " + error.message());
  }
  return OkStatus();
}

}  // namespace tilesmith::hlo
