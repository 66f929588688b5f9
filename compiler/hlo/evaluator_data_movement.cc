// Data movement ops: each is one or a few strided box copies of raw element bytes, so none
// depends on the element type (bitcast across types and packed layouts aside).
#include <algorithm>

#include "compiler/hlo/buffer.h"
#include "compiler/hlo/evaluator_index.h"
#include "compiler/hlo/evaluator_ops.h"

namespace tilesmith::hlo::eval {
namespace {

// Rounds toward negative infinity; `b` > 0.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

std::vector<int64_t> DimsOf(const Literal& literal) {
  return {literal.shape().dims().begin(), literal.shape().dims().end()};
}

Expected<Literal> Broadcast(const HloInstruction& instruction, const Literal& operand,
                            const Context& context) {
  const Shape& shape = instruction.shape();
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(shape));
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  std::vector<int64_t> in_strides = RowMajorStrides(operand.shape().dims());
  std::vector<int64_t> source(shape.rank(), 0);  // 0: repeated along that result dimension
  std::span<const int64_t> mapping = instruction.dimensions();
  for (size_t i = 0; i < mapping.size(); ++i) source[mapping[i]] = in_strides[i];
  Walk walk;
  for (int64_t d = 0; d < shape.rank(); ++d) walk.Add(shape.dim(d), out_strides[d], source[d]);
  CopyBox(walk, result, operand);
  return result;
}

Expected<Literal> Transpose(const HloInstruction& instruction, const Literal& operand,
                            const Context& context) {
  const Shape& shape = instruction.shape();
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(shape));
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  std::vector<int64_t> in_strides = RowMajorStrides(operand.shape().dims());
  std::span<const int64_t> permutation = instruction.dimensions();
  Walk walk;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    walk.Add(shape.dim(d), out_strides[d], in_strides[permutation[d]]);
  }
  CopyBox(walk, result, operand);
  return result;
}

// Strides of each dimension in the element order of memory, for layouts with nothing but
// minor_to_major.
std::vector<int64_t> PhysicalStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  int64_t stride = 1;
  for (int64_t d : shape.layout().minor_to_major) {
    strides[d] = stride;
    stride *= shape.dim(d);
  }
  return strides;
}

// Without tiles, packing or padding and with equally wide unpacked elements, a bitcast
// moves whole elements: operand -> memory order -> result. Both steps are box copies.
bool BitcastIsPermutation(const Shape& from, const Shape& to) {
  if (!from.layout().HasOnlyMinorToMajor() || !to.layout().HasOnlyMinorToMajor()) return false;
  if (from.element_type() == to.element_type()) return true;
  int bits = BitWidth(from.element_type());
  return bits == BitWidth(to.element_type()) && bits >= 8 &&
         from.element_type() != PrimitiveType::kPred && to.element_type() != PrimitiveType::kPred;
}

// result = FromPhysicalBuffer(ToPhysicalBuffer(operand)): handles tiles, padding, packed
// sub-byte elements and types of different unpacked widths.
Status BitcastThroughMemory(const Literal& value, const Shape& from, Literal& result,
                            const Context& context) {
  Literal declared;
  const Literal* operand = &value;
  if (!(value.shape() == from)) {
    TS_ASSIGN_OR_RETURN(declared, CopyAs(value, from, context));
    operand = &declared;
  }
  TS_ASSIGN_OR_RETURN(std::vector<uint8_t> memory, ToPhysicalBuffer(*operand));
  TS_ASSIGN_OR_RETURN(Literal read, FromPhysicalBuffer(result.shape(), memory));
  return CopyInto(read, result);
}

