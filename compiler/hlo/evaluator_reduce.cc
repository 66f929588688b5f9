// reduce and reduce-window. Both start every accumulator at its init value and combine the
// reduced elements into it in their linear (row-major) order, through a `Combiner`.
#include <algorithm>

#include "compiler/hlo/evaluator_combiner.h"
#include "compiler/hlo/evaluator_index.h"
#include "compiler/hlo/evaluator_ops.h"
#include "compiler/hlo/hlo_module.h"

namespace tilesmith::hlo::eval {
namespace {

// The N inputs, N init values and N results of a variadic reduce-like op.
struct Reduction {
  Operands inputs;
  Operands inits;
  Literal result;
  /// The result itself, or its tuple elements when N > 1.
  std::span<Literal> accumulators() {
    return inputs.size() == 1 ? std::span<Literal>(&result, 1) : result.tuple_elements();
  }
};

// Splits the operands and allocates the result with every element at its init value.
Expected<Reduction> StartReduction(const HloInstruction& instruction, Operands operands,
                                   const Context& context) {
  Reduction reduction;
  const size_t n = operands.size() / 2;
  reduction.inputs = operands.subspan(0, n);
  reduction.inits = operands.subspan(n, n);
  TS_ASSIGN_OR_RETURN(reduction.result, context.Allocate(instruction.shape()));
  for (size_t k = 0; k < n; ++k) {
    Literal& accumulator = reduction.accumulators()[k];
    Walk fill;
    fill.Add(accumulator.element_count(), 1, 0);
    CopyBox(fill, accumulator, *reduction.inits[k]);
  }
  return reduction;
}

Expected<Combiner> MakeCombiner(const HloInstruction& instruction, const Reduction& reduction,
                                const Context& context) {
  std::vector<PrimitiveType> accumulator_types;
  std::vector<PrimitiveType> value_types;
  for (size_t k = 0; k < reduction.inputs.size(); ++k) {
    accumulator_types.push_back(reduction.inits[k]->element_type());
    value_types.push_back(reduction.inputs[k]->element_type());
  }
  return Combiner::Create(*instruction.called_computation(0), accumulator_types, value_types,
                          context);
}

// The input positions one window dimension covers for one output position, as an
// arithmetic progression (padding and base-dilation holes are skipped, as XLA does).
struct WindowSpan {
  int64_t first = 0;
  int64_t step = 1;
  int64_t count = 0;
};

WindowSpan SpanOf(const WindowDim& window, int64_t input_size, int64_t output_index) {
  WindowSpan span;
  const int64_t last = (input_size - 1) * window.base_dilation;
  int64_t previous = 0;
  for (int64_t w = 0; w < window.size; ++w) {
    int64_t position =
        output_index * window.stride + w * window.window_dilation - window.padding_low;
    if (position < 0 || position > last || position % window.base_dilation != 0) continue;
    int64_t input = position / window.base_dilation;
    if (span.count == 0) span.first = input;
    if (span.count == 1) span.step = input - previous;
    previous = input;
    ++span.count;
  }
  return span;
}

}  // namespace

Expected<Literal> EvaluateReduce(const HloInstruction& instruction, Operands operands,
                                 const Context& context) {
  TS_ASSIGN_OR_RETURN(Reduction reduction, StartReduction(instruction, operands, context));
  TS_ASSIGN_OR_RETURN(Combiner combiner, MakeCombiner(instruction, reduction, context));
  const Shape& input = reduction.inputs[0]->shape();
  std::span<const int64_t> reduced = instruction.dimensions();
  std::vector<int64_t> kept_dims;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) {
      kept_dims.push_back(input.dim(d));
    }
  }
  // Walking the input in linear order visits each output's reduced elements in their
  // linear order too, so accumulating as we go keeps the documented order.
  std::vector<int64_t> in_strides = RowMajorStrides(input.dims());
  std::vector<int64_t> out_strides = RowMajorStrides(kept_dims);
  Walk walk;
  size_t kept = 0;
  for (int64_t d = 0; d < input.rank(); ++d) {
    bool is_reduced = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    walk.Add(input.dim(d), is_reduced ? 0 : out_strides[kept++], in_strides[d]);
  }
  Status status = OkStatus();
  ForEachRow(walk, [&](int64_t a, int64_t b, int64_t count, int64_t a_stride, int64_t b_stride) {
    if (status) {
      status = combiner.Combine(reduction.accumulators(), a, a_stride, reduction.inputs, b,
                                b_stride, count);
    }
  });
  TS_RETURN_IF_ERROR(status);
  return std::move(reduction.result);
}

Expected<Literal> EvaluateReduceWindow(const HloInstruction& instruction, Operands operands,
                                       const Context& context) {
  TS_ASSIGN_OR_RETURN(Reduction reduction, StartReduction(instruction, operands, context));
  TS_ASSIGN_OR_RETURN(Combiner combiner, MakeCombiner(instruction, reduction, context));
  const Shape& input = reduction.inputs[0]->shape();
  const Shape& output = reduction.accumulators()[0].shape();
  const std::vector<WindowDim>& window = *instruction.attributes().window;
  const int64_t rank = input.rank();
  // spans[d][o]: what window dimension d covers at output index o.
  std::vector<std::vector<WindowSpan>> spans(rank);
  for (int64_t d = 0; d < rank; ++d) {
    for (int64_t o = 0; o < output.dim(d); ++o) {
      spans[d].push_back(SpanOf(window[d], input.dim(d), o));
    }
  }
  std::vector<int64_t> in_strides = RowMajorStrides(input.dims());
  std::vector<int64_t> index(rank, 0);
  Walk walk;
  walk.dims.resize(rank);
  walk.a_strides.assign(rank, 0);
  walk.b_strides.resize(rank);
  std::span<Literal> accumulators = reduction.accumulators();
  WalkScratch scratch;
  Status status = OkStatus();
  auto combine_row = [&](int64_t a, int64_t b, int64_t count, int64_t a_stride, int64_t b_stride) {
    if (status) {
      status = combiner.Combine(accumulators, a, a_stride, reduction.inputs, b, b_stride, count);
    }
  };
  for (int64_t out = 0; out < output.ElementCount(); ++out) {
    walk.a_offset = out;
    walk.b_offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const WindowSpan& span = spans[d][index[d]];
      walk.dims[d] = span.count;
      walk.b_strides[d] = span.step * in_strides[d];
      walk.b_offset += span.first * in_strides[d];
    }
    ForEachRow(walk, scratch, combine_row);
    TS_RETURN_IF_ERROR(status);
    NextIndex(index, output.dims());
  }
  return std::move(reduction.result);
}

}  // namespace tilesmith::hlo::eval
