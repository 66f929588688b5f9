// Output -> input maps of ops where one output element reads many input elements: reduce,
// reduce-window, dot and sort. Symbols enumerate those elements.
#include <algorithm>

#include "compiler/analysis/op_indexing_internal.h"

namespace tilesmith::analysis::internal {
namespace {

// Reduced dims become symbols (in dim order), kept dims take the output dims in order.
std::vector<IndexingMap> ReduceMaps(const hlo::HloInstruction& instruction, int64_t output_index) {
  int64_t inputs = instruction.operand_count() / 2;
  std::vector<int64_t> out = DimsOf(OutputShape(instruction, output_index));
  std::vector<int64_t> in = DimsOf(instruction.operand(0)->shape());
  std::span<const int64_t> reduced = instruction.dimensions();
  std::vector<AffineExpr> results;
  std::vector<SymbolVar> symbols;
  int64_t kept = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) {
      results.push_back(AffineExpr::Symbol(symbols.size()));
      symbols.push_back({Interval::ForSize(in[d])});
    } else {
      results.push_back(AffineExpr::Dim(kept++));
    }
  }
  IndexingMap input = MakeMap(out, std::move(symbols), std::move(results));
  std::vector<IndexingMap> maps(inputs, input);
  maps.resize(2 * inputs, ScalarMap(out));
  return maps;
}

// Window position s of output o lands at o * stride + s * dilation - padding_low in the
// base-dilated, padded input; it is an input element when that is a multiple of the base
// dilation inside the input.
std::vector<IndexingMap> ReduceWindowMaps(const hlo::HloInstruction& instruction,
                                          int64_t output_index) {
  int64_t inputs = instruction.operand_count() / 2;
  std::vector<int64_t> out = DimsOf(OutputShape(instruction, output_index));
  std::vector<int64_t> in = DimsOf(instruction.operand(0)->shape());
  const std::vector<hlo::WindowDim>& window = *instruction.attributes().window;
  std::vector<AffineExpr> results;
  std::vector<SymbolVar> symbols;
  std::vector<Constraint> constraints;
  for (size_t d = 0; d < in.size(); ++d) {
    const hlo::WindowDim& w = window[d];
    AffineExpr position = AffineExpr::Dim(d) * w.stride +
                          AffineExpr::Symbol(symbols.size()) * w.window_dilation - w.padding_low;
    symbols.push_back({Interval::ForSize(w.size)});
    results.push_back(position.FloorDiv(w.base_dilation));
    constraints.push_back({position, {0, (in[d] - 1) * w.base_dilation}});
    if (w.base_dilation > 1) constraints.push_back({position.Mod(w.base_dilation), {0, 0}});
  }
  IndexingMap input = MakeMap(out, std::move(symbols), std::move(results), std::move(constraints));
  std::vector<IndexingMap> maps(inputs, input);
  maps.resize(2 * inputs, ScalarMap(out));
  return maps;
}

// Output dims are batch, then lhs free, then rhs free dims; contracting dims are symbols
// shared by both operands.
std::vector<IndexingMap> DotMaps(const hlo::HloInstruction& instruction) {
  // A dot written without dimension numbers contracts nothing: an outer product.
  const hlo::DotDimensions dot = instruction.attributes().dot.value_or(hlo::DotDimensions{});
  std::vector<int64_t> out = DimsOf(instruction.shape());
  std::vector<SymbolVar> symbols;
  std::vector<int64_t> lhs = DimsOf(instruction.operand(0)->shape());
  for (int64_t d : dot.lhs_contracting) symbols.push_back({Interval::ForSize(lhs[d])});
  int64_t next_free_dim = static_cast<int64_t>(dot.lhs_batch.size());
  auto operand_map = [&](int64_t operand, const std::vector<int64_t>& batch,
                         const std::vector<int64_t>& contracting) {
    int64_t rank = instruction.operand(operand)->shape().rank();
    std::vector<AffineExpr> results(rank);
    std::vector<bool> assigned(rank, false);
    for (size_t i = 0; i < batch.size(); ++i) {
      results[batch[i]] = AffineExpr::Dim(i);
      assigned[batch[i]] = true;
    }
    for (size_t i = 0; i < contracting.size(); ++i) {
      results[contracting[i]] = AffineExpr::Symbol(i);
      assigned[contracting[i]] = true;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (!assigned[d]) results[d] = AffineExpr::Dim(next_free_dim++);
    }
    return MakeMap(out, symbols, std::move(results));
  };
  IndexingMap lhs_map = operand_map(0, dot.lhs_batch, dot.lhs_contracting);
  IndexingMap rhs_map = operand_map(1, dot.rhs_batch, dot.rhs_contracting);
  return {lhs_map, rhs_map};
}

// Every element of a sorted row may end up anywhere in it.
std::vector<IndexingMap> SortMaps(const hlo::HloInstruction& instruction, int64_t output_index) {
  std::vector<int64_t> out = DimsOf(OutputShape(instruction, output_index));
  int64_t dim = instruction.dimensions()[0];
  std::vector<AffineExpr> results = DimExprs(out.size());
  results[dim] = AffineExpr::Symbol(0);
  IndexingMap row = MakeMap(out, {{Interval::ForSize(out[dim])}}, std::move(results));
  return std::vector<IndexingMap>(instruction.operand_count(), row);
}

}  // namespace

std::vector<IndexingMap> ReductionOutputToInput(const hlo::HloInstruction& instruction,
                                                int64_t output_index) {
  switch (instruction.opcode()) {
    case hlo::HloOpcode::kReduce:
      return ReduceMaps(instruction, output_index);
    case hlo::HloOpcode::kReduceWindow:
      return ReduceWindowMaps(instruction, output_index);
    case hlo::HloOpcode::kDot:
      return DotMaps(instruction);
    case hlo::HloOpcode::kSort:
      return SortMaps(instruction, output_index);
    default:
      return {};
  }
}

}  // namespace tilesmith::analysis::internal
