// Shape inference for gather and scatter, whose dimension numbers need the most checking.
#include <algorithm>

#include "compiler/hlo/hlo_module.h"
#include "compiler/hlo/shape_inference_internal.h"

namespace tilesmith::hlo::shape_check {

Expected<Shape> InferGather(const HloInstruction& instruction) {
  TS_RETURN_IF_ERROR(ExpectOperandCount(instruction, 2));
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& indices = instruction.operand(1)->shape();
  TS_RETURN_IF_ERROR(ExpectArray(operand, "the operand"));
  TS_RETURN_IF_ERROR(ExpectArray(indices, "the start indices"));
  if (!IsIntegral(indices.element_type())) return Fail("start indices must be integers");
  if (!instruction.attributes().gather) return Fail("needs gather dimension numbers");
  const GatherDimensions& g = *instruction.attributes().gather;
  if (g.index_vector_dim < 0 || g.index_vector_dim > indices.rank()) {
    return Fail("index_vector_dim=" + std::to_string(g.index_vector_dim) + " is out of range");
  }
  int64_t index_size = g.index_vector_dim == indices.rank() ? 1 : indices.dim(g.index_vector_dim);
  if (static_cast<int64_t>(g.start_index_map.size()) != index_size) {
    return Fail("start_index_map has " + std::to_string(g.start_index_map.size()) +
                " entries but index vectors have " + std::to_string(index_size));
  }
  TS_RETURN_IF_ERROR(ExpectUniqueDims(g.start_index_map, operand.rank(), "start_index_map"));
  if (static_cast<int64_t>(g.slice_sizes.size()) != operand.rank()) {
    return Fail("slice_sizes needs one entry per operand dimension");
  }
  std::vector<int64_t> dropped = g.collapsed_slice_dims;
  dropped.insert(dropped.end(), g.operand_batching_dims.begin(), g.operand_batching_dims.end());
  TS_RETURN_IF_ERROR(
      ExpectUniqueDims(dropped, operand.rank(), "collapsed_slice_dims+operand_batching_dims"));
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (g.slice_sizes[d] < 0 || g.slice_sizes[d] > operand.dim(d)) {
      return Fail("slice_sizes[" + std::to_string(d) + "]=" + std::to_string(g.slice_sizes[d]) +
                  " exceeds the operand dimension " + std::to_string(operand.dim(d)));
    }
  }
  for (int64_t d : dropped) {
    if (g.slice_sizes[d] > 1) return Fail("collapsed dimensions need slice size <= 1");
  }
  std::vector<int64_t> offset_sizes;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (std::find(dropped.begin(), dropped.end(), d) == dropped.end()) {
      offset_sizes.push_back(g.slice_sizes[d]);
    }
  }
  if (offset_sizes.size() != g.offset_dims.size()) {
    return Fail("offset_dims has " + std::to_string(g.offset_dims.size()) +
                " entries but the slice keeps " + std::to_string(offset_sizes.size()) +
                " dimensions");
  }
  if (g.operand_batching_dims.size() != g.start_indices_batching_dims.size()) {
    return Fail("operand_batching_dims and start_indices_batching_dims must pair up");
  }
  for (size_t i = 0; i < g.start_indices_batching_dims.size(); ++i) {
    int64_t d = g.start_indices_batching_dims[i];
    if (d < 0 || d >= indices.rank() || d == g.index_vector_dim) {
      return Fail("start_indices_batching_dims names dimension " + std::to_string(d) +
                  ", not a batch dimension of the start indices");
    }
    if (indices.dim(d) != operand.dim(g.operand_batching_dims[i])) {
      return Fail("batching dimension sizes differ: " + std::to_string(indices.dim(d)) + " vs " +
                  std::to_string(operand.dim(g.operand_batching_dims[i])));
    }
  }
  std::vector<int64_t> batch_sizes;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != g.index_vector_dim) batch_sizes.push_back(indices.dim(d));
  }
  int64_t rank = static_cast<int64_t>(batch_sizes.size() + offset_sizes.size());
  TS_RETURN_IF_ERROR(ExpectUniqueDims(g.offset_dims, rank, "offset_dims"));
  if (!std::is_sorted(g.offset_dims.begin(), g.offset_dims.end())) {
    return Fail("offset_dims must be sorted");
  }
  std::vector<int64_t> result;
  size_t next_offset = 0;
  size_t next_batch = 0;
  for (int64_t d = 0; d < rank; ++d) {
    bool is_offset =
        std::find(g.offset_dims.begin(), g.offset_dims.end(), d) != g.offset_dims.end();
    result.push_back(is_offset ? offset_sizes[next_offset++] : batch_sizes[next_batch++]);
  }
  return Shape::Array(operand.element_type(), std::move(result));
}

