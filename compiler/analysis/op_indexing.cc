// Output -> input and input -> output maps of index-only and elementwise ops. Reductions,
// windows and dots are in op_indexing_reductions.cc.
#include "compiler/analysis/op_indexing.h"

#include <numeric>

#include "compiler/analysis/layout_indexing.h"
#include "compiler/analysis/op_indexing_internal.h"
#include "compiler/hlo/tiling.h"

namespace tilesmith::analysis {
namespace internal {

std::vector<int64_t> DimsOf(const hlo::Shape& shape) {
  if (!shape.IsArray()) return {};
  return std::vector<int64_t>(shape.dims().begin(), shape.dims().end());
}

const hlo::Shape& OutputShape(const hlo::HloInstruction& instruction, int64_t output_index) {
  const hlo::Shape& shape = instruction.shape();
  return shape.IsTuple() ? shape.tuple_element(output_index) : shape;
}

std::vector<AffineExpr> DimExprs(int64_t count) {
  std::vector<AffineExpr> dims;
  for (int64_t i = 0; i < count; ++i) dims.push_back(AffineExpr::Dim(i));
  return dims;
}

IndexingMap MakeMap(std::span<const int64_t> sizes, std::vector<SymbolVar> symbols,
                    std::vector<AffineExpr> results, std::vector<Constraint> constraints) {
  IndexingMap map(RangesForSizes(sizes), std::move(symbols), std::move(results),
                  std::move(constraints));
  map.Simplify();
  map.RemoveUnusedSymbols();
  return map;
}

IndexingMap ScalarMap(std::span<const int64_t> sizes) { return MakeMap(sizes, {}, {}); }

IndexingMap BroadcastScalarMap(std::span<const int64_t> sizes) {
  std::vector<SymbolVar> symbols;
  std::vector<AffineExpr> results;
  for (size_t i = 0; i < sizes.size(); ++i) {
    symbols.push_back({Interval::ForSize(sizes[i])});
    results.push_back(AffineExpr::Symbol(i));
  }
  return MakeMap({}, std::move(symbols), std::move(results));
}

}  // namespace internal

namespace {

using internal::DimExprs;
using internal::DimsOf;
using internal::MakeMap;

// Row-major linear index of `index` over `sizes`.
AffineExpr Linearize(std::span<const AffineExpr> index, std::span<const int64_t> sizes) {
  AffineExpr linear;
  for (size_t i = 0; i < index.size(); ++i) linear = linear * sizes[i] + index[i];
  return linear;
}

// The row-major multi-index over `sizes` of a linear index.
std::vector<AffineExpr> Delinearize(const AffineExpr& linear, std::span<const int64_t> sizes) {
  std::vector<AffineExpr> index(sizes.size());
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    index[i] = i == 0 ? linear.FloorDiv(stride) : linear.FloorDiv(stride).Mod(sizes[i]);
    stride *= sizes[i];
  }
  return index;
}

// Reshape keeps the row-major order of elements: from `from`'s index to `to`'s.
IndexingMap ReshapeMap(std::span<const int64_t> from, std::span<const int64_t> to) {
  return MakeMap(from, {}, Delinearize(Linearize(DimExprs(from.size()), from), to));
}

// Bitcast keeps memory: `from`'s index -> slot in `from`'s layout -> `to`'s element there.
IndexingMap BitcastMap(const hlo::Shape& from, const hlo::Shape& to) {
  Expected<hlo::PhysicalLayout> from_layout = hlo::PhysicalLayout::Create(from);
  Expected<hlo::PhysicalLayout> to_layout = hlo::PhysicalLayout::Create(to);
  if (!from_layout || !to_layout || from_layout->element_bits() != to_layout->element_bits()) {
    return IndexingMap::Undefined();
  }
  Expected<IndexingMap> to_slot = LogicalToLinearIndexing(from);
  Expected<IndexingMap> slot_to = LinearToLogicalIndexing(to);
  if (!to_slot || !slot_to) return IndexingMap::Undefined();
  return Compose(*to_slot, *slot_to);
}

// Transpose: output dim i is operand dim permutation[i], so output index d reads operand
// index e with e[permutation[i]] = d[i]; the operand's index e feeds output d[i] =
// e[permutation[i]].
IndexingMap TransposeMap(std::span<const int64_t> from, std::span<const int64_t> permutation,
                         bool from_operand) {
  std::vector<AffineExpr> results(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (from_operand) {
      results[i] = AffineExpr::Dim(permutation[i]);
    } else {
      results[permutation[i]] = AffineExpr::Dim(i);
    }
  }
  return MakeMap(from, {}, std::move(results));
}

IndexingMap ElementwiseMap(const hlo::HloInstruction& instruction, int64_t operand) {
  std::vector<int64_t> out = DimsOf(instruction.shape());
  if (instruction.operand(operand)->shape().rank() == 0 && !out.empty()) {
    return internal::ScalarMap(out);
  }
  return IndexingMap::Identity(out);
}

// bitcast-convert between widths adds or drops a minor dim holding the narrow pieces.
IndexingMap BitcastConvertMap(const hlo::HloInstruction& instruction) {
  std::vector<int64_t> out = DimsOf(instruction.shape());
  std::vector<int64_t> in = DimsOf(instruction.operand(0)->shape());
  std::vector<AffineExpr> results = DimExprs(std::min(out.size(), in.size()));
  std::vector<SymbolVar> symbols;
  if (in.size() == out.size() + 1) {
    symbols.push_back({Interval::ForSize(in.back())});
    results.push_back(AffineExpr::Symbol(0));
  }
  return MakeMap(out, std::move(symbols), std::move(results));
}

IndexingMap BroadcastMap(const hlo::HloInstruction& instruction) {
  std::vector<AffineExpr> results;
  for (int64_t dim : instruction.dimensions()) results.push_back(AffineExpr::Dim(dim));
  return MakeMap(DimsOf(instruction.shape()), {}, std::move(results));
}

IndexingMap SliceMap(const hlo::HloInstruction& instruction) {
  std::vector<AffineExpr> results;
  const std::vector<hlo::SliceDim>& slice = *instruction.attributes().slice;
  for (size_t i = 0; i < slice.size(); ++i) {
    results.push_back(AffineExpr::Dim(i) * slice[i].stride + slice[i].start);
  }
  return MakeMap(DimsOf(instruction.shape()), {}, std::move(results));
}

IndexingMap ReverseMap(std::span<const int64_t> sizes, std::span<const int64_t> reversed) {
  std::vector<AffineExpr> results = DimExprs(sizes.size());
  for (int64_t dim : reversed) results[dim] = sizes[dim] - 1 - results[dim];
  return MakeMap(sizes, {}, std::move(results));
}

// Output index d reads operand (d - low) / (interior + 1) where that is a whole number in
// bounds; elsewhere the padding value.
IndexingMap PadMap(const hlo::HloInstruction& instruction) {
  const std::vector<hlo::PadDim>& padding = *instruction.attributes().padding;
  std::vector<int64_t> in = DimsOf(instruction.operand(0)->shape());
  std::vector<AffineExpr> results;
  std::vector<Constraint> constraints;
  for (size_t i = 0; i < padding.size(); ++i) {
    int64_t step = padding[i].interior + 1;
    AffineExpr shifted = AffineExpr::Dim(i) - padding[i].low;
    results.push_back(shifted.FloorDiv(step));
    constraints.push_back({shifted, {0, (in[i] - 1) * step}});
    if (step > 1) constraints.push_back({shifted.Mod(step), {0, 0}});
  }
  return MakeMap(DimsOf(instruction.shape()), {}, std::move(results), std::move(constraints));
}

// Start of each operand along the concatenated dim.
std::vector<int64_t> ConcatenateOffsets(const hlo::HloInstruction& instruction) {
  int64_t dim = instruction.dimensions()[0];
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (const hlo::HloInstruction* operand : instruction.operands()) {
    offsets.push_back(offset);
    offset += operand->shape().dim(dim);
  }
  return offsets;
}

std::vector<IndexingMap> ConcatenateMaps(const hlo::HloInstruction& instruction) {
  int64_t dim = instruction.dimensions()[0];
  std::vector<int64_t> offsets = ConcatenateOffsets(instruction);
  std::vector<IndexingMap> maps;
  for (int64_t k = 0; k < instruction.operand_count(); ++k) {
    std::vector<AffineExpr> results = DimExprs(instruction.shape().rank());
    int64_t size = instruction.operand(k)->shape().dim(dim);
    // The piece this operand provides: outputs [offset, offset + size).
    Constraint piece{results[dim], {offsets[k], offsets[k] + size - 1}};
    results[dim] = results[dim] - offsets[k];
    maps.push_back(MakeMap(DimsOf(instruction.shape()), {}, std::move(results), {piece}));
  }
  return maps;
}

// The offsets of dynamic-slice and dynamic-update-slice as runtime symbols: scalar
// operands from `first_offset` on, clamped so that a box of `box` fits into `full`.
std::vector<SymbolVar> RuntimeOffsets(const hlo::HloInstruction& instruction, int64_t first_offset,
                                      std::span<const int64_t> full, std::span<const int64_t> box) {
  std::vector<SymbolVar> symbols;
  for (size_t i = 0; i < full.size(); ++i) {
    symbols.push_back({{0, full[i] - box[i]},
                       SymbolKind::kRuntime,
                       instruction.operand(first_offset + static_cast<int64_t>(i))});
  }
  return symbols;
}

std::vector<IndexingMap> DynamicSliceMaps(const hlo::HloInstruction& instruction) {
  std::vector<int64_t> out = DimsOf(instruction.shape());
  std::vector<int64_t> in = DimsOf(instruction.operand(0)->shape());
  std::vector<IndexingMap> maps(instruction.operand_count(), internal::ScalarMap(out));
  if (instruction.operand_count() != 1 + static_cast<int64_t>(in.size())) {
    return std::vector<IndexingMap>(instruction.operand_count(), IndexingMap::Undefined());
  }
  std::vector<AffineExpr> results;
  for (size_t i = 0; i < out.size(); ++i) {
    results.push_back(AffineExpr::Dim(i) + AffineExpr::Symbol(i));
  }
  maps[0] = MakeMap(out, RuntimeOffsets(instruction, 1, in, out), std::move(results));
  return maps;
}

// The operand is read where the update does not land; the update is read, shifted, inside
// its box.
std::vector<IndexingMap> DynamicUpdateSliceMaps(const hlo::HloInstruction& instruction) {
  std::vector<int64_t> out = DimsOf(instruction.shape());
  std::vector<int64_t> update = DimsOf(instruction.operand(1)->shape());
  std::vector<IndexingMap> maps(instruction.operand_count(), internal::ScalarMap(out));
  if (instruction.operand_count() != 2 + static_cast<int64_t>(out.size())) {
    return std::vector<IndexingMap>(instruction.operand_count(), IndexingMap::Undefined());
  }
  maps[0] = IndexingMap::Identity(out);
  std::vector<AffineExpr> results;
  std::vector<Constraint> constraints;
  for (size_t i = 0; i < out.size(); ++i) {
    results.push_back(AffineExpr::Dim(i) - AffineExpr::Symbol(i));
    constraints.push_back({results.back(), Interval::ForSize(update[i])});
  }
  maps[1] = MakeMap(out, RuntimeOffsets(instruction, 2, out, update), std::move(results),
                    std::move(constraints));
  return maps;
}

// A gather's operand reads depend on index values; its indices are read at the output's
// batch position, all components of the index vector.
std::vector<IndexingMap> GatherMaps(const hlo::HloInstruction& instruction) {
  const hlo::GatherDimensions& gather = *instruction.attributes().gather;
  std::vector<int64_t> out = DimsOf(instruction.shape());
  std::vector<int64_t> indices = DimsOf(instruction.operand(1)->shape());
  std::vector<AffineExpr> batch;
  for (int64_t d = 0; d < static_cast<int64_t>(out.size()); ++d) {
    if (std::find(gather.offset_dims.begin(), gather.offset_dims.end(), d) ==
        gather.offset_dims.end()) {
      batch.push_back(AffineExpr::Dim(d));
    }
  }
  std::vector<AffineExpr> results;
  std::vector<SymbolVar> symbols;
  for (int64_t d = 0, b = 0; d < static_cast<int64_t>(indices.size()); ++d) {
    if (d == gather.index_vector_dim) {
      symbols.push_back({Interval::ForSize(indices[d])});
      results.push_back(AffineExpr::Symbol(0));
    } else {
      results.push_back(batch[b++]);
    }
  }
  return {IndexingMap::Undefined(), MakeMap(out, std::move(symbols), std::move(results))};
}

// Scatter starts from its operands (read at the output index); where updates land depends
// on index values.
std::vector<IndexingMap> ScatterMaps(const hlo::HloInstruction& instruction, int64_t output_index) {
  int64_t inputs = (instruction.operand_count() - 1) / 2;
  std::vector<int64_t> out = DimsOf(internal::OutputShape(instruction, output_index));
  std::vector<IndexingMap> maps(instruction.operand_count(), IndexingMap::Undefined());
  for (int64_t k = 0; k < inputs; ++k) maps[k] = IndexingMap::Identity(out);
  return maps;
}

std::vector<IndexingMap> TupleMaps(const hlo::HloInstruction& instruction, int64_t output_index) {
  std::vector<IndexingMap> maps;
  std::vector<int64_t> out = DimsOf(internal::OutputShape(instruction, output_index));
  for (int64_t k = 0; k < instruction.operand_count(); ++k) {
    int64_t rank =
        instruction.operand(k)->shape().IsArray() ? instruction.operand(k)->shape().rank() : 0;
    maps.push_back(k == output_index
                       ? IndexingMap::Identity(out)
                       : IndexingMap::KnownEmpty(static_cast<int64_t>(out.size()), 0, rank));
  }
  return maps;
}

}  // namespace