// Puts the operand's elements in memory order (skipped when that is the logical order),
// then reads the result's elements from there.
Status BitcastByPermutation(const Literal& value, const Shape& from, Literal& result,
                            const Context& context) {
  const Literal* memory = &value;
  Literal reordered;
  if (!from.layout().IsDefault() && from.rank() > 1) {
    TS_ASSIGN_OR_RETURN(reordered, context.Allocate(value.shape()));
    std::vector<int64_t> physical = PhysicalStrides(from);
    std::vector<int64_t> logical = RowMajorStrides(from.dims());
    Walk walk;
    for (int64_t d = 0; d < from.rank(); ++d) walk.Add(from.dim(d), physical[d], logical[d]);
    CopyBox(walk, reordered, value);
    memory = &reordered;
  }
  const Shape& shape = result.shape();
  std::vector<int64_t> physical = PhysicalStrides(shape);
  std::vector<int64_t> logical = RowMajorStrides(shape.dims());
  Walk walk;
  for (int64_t d = 0; d < shape.rank(); ++d) walk.Add(shape.dim(d), logical[d], physical[d]);
  CopyBox(walk, result, *memory);
  return OkStatus();
}

Expected<Literal> Bitcast(const HloInstruction& instruction, const Literal& value,
                          const Context& context) {
  // The declared operand layout says how memory holds the value, whatever layout the
  // argument literal was given with.
  const Shape& from = instruction.operand(0)->shape();
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(instruction.shape()));
  if (BitcastIsPermutation(from, result.shape())) {
    TS_RETURN_IF_ERROR(BitcastByPermutation(value, from, result, context));
  } else {
    TS_RETURN_IF_ERROR(BitcastThroughMemory(value, from, result, context));
  }
  return result;
}

Expected<Literal> Slice(const HloInstruction& instruction, const Literal& operand,
                        const Context& context) {
  const Shape& shape = instruction.shape();
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(shape));
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  std::vector<int64_t> in_strides = RowMajorStrides(operand.shape().dims());
  const std::vector<SliceDim>& slice = *instruction.attributes().slice;
  Walk walk;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    walk.Add(shape.dim(d), out_strides[d], in_strides[d] * slice[d].stride);
    walk.b_offset += slice[d].start * in_strides[d];
  }
  CopyBox(walk, result, operand);
  return result;
}

// Start indices of dynamic-slice and dynamic-update-slice, clamped so that a box of `sizes`
// fits in `dims` (XLA semantics: out-of-bounds starts are moved in, not rejected).
std::vector<int64_t> ClampedStarts(Operands indices, std::span<const int64_t> dims,
                                   std::span<const int64_t> sizes) {
  std::vector<int64_t> starts;
  for (size_t d = 0; d < dims.size(); ++d) {
    starts.push_back(std::clamp<int64_t>(ReadIndex(*indices[d], 0), 0, dims[d] - sizes[d]));
  }
  return starts;
}

Expected<Literal> DynamicSlice(const HloInstruction& instruction, Operands operands,
                               const Context& context) {
  const Shape& shape = instruction.shape();
  const Literal& operand = *operands[0];
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(shape));
  std::vector<int64_t> starts =
      ClampedStarts(operands.subspan(1), operand.shape().dims(), shape.dims());
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  std::vector<int64_t> in_strides = RowMajorStrides(operand.shape().dims());
  Walk walk;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    walk.Add(shape.dim(d), out_strides[d], in_strides[d]);
    walk.b_offset += starts[d] * in_strides[d];
  }
  CopyBox(walk, result, operand);
  return result;
}

Expected<Literal> DynamicUpdateSlice(const HloInstruction& instruction, Operands operands,
                                     const Context& context) {
  const Shape& shape = instruction.shape();
  const Literal& update = *operands[1];
  TS_ASSIGN_OR_RETURN(Literal result, CopyAs(*operands[0], shape, context));
  std::vector<int64_t> starts =
      ClampedStarts(operands.subspan(2), shape.dims(), update.shape().dims());
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  std::vector<int64_t> update_strides = RowMajorStrides(update.shape().dims());
  Walk walk;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    walk.Add(update.shape().dim(d), out_strides[d], update_strides[d]);
    walk.a_offset += starts[d] * out_strides[d];
  }
  CopyBox(walk, result, update);
  return result;
}

