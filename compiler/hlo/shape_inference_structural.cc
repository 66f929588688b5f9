// Shape inference for data-movement, reduction and indexing ops.
#include <algorithm>
#include <numeric>

#include "compiler/hlo/hlo_module.h"
#include "compiler/hlo/shape_inference_internal.h"

namespace tilesmith::hlo::shape_check {

std::string TypeName(PrimitiveType type) { return std::string(PrimitiveTypeName(type)); }

std::string DimsText(std::span<const int64_t> dims) {
  std::string text = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(dims[i]);
  }
  text += '}';
  return text;
}

Status ExpectOperandCount(const HloInstruction& instruction, int64_t count) {
  if (instruction.operand_count() == count) return OkStatus();
  return Fail(std::string(HloOpcodeName(instruction.opcode())) + " takes " + std::to_string(count) +
              " operand" + (count == 1 ? "" : "s") + ", not " +
              std::to_string(instruction.operand_count()));
}

Status ExpectArray(const Shape& shape, std::string_view what) {
  if (shape.IsArray()) return OkStatus();
  return Fail(std::string(what) + " must be an array, not " + ShapeToStringNoLayout(shape));
}

Status ExpectUniqueDims(std::span<const int64_t> dims, int64_t rank, std::string_view what) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Fail(std::string(what) + "=" + DimsText(dims) + " names dimension " +
                  std::to_string(d) + " of a rank-" + std::to_string(rank) + " array");
    }
    if (seen[d]) {
      return Fail(std::string(what) + "=" + DimsText(dims) + " repeats dimension " +
                  std::to_string(d));
    }
    seen[d] = true;
  }
  return OkStatus();
}

Expected<Shape> InferOpaque(const Shape* declared) {
  if (declared == nullptr) return Fail("this op needs its shape written");
  return *declared;
}

Expected<Shape> InferConvert(const HloInstruction& instruction, const Shape* declared) {
  const Shape& operand = instruction.operand(0)->shape();
  if (declared == nullptr) return Fail("the result type must be written");
  TS_RETURN_IF_ERROR(ExpectArray(*declared, "the result"));
  PrimitiveType from = operand.element_type();
  PrimitiveType to = declared->element_type();
  std::vector<int64_t> dims(operand.dims().begin(), operand.dims().end());
  if (instruction.opcode() == HloOpcode::kConvert) {
    if (IsComplex(from) && !IsComplex(to)) {
      return Fail("convert from " + TypeName(from) + " to " + TypeName(to) +
                  " would drop the imaginary part; use real or imag");
    }
    return Shape::Array(to, std::move(dims));
  }
  int from_bits = BitWidth(from);
  int to_bits = BitWidth(to);
  if (from == PrimitiveType::kPred || to == PrimitiveType::kPred) {
    return Fail("bitcast-convert does not take pred");
  }
  if (from_bits == to_bits) return Shape::Array(to, std::move(dims));
  if (from_bits > to_bits) {
    if (from_bits % to_bits != 0) return Fail("bit widths do not divide");
    dims.push_back(from_bits / to_bits);
    return Shape::Array(to, std::move(dims));
  }
  if (to_bits % from_bits != 0 || dims.empty() || dims.back() != to_bits / from_bits) {
    return Fail("bitcast-convert from " + TypeName(from) + " to " + TypeName(to) +
                " needs a minor dimension of " + std::to_string(to_bits / from_bits));
  }
  dims.pop_back();
  return Shape::Array(to, std::move(dims));
}

std::vector<int64_t> DimsOf(const Shape& shape) {
  return {shape.dims().begin(), shape.dims().end()};
}

Status ExpectScalarIndex(const Shape& shape, int64_t i) {
  if (shape.IsArray() && shape.rank() == 0 && IsIntegral(shape.element_type())) return OkStatus();
  return Fail("start index " + std::to_string(i) + " must be an integer scalar, not " +
              ShapeToStringNoLayout(shape));
}

