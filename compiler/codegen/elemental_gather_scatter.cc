// Gather and scatter elements: their reads depend on index data, so instead of indexing
// maps they load the start indices and build the operand index from them (XLA's
// semantics: gather clamps starts into bounds; scatter skips updates whose window does not
// fit, and combines the rest in order).
#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/loop_builder.h"

namespace tilesmith::codegen {
namespace {

using analysis::AffineExpr;
using analysis::Interval;
using hlo::HloInstruction;
using hlo::PrimitiveType;

bool Contains(std::span<const int64_t> values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// The `k`-th component of the index vector at batch position `batch` (the indices
// operand's dims other than index_vector_dim, in order), as an i64.
Expected<llvm::Value*> StartComponent(ElementalEmitter& emitter, const HloInstruction& indices,
                                      int64_t index_vector_dim, std::span<const AffineExpr> batch,
                                      int64_t k) {
  std::vector<AffineExpr> position;
  size_t next = 0;
  for (int64_t d = 0; d < indices.shape().rank(); ++d) {
    position.push_back(d == index_vector_dim ? AffineExpr::Constant(k) : batch[next++]);
  }
  TS_ASSIGN_OR_RETURN(ScalarValue value, emitter.EmitElement(indices, position));
  return IndexAsInt64(emitter.builder(), value);
}

}  // namespace

Expected<ScalarValue> EmitGatherElement(ElementalEmitter& emitter, const HloInstruction& gather,
                                        std::span<const AffineExpr> index) {
  const hlo::GatherDimensions& g = *gather.attributes().gather;
  const HloInstruction& operand = *gather.operand(0);
  const HloInstruction& indices = *gather.operand(1);
  const hlo::Shape& operand_shape = operand.shape();
  // Output dims not in offset_dims are the batch dims, in order.
  std::vector<AffineExpr> batch;
  std::vector<AffineExpr> offsets;
  for (int64_t d = 0; d < gather.shape().rank(); ++d) {
    (Contains(g.offset_dims, d) ? offsets : batch).push_back(index[d]);
  }
  std::vector<AffineExpr> operand_index(operand_shape.rank(), AffineExpr::Constant(0));
  for (size_t k = 0; k < g.start_index_map.size(); ++k) {
    int64_t dim = g.start_index_map[k];
    TS_ASSIGN_OR_RETURN(llvm::Value * start, StartComponent(emitter, indices, g.index_vector_dim,
                                                            batch, static_cast<int64_t>(k)));
    int64_t upper = operand_shape.dim(dim) - g.slice_sizes[dim];
    operand_index[dim] = emitter.env().AddVariable(ClampIndex(emitter.builder(), start, 0, upper),
                                                   Interval{0, upper});
  }
  // Batching dims of the operand follow the matching batch dims of the indices.
  std::vector<int64_t> indices_batch_dims;
  for (int64_t d = 0; d < indices.shape().rank(); ++d) {
    if (d != g.index_vector_dim) indices_batch_dims.push_back(d);
  }
  for (size_t i = 0; i < g.operand_batching_dims.size(); ++i) {
    int64_t position = std::find(indices_batch_dims.begin(), indices_batch_dims.end(),
                                 g.start_indices_batching_dims[i]) -
                       indices_batch_dims.begin();
    operand_index[g.operand_batching_dims[i]] = batch[position];
  }
  size_t next_offset = 0;
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    if (Contains(g.collapsed_slice_dims, d) || Contains(g.operand_batching_dims, d)) continue;
    operand_index[d] = operand_index[d] + offsets[next_offset++];
  }
  return emitter.EmitElement(operand, operand_index);
}

Expected<ScalarValue> EmitScatterElement(ElementalEmitter& emitter, const HloInstruction& scatter,
                                         std::span<const AffineExpr> index, int64_t tuple_index) {
  const hlo::ScatterDimensions& s = *scatter.attributes().scatter;
  int64_t n = (scatter.operand_count() - 1) / 2;
  const HloInstruction& indices = *scatter.operand(n);
  const hlo::Shape& operand_shape = scatter.operand(0)->shape();
  const hlo::Shape& update_shape = scatter.operand(n + 1)->shape();
  llvm::IRBuilder<>& b = emitter.builder();

  std::vector<ScalarValue> values;
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) {
    TS_ASSIGN_OR_RETURN(ScalarValue value, emitter.EmitElement(*scatter.operand(i), index));
    values.push_back(value);
    types.push_back(value.type);
  }
  std::vector<int64_t> scatter_dims;  // update dims that enumerate updates
  for (int64_t d = 0; d < update_shape.rank(); ++d) {
    if (!Contains(s.update_window_dims, d)) scatter_dims.push_back(d);
  }
  std::vector<int64_t> window_dims;  // operand dims the update window spans, in order
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    if (!Contains(s.inserted_window_dims, d) && !Contains(s.input_batching_dims, d)) {
      window_dims.push_back(d);
    }
  }
  std::vector<int64_t> indices_batch_dims;
  for (int64_t d = 0; d < indices.shape().rank(); ++d) {
    if (d != s.index_vector_dim) indices_batch_dims.push_back(d);
  }

  auto pack = [&](std::span<const ScalarValue> v) {
    std::vector<llvm::Type*> t;
    for (const ScalarValue& x : v) t.push_back(x.value->getType());
    llvm::Value* packed = llvm::UndefValue::get(llvm::StructType::get(b.getContext(), t));
    for (size_t i = 0; i < v.size(); ++i)
      packed = b.CreateInsertValue(packed, v[i].value, {unsigned(i)});
    return packed;
  };
  auto unpack = [&](llvm::Value* packed) {
    std::vector<ScalarValue> v;
    for (size_t i = 0; i < types.size(); ++i)
      v.push_back({b.CreateExtractValue(packed, {unsigned(i)}), types[i]});
    return v;
  };

  std::vector<AffineExpr> update_position;  // the scatter dims' loop variables
  std::function<Expected<std::vector<ScalarValue>>(size_t, std::vector<ScalarValue>)> nest =
      [&](size_t depth, std::vector<ScalarValue> current) -> Expected<std::vector<ScalarValue>> {
    if (depth < scatter_dims.size()) {
      int64_t size = update_shape.dim(scatter_dims[depth]);
      TS_ASSIGN_OR_RETURN(
          std::vector<llvm::Value*> result,
          EmitCountedLoop(
              b, b.getInt64(0), b.getInt64(size), {pack(current)},
              [&](llvm::Value* i,
                  std::vector<llvm::Value*> carried) -> Expected<std::vector<llvm::Value*>> {
                emitter.PushScope();
                update_position.push_back(emitter.env().AddVariable(i, Interval::ForSize(size)));
                auto next = nest(depth + 1, unpack(carried[0]));
                update_position.pop_back();
                emitter.PopScope();
                if (!next) return std::unexpected(next.error());
                return std::vector<llvm::Value*>{pack(*next)};
              },
              "scatter"));
      return unpack(result[0]);
    }
    // One update: where its window starts in the operand.
    std::vector<llvm::Value*> start(operand_shape.rank(), b.getInt64(0));
    for (size_t k = 0; k < s.scatter_dims_to_operand_dims.size(); ++k) {
      TS_ASSIGN_OR_RETURN(start[s.scatter_dims_to_operand_dims[k]],
                          StartComponent(emitter, indices, s.index_vector_dim, update_position,
                                         static_cast<int64_t>(k)));
    }
    for (size_t i = 0; i < s.input_batching_dims.size(); ++i) {
      int64_t position = std::find(indices_batch_dims.begin(), indices_batch_dims.end(),
                                   s.scatter_indices_batching_dims[i]) -
                         indices_batch_dims.begin();
      start[s.input_batching_dims[i]] = emitter.env().Emit(update_position[position]);
    }
    llvm::Value* applies = b.getTrue();
    std::vector<AffineExpr> window;
    for (int64_t d = 0; d < operand_shape.rank(); ++d) {
      bool is_window = Contains(window_dims, d);
      int64_t extent = 1;
      if (is_window) {
        size_t k = std::find(window_dims.begin(), window_dims.end(), d) - window_dims.begin();
        extent = update_shape.dim(s.update_window_dims[k]);
      }
      // The whole window must fit in the operand, and it must cover this element.
      applies = b.CreateAnd(applies, b.CreateICmpSGE(start[d], b.getInt64(0)));
      applies = b.CreateAnd(applies,
                            b.CreateICmpSLE(start[d], b.getInt64(operand_shape.dim(d) - extent)));
      llvm::Value* offset = b.CreateSub(emitter.env().Emit(index[d]), start[d]);
      applies = b.CreateAnd(applies, b.CreateICmpSGE(offset, b.getInt64(0)));
      applies = b.CreateAnd(applies, b.CreateICmpSLT(offset, b.getInt64(extent)));
      if (is_window) {
        window.push_back(emitter.env().AddVariable(offset, Interval::ForSize(extent)));
      }
    }
    std::vector<AffineExpr> update_index(update_shape.rank(), AffineExpr::Constant(0));
    for (size_t k = 0; k < scatter_dims.size(); ++k)
      update_index[scatter_dims[k]] = update_position[k];
    for (size_t k = 0; k < s.update_window_dims.size(); ++k)
      update_index[s.update_window_dims[k]] = window[k];
    TS_ASSIGN_OR_RETURN(
        llvm::Value * packed,
        EmitIfElse(
            b, applies,
            [&]() -> Expected<llvm::Value*> {
              emitter.PushScope();
              std::vector<ScalarValue> args = current;
              for (int64_t i = 0; i < n; ++i) {
                auto update = emitter.EmitElement(*scatter.operand(n + 1 + i), update_index);
                if (!update) {
                  emitter.PopScope();
                  return std::unexpected(update.error());
                }
                args.push_back(*update);
              }
              auto combined = emitter.CallScalarComputation(*scatter.called_computation(), args);
              emitter.PopScope();
              if (!combined) return std::unexpected(combined.error());
              return pack(*combined);
            },
            [&]() -> Expected<llvm::Value*> { return pack(current); }));
    return unpack(packed);
  };
  TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> result, nest(0, values));
  return result[std::max<int64_t>(tuple_index, 0)];
}