// Fills the result with the padding value, then copies the operand elements that land
// inside it: element i of a dimension goes to low + i * (interior + 1), and negative
// low/high padding crops the elements that land outside.
Expected<Literal> Pad(const HloInstruction& instruction, Operands operands,
                      const Context& context) {
  const Shape& shape = instruction.shape();
  const Literal& operand = *operands[0];
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(shape));
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  std::vector<int64_t> in_strides = RowMajorStrides(operand.shape().dims());
  Walk fill;
  for (int64_t d = 0; d < shape.rank(); ++d) fill.Add(shape.dim(d), out_strides[d], 0);
  CopyBox(fill, result, *operands[1]);
  const std::vector<PadDim>& padding = *instruction.attributes().padding;
  Walk walk;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const int64_t step = padding[d].interior + 1;
    const int64_t low = padding[d].low;
    const int64_t first = low >= 0 ? 0 : CeilDiv(-low, step);
    const int64_t last =
        std::min(operand.shape().dim(d) - 1, FloorDiv(shape.dim(d) - 1 - low, step));
    if (last < first) return result;  // the operand is cropped away entirely
    walk.Add(last - first + 1, out_strides[d] * step, in_strides[d]);
    walk.a_offset += (low + first * step) * out_strides[d];
    walk.b_offset += first * in_strides[d];
  }
  CopyBox(walk, result, operand);
  return result;
}

Expected<Literal> Concatenate(const HloInstruction& instruction, Operands operands,
                              const Context& context) {
  const Shape& shape = instruction.shape();
  const int64_t axis = instruction.dimensions()[0];
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(shape));
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  int64_t offset = 0;
  for (const Literal* operand : operands) {
    std::vector<int64_t> dims = DimsOf(*operand);
    std::vector<int64_t> in_strides = RowMajorStrides(dims);
    Walk walk;
    for (int64_t d = 0; d < shape.rank(); ++d) walk.Add(dims[d], out_strides[d], in_strides[d]);
    walk.a_offset = offset * out_strides[axis];
    CopyBox(walk, result, *operand);
    offset += dims[axis];
  }
  return result;
}

Expected<Literal> Reverse(const HloInstruction& instruction, const Literal& operand,
                          const Context& context) {
  const Shape& shape = instruction.shape();
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(shape));
  std::vector<int64_t> strides = RowMajorStrides(shape.dims());
  std::span<const int64_t> reversed = instruction.dimensions();
  Walk walk;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(reversed.begin(), reversed.end(), d) == reversed.end()) {
      walk.Add(shape.dim(d), strides[d], strides[d]);
    } else {
      walk.Add(shape.dim(d), strides[d], -strides[d]);
      walk.b_offset += (shape.dim(d) - 1) * strides[d];
    }
  }
  CopyBox(walk, result, operand);
  return result;
}

}  // namespace

Expected<Literal> EvaluateDataMovement(const HloInstruction& instruction, Operands operands,
                                       const Context& context) {
  switch (instruction.opcode()) {
    case HloOpcode::kBroadcast:
      return Broadcast(instruction, *operands[0], context);
    case HloOpcode::kReshape:
      return CopyAs(*operands[0], instruction.shape(), context);
    case HloOpcode::kBitcast:
      return Bitcast(instruction, *operands[0], context);
    case HloOpcode::kTranspose:
      return Transpose(instruction, *operands[0], context);
    case HloOpcode::kSlice:
      return Slice(instruction, *operands[0], context);
    case HloOpcode::kDynamicSlice:
      return DynamicSlice(instruction, operands, context);
    case HloOpcode::kDynamicUpdateSlice:
      return DynamicUpdateSlice(instruction, operands, context);
    case HloOpcode::kPad:
      return Pad(instruction, operands, context);
    case HloOpcode::kConcatenate:
      return Concatenate(instruction, operands, context);
    case HloOpcode::kReverse:
      return Reverse(instruction, *operands[0], context);
    default:
      return Unimplemented("the evaluator does not implement '" + OpName(instruction) + "'");
  }
}

}  // namespace tilesmith::hlo::eval