// The reducer of reduce / reduce-window / scatter: 2N scalar parameters, N scalar results
// of the accumulator types.
Status CheckReducer(const HloInstruction& instruction, std::span<const PrimitiveType> accumulators,
                    std::span<const PrimitiveType> values) {
  if (instruction.called_computations().size() != 1) {
    return Fail("needs to_apply= naming the reducer");
  }
  const HloComputation& reducer = *instruction.called_computation(0);
  size_t n = accumulators.size();
  if (reducer.parameter_count() != static_cast<int64_t>(2 * n)) {
    return Fail("reducer '" + reducer.name() + "' must take " + std::to_string(2 * n) +
                " scalars, it takes " + std::to_string(reducer.parameter_count()));
  }
  for (size_t i = 0; i < 2 * n; ++i) {
    const Shape& parameter = reducer.parameter(static_cast<int64_t>(i))->shape();
    PrimitiveType expected = i < n ? accumulators[i] : values[i - n];
    if (!parameter.IsArray() || parameter.rank() != 0 || parameter.element_type() != expected) {
      return Fail("parameter " + std::to_string(i) + " of reducer '" + reducer.name() +
                  "' must be " + TypeName(expected) + "[], not " +
                  ShapeToStringNoLayout(parameter));
    }
  }
  const Shape& root = reducer.root()->shape();
  auto scalar_of = [](const Shape& shape, PrimitiveType type) {
    return shape.IsArray() && shape.rank() == 0 && shape.element_type() == type;
  };
  bool ok = n == 1 ? scalar_of(root, accumulators[0])
                   : root.IsTuple() && root.tuple_elements().size() == n;
  for (size_t i = 0; ok && n > 1 && i < n; ++i)
    ok = scalar_of(root.tuple_element(i), accumulators[i]);
  if (!ok) {
    return Fail("reducer '" + reducer.name() + "' returns " + ShapeToStringNoLayout(root) +
                "; it must return the accumulator type" + (n > 1 ? "s as a tuple" : ""));
  }
  return OkStatus();
}

// Splits variadic reduce-like operands into inputs and init values.
struct Variadic {
  std::vector<const Shape*> inputs;
  std::vector<const Shape*> inits;
  std::vector<PrimitiveType> accumulator_types;
  std::vector<PrimitiveType> input_types;
};

Expected<Variadic> SplitVariadic(const HloInstruction& instruction) {
  int64_t count = instruction.operand_count();
  if (count == 0 || count % 2 != 0) {
    return Fail("takes N inputs and N init values; got " + std::to_string(count) + " operands");
  }
  Variadic v;
  int64_t n = count / 2;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = instruction.operand(i)->shape();
    const Shape& init = instruction.operand(n + i)->shape();
    TS_RETURN_IF_ERROR(ExpectArray(input, "input " + std::to_string(i)));
    if (!init.IsArray() || init.rank() != 0) {
      return Fail("init value " + std::to_string(i) + " must be a scalar, not " +
                  ShapeToStringNoLayout(init));
    }
    if (i > 0 && !std::equal(input.dims().begin(), input.dims().end(), v.inputs[0]->dims().begin(),
                             v.inputs[0]->dims().end())) {
      return Fail("inputs must have the same dimensions; " + ShapeToStringNoLayout(input) +
                  " differs from " + ShapeToStringNoLayout(*v.inputs[0]));
    }
    v.inputs.push_back(&input);
    v.inits.push_back(&init);
    v.accumulator_types.push_back(init.element_type());
    v.input_types.push_back(input.element_type());
  }
  return v;
}

Shape MaybeTuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

namespace {

Expected<Shape> InferReduce(const HloInstruction& instruction) {
  TS_ASSIGN_OR_RETURN(Variadic v, SplitVariadic(instruction));
  const Shape& input = *v.inputs[0];
  TS_RETURN_IF_ERROR(ExpectUniqueDims(instruction.dimensions(), input.rank(), "dimensions"));
  TS_RETURN_IF_ERROR(CheckReducer(instruction, v.accumulator_types, v.input_types));
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (std::find(instruction.dimensions().begin(), instruction.dimensions().end(), d) ==
        instruction.dimensions().end()) {
      kept.push_back(input.dim(d));
    }
  }
  std::vector<Shape> results;
  for (PrimitiveType type : v.accumulator_types) results.push_back(Shape::Array(type, kept));
  return MaybeTuple(std::move(results));
}