std::vector<IndexingMap> OutputToInputIndexing(const hlo::HloInstruction& instruction,
                                               int64_t output_index) {
  using hlo::HloOpcode;
  const hlo::HloInstruction& hi = instruction;
  auto one = [](IndexingMap map) { return std::vector<IndexingMap>{std::move(map)}; };
  switch (hi.opcode()) {
    case HloOpcode::kBitcastConvert:
      return one(BitcastConvertMap(hi));
    case HloOpcode::kBroadcast:
      return one(BroadcastMap(hi));
    case HloOpcode::kTranspose:
      return one(TransposeMap(DimsOf(hi.shape()), hi.dimensions(), /*from_operand=*/false));
    case HloOpcode::kReshape:
      return one(ReshapeMap(DimsOf(hi.shape()), DimsOf(hi.operand(0)->shape())));
    case HloOpcode::kBitcast:
      return one(BitcastMap(hi.shape(), hi.operand(0)->shape()));
    case HloOpcode::kSlice:
      return one(SliceMap(hi));
    case HloOpcode::kReverse:
      return one(ReverseMap(DimsOf(hi.shape()), hi.dimensions()));
    case HloOpcode::kPad:
      return {PadMap(hi), internal::ScalarMap(DimsOf(hi.shape()))};
    case HloOpcode::kConcatenate:
      return ConcatenateMaps(hi);
    case HloOpcode::kDynamicSlice:
      return DynamicSliceMaps(hi);
    case HloOpcode::kDynamicUpdateSlice:
      return DynamicUpdateSliceMaps(hi);
    case HloOpcode::kGather:
      return GatherMaps(hi);
    case HloOpcode::kScatter:
      return ScatterMaps(hi, output_index);
    case HloOpcode::kTuple:
      return TupleMaps(hi, output_index);
    case HloOpcode::kGetTupleElement:
      return one(IndexingMap::Identity(DimsOf(hi.shape())));
    default:
      break;
  }
  if (hlo::IsElementwise(hi.opcode()) || hi.opcode() == HloOpcode::kMap) {
    std::vector<IndexingMap> maps;
    for (int64_t k = 0; k < hi.operand_count(); ++k) maps.push_back(ElementwiseMap(hi, k));
    return maps;
  }
  std::vector<IndexingMap> maps = internal::ReductionOutputToInput(hi, output_index);
  if (!maps.empty() || hi.operand_count() == 0) return maps;
  return std::vector<IndexingMap>(hi.operand_count(), IndexingMap::Undefined());
}

