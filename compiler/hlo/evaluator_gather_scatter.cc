// gather and scatter with XLA's dimension numbers. Both loop over the index vectors (every
// position of the indices' dimensions other than index_vector_dim) and move one window per
// vector as a box: gather copies an operand slice into the output, scatter combines an
// update window into the operand.
#include <algorithm>

#include "compiler/hlo/evaluator_combiner.h"
#include "compiler/hlo/evaluator_index.h"
#include "compiler/hlo/evaluator_ops.h"
#include "compiler/hlo/hlo_module.h"

namespace tilesmith::hlo::eval {
namespace {

bool Contains(std::span<const int64_t> values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// Numbers 0..rank-1 that are not in `excluded`, in order.
std::vector<int64_t> DimsExcept(int64_t rank, std::span<const int64_t> excluded) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(excluded, d)) dims.push_back(d);
  }
  return dims;
}

// The index vectors of gather/scatter and how they map to operand start positions.
class IndexVectors {
 public:
  /// `start_map[k]`: the operand dimension component k of a vector indexes.
  /// `operand_batching[i]` is indexed by the position along `indices_batching[i]`.
  static Expected<IndexVectors> Create(const Literal& indices, int64_t index_vector_dim,
                                       std::span<const int64_t> start_map,
                                       std::span<const int64_t> operand_batching,
                                       std::span<const int64_t> indices_batching) {
    IndexVectors vectors(indices, start_map, operand_batching);
    const Shape& shape = indices.shape();
    std::vector<int64_t> strides = RowMajorStrides(shape.dims());
    const bool implicit = index_vector_dim == shape.rank();  // a trailing vector of size 1
    vectors.vector_stride_ = implicit ? 0 : strides[index_vector_dim];
    std::vector<int64_t> batch_dims;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (d == index_vector_dim) continue;
      batch_dims.push_back(d);
      vectors.batch_sizes_.push_back(shape.dim(d));
      vectors.batch_strides_.push_back(strides[d]);
    }
    if (operand_batching.size() != indices_batching.size()) {
      return InvalidArgument("the operand and the indices list different numbers of batching dims");
    }
    for (int64_t d : indices_batching) {
      auto found = std::find(batch_dims.begin(), batch_dims.end(), d);
      if (found == batch_dims.end()) {
        return InvalidArgument("batching dim " + std::to_string(d) +
                               " is not a batch dimension of the indices " +
                               ShapeToStringNoLayout(shape));
      }
      vectors.batching_positions_.push_back(found - batch_dims.begin());
    }
    return vectors;
  }

  /// Sizes of the batch positions, in the order of the indices' dimensions.
  std::span<const int64_t> batch_sizes() const { return batch_sizes_; }

  /// The operand start of the vector at batch `position`, unclamped; 0 where the vector
  /// says nothing.
  void Starts(std::span<const int64_t> position, std::span<int64_t> starts) const {
    std::fill(starts.begin(), starts.end(), 0);
    int64_t base = 0;
    for (size_t j = 0; j < position.size(); ++j) base += position[j] * batch_strides_[j];
    for (size_t k = 0; k < start_map_.size(); ++k) {
      starts[start_map_[k]] = ReadIndex(indices_, base + static_cast<int64_t>(k) * vector_stride_);
    }
    for (size_t i = 0; i < operand_batching_.size(); ++i) {
      starts[operand_batching_[i]] = position[batching_positions_[i]];
    }
  }

 private:
  IndexVectors(const Literal& indices, std::span<const int64_t> start_map,
               std::span<const int64_t> operand_batching)
      : indices_(indices), start_map_(start_map), operand_batching_(operand_batching) {}

  const Literal& indices_;
  std::span<const int64_t> start_map_;
  std::span<const int64_t> operand_batching_;
  std::vector<int64_t> batch_sizes_;
  std::vector<int64_t> batch_strides_;
  std::vector<int64_t> batching_positions_;  // per indices_batching entry, its batch position
  int64_t vector_stride_ = 0;
};

int64_t ElementCount(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

}  // namespace

// Each start is clamped so that the whole slice fits in the operand (XLA semantics).
Expected<Literal> EvaluateGather(const HloInstruction& instruction, Operands operands,
                                 const Context& context) {
  const Literal& operand = *operands[0];
  const GatherDimensions& g = *instruction.attributes().gather;
  const Shape& shape = instruction.shape();
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(shape));
  TS_ASSIGN_OR_RETURN(IndexVectors vectors,
                      IndexVectors::Create(*operands[1], g.index_vector_dim, g.start_index_map,
                                           g.operand_batching_dims, g.start_indices_batching_dims));
  const Shape& operand_shape = operand.shape();
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  std::vector<int64_t> operand_strides = RowMajorStrides(operand_shape.dims());
  // Output batch dims follow the indices' batch positions in order; offset dims follow the
  // operand dims that are neither collapsed nor batching, in order.
  std::vector<int64_t> batch_out_dims = DimsExcept(shape.rank(), g.offset_dims);
  std::vector<int64_t> dropped = g.collapsed_slice_dims;
  dropped.insert(dropped.end(), g.operand_batching_dims.begin(), g.operand_batching_dims.end());
  std::vector<int64_t> window_dims = DimsExcept(operand_shape.rank(), dropped);
  Walk walk;
  for (size_t k = 0; k < window_dims.size(); ++k) {
    walk.Add(g.slice_sizes[window_dims[k]], out_strides[g.offset_dims[k]],
             operand_strides[window_dims[k]]);
  }
  std::vector<int64_t> position(vectors.batch_sizes().size(), 0);
  std::vector<int64_t> starts(operand_shape.rank());
  WalkScratch scratch;
  for (int64_t n = ElementCount(vectors.batch_sizes()); n > 0; --n) {
    vectors.Starts(position, starts);
    walk.a_offset = 0;
    walk.b_offset = 0;
    for (size_t j = 0; j < position.size(); ++j) {
      walk.a_offset += position[j] * out_strides[batch_out_dims[j]];
    }
    for (int64_t d = 0; d < operand_shape.rank(); ++d) {
      int64_t start = std::clamp<int64_t>(starts[d], 0, operand_shape.dim(d) - g.slice_sizes[d]);
      walk.b_offset += start * operand_strides[d];
    }
    CopyBox(walk, result, operand, &scratch);
    NextIndex(position, vectors.batch_sizes());
  }
  return result;
}