Expected<Shape> InferReduceWindow(const HloInstruction& instruction) {
  TS_ASSIGN_OR_RETURN(Variadic v, SplitVariadic(instruction));
  const Shape& input = *v.inputs[0];
  if (!instruction.attributes().window) return Fail("needs window={…}");
  const std::vector<WindowDim>& window = *instruction.attributes().window;
  if (static_cast<int64_t>(window.size()) != input.rank()) {
    return Fail("the window has " + std::to_string(window.size()) + " dimensions; the input " +
                std::to_string(input.rank()));
  }
  TS_RETURN_IF_ERROR(CheckReducer(instruction, v.accumulator_types, v.input_types));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < input.rank(); ++d) {
    const WindowDim& w = window[d];
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return Fail("window size, stride and dilations must be >= 1");
    }
    int64_t dilated_input = input.dim(d) == 0 ? 0 : (input.dim(d) - 1) * w.base_dilation + 1;
    int64_t padded = dilated_input + w.padding_low + w.padding_high;
    int64_t dilated_window = (w.size - 1) * w.window_dilation + 1;
    dims.push_back(padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1);
  }
  std::vector<Shape> results;
  for (PrimitiveType type : v.accumulator_types) results.push_back(Shape::Array(type, dims));
  return MaybeTuple(std::move(results));
}

Expected<Shape> InferDot(const HloInstruction& instruction, const Shape* declared) {
  TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 2));
  const Shape& lhs = instruction.operand(0)->shape();
  const Shape& rhs = instruction.operand(1)->shape();
  TS_RETURN_IF_ERROR(ExpectArray(lhs, "lhs"));
  TS_RETURN_IF_ERROR(ExpectArray(rhs, "rhs"));
  DotDimensions dims = instruction.attributes().dot.value_or(DotDimensions{});
  std::vector<int64_t> lhs_used = dims.lhs_batch;
  lhs_used.insert(lhs_used.end(), dims.lhs_contracting.begin(), dims.lhs_contracting.end());
  std::vector<int64_t> rhs_used = dims.rhs_batch;
  rhs_used.insert(rhs_used.end(), dims.rhs_contracting.begin(), dims.rhs_contracting.end());
  TS_RETURN_IF_ERROR(ExpectUniqueDims(lhs_used, lhs.rank(), "lhs batch+contracting dims"));
  TS_RETURN_IF_ERROR(ExpectUniqueDims(rhs_used, rhs.rank(), "rhs batch+contracting dims"));
  if (dims.lhs_batch.size() != dims.rhs_batch.size() ||
      dims.lhs_contracting.size() != dims.rhs_contracting.size()) {
    return Fail("lhs and rhs must list as many batch and contracting dimensions");
  }
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    if (lhs.dim(dims.lhs_batch[i]) != rhs.dim(dims.rhs_batch[i])) {
      return Fail("batch dimension sizes differ: " + std::to_string(lhs.dim(dims.lhs_batch[i])) +
                  " vs " + std::to_string(rhs.dim(dims.rhs_batch[i])));
    }
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    if (lhs.dim(dims.lhs_contracting[i]) != rhs.dim(dims.rhs_contracting[i])) {
      return Fail("contracting dimension sizes differ: " +
                  std::to_string(lhs.dim(dims.lhs_contracting[i])) + " vs " +
                  std::to_string(rhs.dim(dims.rhs_contracting[i])));
    }
  }
  std::vector<int64_t> result;
  for (int64_t d : dims.lhs_batch) result.push_back(lhs.dim(d));
  auto append_free = [&](const Shape& shape, const std::vector<int64_t>& used) {
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (std::find(used.begin(), used.end(), d) == used.end()) result.push_back(shape.dim(d));
    }
  };
  append_free(lhs, lhs_used);
  append_free(rhs, rhs_used);
  PrimitiveType type = declared != nullptr ? declared->element_type() : lhs.element_type();
  return Shape::Array(type, std::move(result));
}

}  // namespace