Expected<std::pair<llvm::Value*, std::vector<AffineExpr>>> ScatterTarget(
    ElementalEmitter& emitter, const HloInstruction& scatter,
    std::span<const AffineExpr> update_index) {
  const hlo::ScatterDimensions& s = *scatter.attributes().scatter;
  const HloInstruction& indices = *scatter.operand(1);
  const hlo::Shape& operand_shape = scatter.operand(0)->shape();
  const hlo::Shape& update_shape = scatter.operand(2)->shape();
  llvm::IRBuilder<>& b = emitter.builder();
  std::vector<AffineExpr> batch;   // the update's scatter dims
  std::vector<AffineExpr> window;  // its window dims
  for (int64_t d = 0; d < update_shape.rank(); ++d) {
    (Contains(s.update_window_dims, d) ? window : batch).push_back(update_index[d]);
  }
  std::vector<llvm::Value*> start(operand_shape.rank(), b.getInt64(0));
  for (size_t k = 0; k < s.scatter_dims_to_operand_dims.size(); ++k) {
    TS_ASSIGN_OR_RETURN(
        start[s.scatter_dims_to_operand_dims[k]],
        StartComponent(emitter, indices, s.index_vector_dim, batch, static_cast<int64_t>(k)));
  }
  llvm::Value* fits = b.getTrue();
  std::vector<AffineExpr> target;
  size_t next_window = 0;
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    bool is_window = !Contains(s.inserted_window_dims, d);
    int64_t extent = is_window ? update_shape.dim(s.update_window_dims[next_window]) : 1;
    int64_t upper = operand_shape.dim(d) - extent;
    fits = b.CreateAnd(fits, b.CreateICmpSGE(start[d], b.getInt64(0)));
    fits = b.CreateAnd(fits, b.CreateICmpSLE(start[d], b.getInt64(upper)));
    // Inside the window's range once it fits: the clamp only keeps the address in bounds
    // for the code that the branch skips.
    AffineExpr origin =
        emitter.env().AddVariable(ClampIndex(b, start[d], 0, std::max<int64_t>(upper, 0)),
                                  Interval{0, std::max<int64_t>(upper, 0)});
    target.push_back(is_window ? origin + window[next_window++] : origin);
  }
  return std::pair{fits, std::move(target)};
}

}  // namespace tilesmith::codegen