IndexingMap InputToOutputIndexing(const hlo::HloInstruction& instruction, int64_t operand,
                                  int64_t output_index) {
  using hlo::HloOpcode;
  const hlo::HloInstruction& hi = instruction;
  std::vector<int64_t> in = DimsOf(hi.operand(operand)->shape());
  std::vector<int64_t> out = DimsOf(internal::OutputShape(hi, output_index));
  switch (hi.opcode()) {
    case HloOpcode::kTranspose:
      return TransposeMap(in, hi.dimensions(), /*from_operand=*/true);
    case HloOpcode::kReshape:
      return ReshapeMap(in, out);
    case HloOpcode::kBitcast:
      return BitcastMap(hi.operand(0)->shape(), hi.shape());
    case HloOpcode::kReverse:
      return ReverseMap(in, hi.dimensions());
    case HloOpcode::kBroadcast: {
      // Output dims the operand does not provide take every value.
      std::vector<AffineExpr> results(out.size());
      std::vector<SymbolVar> symbols;
      std::vector<bool> provided(out.size(), false);
      for (size_t i = 0; i < hi.dimensions().size(); ++i) {
        results[hi.dimensions()[i]] = AffineExpr::Dim(i);
        provided[hi.dimensions()[i]] = true;
      }
      for (size_t j = 0; j < out.size(); ++j) {
        if (provided[j]) continue;
        results[j] = AffineExpr::Symbol(symbols.size());
        symbols.push_back({Interval::ForSize(out[j])});
      }
      return MakeMap(in, std::move(symbols), std::move(results));
    }
    case HloOpcode::kSlice: {
      const std::vector<hlo::SliceDim>& slice = *hi.attributes().slice;
      std::vector<AffineExpr> results;
      std::vector<Constraint> constraints;
      for (size_t i = 0; i < slice.size(); ++i) {
        AffineExpr shifted = AffineExpr::Dim(i) - slice[i].start;
        results.push_back(shifted.FloorDiv(slice[i].stride));
        constraints.push_back({shifted, {0, (out[i] - 1) * slice[i].stride}});
        constraints.push_back({shifted.Mod(slice[i].stride), {0, 0}});
      }
      return MakeMap(in, {}, std::move(results), std::move(constraints));
    }
    case HloOpcode::kPad: {
      if (operand != 0) return IndexingMap::Undefined();
      const std::vector<hlo::PadDim>& padding = *hi.attributes().padding;
      std::vector<AffineExpr> results;
      std::vector<Constraint> constraints;
      for (size_t i = 0; i < padding.size(); ++i) {
        results.push_back(AffineExpr::Dim(i) * (padding[i].interior + 1) + padding[i].low);
        constraints.push_back({results.back(), Interval::ForSize(out[i])});
      }
      return MakeMap(in, {}, std::move(results), std::move(constraints));
    }
    case HloOpcode::kConcatenate: {
      int64_t dim = hi.dimensions()[0];
      std::vector<AffineExpr> results = DimExprs(in.size());
      results[dim] = results[dim] + ConcatenateOffsets(hi)[operand];
      return MakeMap(in, {}, std::move(results));
    }
    case HloOpcode::kReduce: {
      int64_t inputs = hi.operand_count() / 2;
      if (operand >= inputs) return internal::BroadcastScalarMap(out);
      std::vector<AffineExpr> results;
      for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
        std::span<const int64_t> reduced = hi.dimensions();
        if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) {
          results.push_back(AffineExpr::Dim(d));
        }
      }
      return MakeMap(in, {}, std::move(results));
    }
    default:
      break;
  }
  if (hlo::IsElementwise(hi.opcode()) && hi.opcode() != HloOpcode::kBitcastConvert) {
    if (in.empty() && !out.empty()) return internal::BroadcastScalarMap(out);
    return IndexingMap::Identity(in);
  }
  return IndexingMap::Undefined();
}

}  // namespace tilesmith::analysis
