#include "compiler/hlo/evaluator_index.h"

#include <cstring>
#include <limits>

namespace tilesmith::hlo::eval {
namespace {

template <int64_t kBytes>
void CopyRowOf(uint8_t* dst, int64_t dst_stride, const uint8_t* src, int64_t src_stride,
               int64_t count) {
  if (dst_stride == 1 && src_stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(count * kBytes));
    return;
  }
  // A fixed-size memcpy compiles to one load and one store.
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + i * dst_stride * kBytes, src + i * src_stride * kBytes, kBytes);
  }
}

}  // namespace

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

void CopyRow(uint8_t* dst, int64_t dst_stride, const uint8_t* src, int64_t src_stride,
             int64_t count, int64_t bytes) {
  switch (bytes) {
    case 1:
      return CopyRowOf<1>(dst, dst_stride, src, src_stride, count);
    case 2:
      return CopyRowOf<2>(dst, dst_stride, src, src_stride, count);
    case 4:
      return CopyRowOf<4>(dst, dst_stride, src, src_stride, count);
    case 8:
      return CopyRowOf<8>(dst, dst_stride, src, src_stride, count);
    default:
      return CopyRowOf<16>(dst, dst_stride, src, src_stride, count);
  }
}

void CopyBox(const Walk& walk, Literal& dst, const Literal& src, WalkScratch* scratch) {
  const int64_t bytes = dst.element_bytes();
  uint8_t* to = dst.bytes().data();
  const uint8_t* from = src.bytes().data();
  auto copy_row = [&](int64_t a, int64_t b, int64_t count, int64_t a_stride, int64_t b_stride) {
    CopyRow(to + a * bytes, a_stride, from + b * bytes, b_stride, count, bytes);
  };
  if (scratch != nullptr) {
    ForEachRow(walk, *scratch, copy_row);
  } else {
    ForEachRow(walk, copy_row);
  }
}

bool NextIndex(std::span<int64_t> index, std::span<const int64_t> dims) {
  for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

int64_t ReadIndex(const Literal& literal, int64_t i) {
  int64_t value = literal.GetInt(i);
  if (literal.element_type() == PrimitiveType::kU64 && value < 0) {
    return std::numeric_limits<int64_t>::max();
  }
  return value;
}

Status CopyInto(const Literal& value, Literal& out) {
  if (out.shape().IsTuple()) {
    std::span<const Literal> from = value.tuple_elements();
    std::span<Literal> to = out.tuple_elements();
    if (from.size() != to.size()) {
      return MakeError(ErrorCode::kInternal, "tuple arity mismatch copying " +
                                                 ShapeToString(value.shape()) + " to " +
                                                 ShapeToString(out.shape()));
    }
    for (size_t i = 0; i < to.size(); ++i) TS_RETURN_IF_ERROR(CopyInto(from[i], to[i]));
    return OkStatus();
  }
  if (value.bytes().size() != out.bytes().size() || value.element_type() != out.element_type()) {
    return MakeError(ErrorCode::kInternal, "cannot copy " + ShapeToString(value.shape()) + " as " +
                                               ShapeToString(out.shape()));
  }
  if (!out.bytes().empty()) {
    std::memcpy(out.bytes().data(), value.bytes().data(), out.bytes().size());
  }
  return OkStatus();
}

Expected<Literal> CopyAs(const Literal& value, const Shape& shape, const Context& context) {
  TS_ASSIGN_OR_RETURN(Literal out, context.Allocate(shape));
  TS_RETURN_IF_ERROR(CopyInto(value, out));
  return out;
}

std::string OpName(const HloInstruction& instruction) {
  return std::string(HloOpcodeName(instruction.opcode()));
}

}  // namespace tilesmith::hlo::eval