Expected<Shape> InferScatter(const HloInstruction& instruction) {
  int64_t count = instruction.operand_count();
  if (count < 3 || count % 2 == 0) return Fail("takes N operands, the indices and N updates");
  int64_t n = (count - 1) / 2;
  if (!instruction.attributes().scatter) return Fail("needs scatter dimension numbers");
  const ScatterDimensions& s = *instruction.attributes().scatter;
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& indices = instruction.operand(n)->shape();
  const Shape& updates = instruction.operand(n + 1)->shape();
  TS_RETURN_IF_ERROR(ExpectArray(operand, "the operand"));
  TS_RETURN_IF_ERROR(ExpectArray(indices, "the indices"));
  TS_RETURN_IF_ERROR(ExpectArray(updates, "the updates"));
  if (!IsIntegral(indices.element_type())) return Fail("scatter indices must be integers");
  std::vector<PrimitiveType> types;
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& op = instruction.operand(i)->shape();
    const Shape& up = instruction.operand(n + 1 + i)->shape();
    TS_RETURN_IF_ERROR(ExpectArray(op, "operand " + std::to_string(i)));
    TS_RETURN_IF_ERROR(ExpectArray(up, "update " + std::to_string(i)));
    if (!std::equal(op.dims().begin(), op.dims().end(), operand.dims().begin(),
                    operand.dims().end()) ||
        !std::equal(up.dims().begin(), up.dims().end(), updates.dims().begin(),
                    updates.dims().end())) {
      return Fail("all operands (and all updates) must have the same dimensions");
    }
    if (op.element_type() != up.element_type()) {
      return Fail("update " + std::to_string(i) + " must have the operand's element type");
    }
    types.push_back(op.element_type());
    results.push_back(Shape::Array(op.element_type(), DimsOf(op)));
  }
  if (s.index_vector_dim < 0 || s.index_vector_dim > indices.rank()) {
    return Fail("index_vector_dim=" + std::to_string(s.index_vector_dim) + " is out of range");
  }
  int64_t index_size = s.index_vector_dim == indices.rank() ? 1 : indices.dim(s.index_vector_dim);
  if (static_cast<int64_t>(s.scatter_dims_to_operand_dims.size()) != index_size) {
    return Fail("scatter_dims_to_operand_dims has " +
                std::to_string(s.scatter_dims_to_operand_dims.size()) +
                " entries but index vectors have " + std::to_string(index_size));
  }
  TS_RETURN_IF_ERROR(ExpectUniqueDims(s.scatter_dims_to_operand_dims, operand.rank(),
                                      "scatter_dims_to_operand_dims"));
  std::vector<int64_t> dropped = s.inserted_window_dims;
  dropped.insert(dropped.end(), s.input_batching_dims.begin(), s.input_batching_dims.end());
  TS_RETURN_IF_ERROR(
      ExpectUniqueDims(dropped, operand.rank(), "inserted_window_dims+input_batching_dims"));
  TS_RETURN_IF_ERROR(ExpectUniqueDims(s.update_window_dims, updates.rank(), "update_window_dims"));
  if (static_cast<int64_t>(s.update_window_dims.size() + dropped.size()) != operand.rank()) {
    return Fail("update_window_dims plus inserted_window_dims must cover the operand's rank");
  }
  int64_t scatter_rank = indices.rank() - (s.index_vector_dim < indices.rank() ? 1 : 0);
  if (updates.rank() - static_cast<int64_t>(s.update_window_dims.size()) != scatter_rank) {
    return Fail("the updates have " + std::to_string(updates.rank()) + " dimensions; expected " +
                std::to_string(scatter_rank + s.update_window_dims.size()));
  }
  // The update's scatter dimensions are the indices' batch dimensions, in order.
  {
    size_t index_dim = 0;
    for (int64_t d = 0; d < updates.rank(); ++d) {
      if (std::find(s.update_window_dims.begin(), s.update_window_dims.end(), d) !=
          s.update_window_dims.end()) {
        continue;
      }
      if (static_cast<int64_t>(index_dim) == s.index_vector_dim) ++index_dim;
      if (updates.dim(d) != indices.dim(static_cast<int64_t>(index_dim))) {
        return Fail("update dimension " + std::to_string(d) + " (" +
                    std::to_string(updates.dim(d)) + ") does not match indices dimension " +
                    std::to_string(index_dim) + " (" +
                    std::to_string(indices.dim(static_cast<int64_t>(index_dim))) + ")");
      }
      ++index_dim;
    }
  }
  if (s.input_batching_dims.size() != s.scatter_indices_batching_dims.size()) {
    return Fail("input_batching_dims and scatter_indices_batching_dims must pair up");
  }
  // Window sizes may not exceed the operand dims they land in.
  size_t window = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (std::find(dropped.begin(), dropped.end(), d) != dropped.end()) continue;
    int64_t size = updates.dim(s.update_window_dims[window++]);
    if (size > operand.dim(d)) {
      return Fail("update window size " + std::to_string(size) + " exceeds operand dimension " +
                  std::to_string(d) + " (" + std::to_string(operand.dim(d)) + ")");
    }
  }
  TS_RETURN_IF_ERROR(CheckReducer(instruction, types, types));
  return MaybeTuple(std::move(results));
}

}  // namespace tilesmith::hlo::shape_check