// Update windows are combined in the order of their index vectors; a window that does not
// fit entirely inside the operand is skipped (XLA semantics).
Expected<Literal> EvaluateScatter(const HloInstruction& instruction, Operands operands,
                                  const Context& context) {
  const size_t n = (operands.size() - 1) / 2;
  Operands inputs = operands.subspan(0, n);
  Operands updates = operands.subspan(n + 1, n);
  const ScatterDimensions& s = *instruction.attributes().scatter;
  TS_ASSIGN_OR_RETURN(Literal result, context.Allocate(instruction.shape()));
  std::span<Literal> outputs = n == 1 ? std::span<Literal>(&result, 1) : result.tuple_elements();
  std::vector<PrimitiveType> types;
  for (size_t k = 0; k < n; ++k) {
    TS_RETURN_IF_ERROR(CopyInto(*inputs[k], outputs[k]));
    types.push_back(inputs[k]->element_type());
  }
  TS_ASSIGN_OR_RETURN(Combiner combiner,
                      Combiner::Create(*instruction.called_computation(0), types, types, context));
  TS_ASSIGN_OR_RETURN(
      IndexVectors vectors,
      IndexVectors::Create(*operands[n], s.index_vector_dim, s.scatter_dims_to_operand_dims,
                           s.input_batching_dims, s.scatter_indices_batching_dims));
  const Shape& operand_shape = inputs[0]->shape();
  const Shape& update_shape = updates[0]->shape();
  std::vector<int64_t> operand_strides = RowMajorStrides(operand_shape.dims());
  std::vector<int64_t> update_strides = RowMajorStrides(update_shape.dims());
  std::vector<int64_t> scatter_dims = DimsExcept(update_shape.rank(), s.update_window_dims);
  std::vector<int64_t> dropped = s.inserted_window_dims;
  dropped.insert(dropped.end(), s.input_batching_dims.begin(), s.input_batching_dims.end());
  std::vector<int64_t> window_dims = DimsExcept(operand_shape.rank(), dropped);
  std::vector<int64_t> window_sizes(operand_shape.rank(), 1);
  Walk walk;
  for (size_t k = 0; k < window_dims.size(); ++k) {
    const int64_t update_dim = s.update_window_dims[k];
    window_sizes[window_dims[k]] = update_shape.dim(update_dim);
    walk.Add(update_shape.dim(update_dim), operand_strides[window_dims[k]],
             update_strides[update_dim]);
  }
  bool matching = scatter_dims.size() == vectors.batch_sizes().size();
  for (size_t j = 0; matching && j < scatter_dims.size(); ++j) {
    matching = update_shape.dim(scatter_dims[j]) == vectors.batch_sizes()[j];
  }
  if (!matching) {
    return InvalidArgument("the scatter dimensions of the updates " +
                           ShapeToStringNoLayout(update_shape) + " do not match the indices " +
                           ShapeToStringNoLayout(operands[n]->shape()));
  }
  std::vector<int64_t> position(vectors.batch_sizes().size(), 0);
  std::vector<int64_t> starts(operand_shape.rank());
  WalkScratch scratch;
  Status status = OkStatus();
  auto combine_row = [&](int64_t a, int64_t b, int64_t count, int64_t a_stride, int64_t b_stride) {
    if (status) status = combiner.Combine(outputs, a, a_stride, updates, b, b_stride, count);
  };
  for (int64_t remaining = ElementCount(vectors.batch_sizes()); remaining > 0; --remaining) {
    vectors.Starts(position, starts);
    bool fits = true;
    for (int64_t d = 0; d < operand_shape.rank(); ++d) {
      fits = fits && starts[d] >= 0 && starts[d] <= operand_shape.dim(d) - window_sizes[d];
    }
    if (fits) {
      walk.a_offset = 0;
      walk.b_offset = 0;
      for (int64_t d = 0; d < operand_shape.rank(); ++d) {
        walk.a_offset += starts[d] * operand_strides[d];
      }
      for (size_t j = 0; j < position.size(); ++j) {
        walk.b_offset += position[j] * update_strides[scatter_dims[j]];
      }
      ForEachRow(walk, scratch, combine_row);
      TS_RETURN_IF_ERROR(status);
    }
    NextIndex(position, vectors.batch_sizes());
  }
  return result;
}

}  // namespace tilesmith::hlo::eval