Expected<Shape> InferStructural(const HloInstruction& instruction, const Shape* declared) {
  HloOpcode opcode = instruction.opcode();
  const HloAttributes& attributes = instruction.attributes();
  auto operand = [&](int64_t i) -> const Shape& { return instruction.operand(i)->shape(); };
  switch (opcode) {
    case HloOpcode::kIota: {
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 0));
      if (declared == nullptr) return Fail("iota needs its shape written");
      TS_RETURN_IF_ERROR(ExpectArray(*declared, "the result"));
      if (attributes.iota_dimension < 0 || attributes.iota_dimension >= declared->rank()) {
        return Fail("iota_dimension=" + std::to_string(attributes.iota_dimension) +
                    " is not a dimension of " + ShapeToStringNoLayout(*declared));
      }
      return *declared;
    }
    case HloOpcode::kBroadcast: {
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 1));
      TS_RETURN_IF_ERROR(ExpectArray(operand(0), "the operand"));
      if (declared == nullptr) return Fail("broadcast needs its shape written");
      TS_RETURN_IF_ERROR(ExpectArray(*declared, "the result"));
      std::span<const int64_t> dims = instruction.dimensions();
      if (static_cast<int64_t>(dims.size()) != operand(0).rank()) {
        return Fail("dimensions=" + DimsText(dims) + " must map each of the operand's " +
                    std::to_string(operand(0).rank()) + " dimensions");
      }
      TS_RETURN_IF_ERROR(ExpectUniqueDims(dims, declared->rank(), "dimensions"));
      for (size_t i = 0; i < dims.size(); ++i) {
        if (operand(0).dim(i) != declared->dim(dims[i])) {
          return Fail("operand dimension " + std::to_string(i) + " (" +
                      std::to_string(operand(0).dim(i)) + ") does not match result dimension " +
                      std::to_string(dims[i]) + " (" + std::to_string(declared->dim(dims[i])) +
                      ")");
        }
      }
      return Shape::Array(operand(0).element_type(), DimsOf(*declared));
    }
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast: {
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 1));
      TS_RETURN_IF_ERROR(ExpectArray(operand(0), "the operand"));
      if (declared == nullptr) return Fail("needs its shape written");
      TS_RETURN_IF_ERROR(ExpectArray(*declared, "the result"));
      if (opcode == HloOpcode::kReshape || declared->element_type() == operand(0).element_type()) {
        if (declared->ElementCount() != operand(0).ElementCount() ||
            declared->element_type() != operand(0).element_type()) {
          return Fail(ShapeToStringNoLayout(operand(0)) + " cannot become " +
                      ShapeToStringNoLayout(*declared) + " (element counts or types differ)");
        }
      } else if (static_cast<__int128>(declared->ElementCount()) *
                     BitWidth(declared->element_type()) !=
                 static_cast<__int128>(operand(0).ElementCount()) *
                     BitWidth(operand(0).element_type())) {
        return Fail("bitcast from " + ShapeToStringNoLayout(operand(0)) + " to " +
                    ShapeToStringNoLayout(*declared) + " changes the number of bits");
      }
      return *declared;
    }
    case HloOpcode::kTranspose: {
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 1));
      TS_RETURN_IF_ERROR(ExpectArray(operand(0), "the operand"));
      std::span<const int64_t> dims = instruction.dimensions();
      if (static_cast<int64_t>(dims.size()) != operand(0).rank()) {
        return Fail("dimensions=" + DimsText(dims) + " is not a permutation of the operand's " +
                    std::to_string(operand(0).rank()) + " dimensions");
      }
      TS_RETURN_IF_ERROR(ExpectUniqueDims(dims, operand(0).rank(), "dimensions"));
      std::vector<int64_t> result;
      for (int64_t d : dims) result.push_back(operand(0).dim(d));
      return Shape::Array(operand(0).element_type(), std::move(result));
    }
    case HloOpcode::kSlice: {
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 1));
      TS_RETURN_IF_ERROR(ExpectArray(operand(0), "the operand"));
      if (!attributes.slice ||
          static_cast<int64_t>(attributes.slice->size()) != operand(0).rank()) {
        return Fail("slice={…} needs one [start:limit:stride] per operand dimension");
      }
      std::vector<int64_t> result;
      for (int64_t d = 0; d < operand(0).rank(); ++d) {
        const SliceDim& s = (*attributes.slice)[d];
        if (s.start < 0 || s.start > s.limit || s.limit > operand(0).dim(d) || s.stride < 1) {
          return Fail("slice [" + std::to_string(s.start) + ":" + std::to_string(s.limit) + ":" +
                      std::to_string(s.stride) + "] does not fit dimension " + std::to_string(d) +
                      " of size " + std::to_string(operand(0).dim(d)));
        }
        result.push_back((s.limit - s.start + s.stride - 1) / s.stride);
      }
      return Shape::Array(operand(0).element_type(), std::move(result));
    }
    case HloOpcode::kDynamicSlice: {
      if (instruction.operand_count() < 1) return Fail("dynamic-slice needs an operand");
      TS_RETURN_IF_ERROR(ExpectArray(operand(0), "the operand"));
      int64_t rank = operand(0).rank();
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 1 + rank));
      for (int64_t i = 1; i <= rank; ++i) TS_RETURN_IF_ERROR(ExpectScalarIndex(operand(i), i - 1));
      const std::vector<int64_t>& sizes = attributes.dynamic_slice_sizes;
      if (static_cast<int64_t>(sizes.size()) != rank) {
        return Fail("dynamic_slice_sizes needs one size per operand dimension");
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (sizes[d] < 0 || sizes[d] > operand(0).dim(d)) {
          return Fail("dynamic_slice_sizes[" + std::to_string(d) + "]=" + std::to_string(sizes[d]) +
                      " exceeds the dimension size " + std::to_string(operand(0).dim(d)));
        }
      }
      return Shape::Array(operand(0).element_type(), sizes);
    }
    case HloOpcode::kDynamicUpdateSlice: {
      if (instruction.operand_count() < 2) return Fail("needs an operand and an update");
      TS_RETURN_IF_ERROR(ExpectArray(operand(0), "the operand"));
      TS_RETURN_IF_ERROR(ExpectArray(operand(1), "the update"));
      int64_t rank = operand(0).rank();
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 2 + rank));
      if (operand(1).rank() != rank || operand(1).element_type() != operand(0).element_type()) {
        return Fail("the update " + ShapeToStringNoLayout(operand(1)) +
                    " must have the operand's rank and type");
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (operand(1).dim(d) > operand(0).dim(d)) {
          return Fail("the update is larger than the operand in dimension " + std::to_string(d));
        }
      }
      for (int64_t i = 2; i < 2 + rank; ++i)
        TS_RETURN_IF_ERROR(ExpectScalarIndex(operand(i), i - 2));
      return Shape::Array(operand(0).element_type(), DimsOf(operand(0)));
    }
    case HloOpcode::kPad: {
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 2));
      TS_RETURN_IF_ERROR(ExpectArray(operand(0), "the operand"));
      if (!operand(1).IsArray() || operand(1).rank() != 0 ||
          operand(1).element_type() != operand(0).element_type()) {
        return Fail("the padding value must be a scalar of the operand's type");
      }
      if (!attributes.padding ||
          static_cast<int64_t>(attributes.padding->size()) != operand(0).rank()) {
        return Fail("padding= needs one lo_hi[_interior] per operand dimension");
      }
      std::vector<int64_t> result;
      for (int64_t d = 0; d < operand(0).rank(); ++d) {
        const PadDim& p = (*attributes.padding)[d];
        int64_t size = operand(0).dim(d);
        if (p.interior < 0) return Fail("interior padding must be >= 0");
        int64_t padded = p.low + p.high + size + std::max<int64_t>(size - 1, 0) * p.interior;
        if (padded < 0) return Fail("padding makes dimension " + std::to_string(d) + " negative");
        result.push_back(padded);
      }
      return Shape::Array(operand(0).element_type(), std::move(result));
    }
    case HloOpcode::kConcatenate: {
      if (instruction.operand_count() < 1) return Fail("concatenate needs operands");
      TS_RETURN_IF_ERROR(ExpectArray(operand(0), "operand 0"));
      if (instruction.dimensions().size() != 1) return Fail("needs dimensions={d}");
      int64_t dim = instruction.dimensions()[0];
      TS_RETURN_IF_ERROR(
          ExpectUniqueDims(instruction.dimensions(), operand(0).rank(), "dimensions"));
      std::vector<int64_t> result = DimsOf(operand(0));
      for (int64_t i = 1; i < instruction.operand_count(); ++i) {
        const Shape& next = operand(i);
        TS_RETURN_IF_ERROR(ExpectArray(next, "operand " + std::to_string(i)));
        bool same =
            next.rank() == operand(0).rank() && next.element_type() == operand(0).element_type();
        for (int64_t d = 0; same && d < next.rank(); ++d) {
          same = d == dim || next.dim(d) == operand(0).dim(d);
        }
        if (!same) {
          return Fail("operand " + std::to_string(i) + " " + ShapeToStringNoLayout(next) +
                      " does not fit " + ShapeToStringNoLayout(operand(0)) + " along dimension " +
                      std::to_string(dim));
        }
        result[dim] += next.dim(dim);
      }
      return Shape::Array(operand(0).element_type(), std::move(result));
    }
    case HloOpcode::kReverse: {
      TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 1));
      TS_RETURN_IF_ERROR(ExpectArray(operand(0), "the operand"));
      TS_RETURN_IF_ERROR(
          ExpectUniqueDims(instruction.dimensions(), operand(0).rank(), "dimensions"));
      return Shape::Array(operand(0).element_type(), DimsOf(operand(0)));
    }
    case HloOpcode::kReduce:
      return InferReduce(instruction);
    case HloOpcode::kReduceWindow:
      return InferReduceWindow(instruction);
    case HloOpcode::kDot:
      return InferDot(instruction, declared);
    case HloOpcode::kGather:
      return InferGather(instruction);
    case HloOpcode::kScatter:
      return InferScatter(instruction);
    case HloOpcode::kMap:
    case HloOpcode::kSort: {
      if (instruction.operand_count() < 1) return Fail("needs operands");
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        TS_RETURN_IF_ERROR(ExpectArray(operand(i), "operand " + std::to_string(i)));
        if (!std::equal(operand(i).dims().begin(), operand(i).dims().end(),
                        operand(0).dims().begin(), operand(0).dims().end())) {
          return Fail("operands must have the same dimensions");
        }
      }
      if (instruction.called_computations().size() != 1) return Fail("needs to_apply=");
      const HloComputation& callee = *instruction.called_computation(0);
      if (opcode == HloOpcode::kMap) {
        if (callee.parameter_count() != instruction.operand_count()) {
          return Fail("'" + callee.name() + "' must take one scalar per operand");
        }
        for (int64_t i = 0; i < instruction.operand_count(); ++i) {
          const Shape& parameter = callee.parameter(i)->shape();
          if (!parameter.IsArray() || parameter.rank() != 0 ||
              parameter.element_type() != operand(i).element_type()) {
            return Fail("parameter " + std::to_string(i) + " of '" + callee.name() + "' must be " +
                        TypeName(operand(i).element_type()) + "[]");
          }
        }
        const Shape& root = callee.root()->shape();
        if (!root.IsArray() || root.rank() != 0) {
          return Fail("'" + callee.name() + "' must return a scalar");
        }
        return Shape::Array(root.element_type(), DimsOf(operand(0)));
      }
      std::vector<Shape> results;
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        results.push_back(Shape::Array(operand(i).element_type(), DimsOf(operand(i))));
      }
      return MaybeTuple(std::move(results));
    }
    default:
      return InferOpaque(declared);
  }
}

}  // namespace tilesmith::hlo::shape_check
