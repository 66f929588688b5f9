#include "compiler/emitters/row_reductions.h"

#include <algorithm>

#include "compiler/analysis/fusion_indexing.h"

namespace tilesmith::emitters {
namespace {

using analysis::AffineExpr;
using analysis::Interval;
using hlo::HloInstruction;

// The first shared array of the row values: they follow whatever the kernel had.
int64_t FirstAlloc(const RowReductions& rows, const KernelIR& kernel) {
  return static_cast<int64_t>(kernel.shared.size() - rows.reduces.size());
}

// The flat row number of a row-major index's leading `rank` dims of `dims`.
AffineExpr FlatRow(std::span<const AffineExpr> index, std::span<const int64_t> dims, int64_t rank) {
  AffineExpr row = AffineExpr::Constant(0);
  for (int64_t d = 0; d < rank; ++d) row = row * dims[d] + index[d];
  return row;
}

AffineExpr FirstRowOfBlock(const RowReductions& rows, const ElementLoopShape& shape) {
  AffineExpr block = AffineExpr::Dim(kBlockIdY) * shape.blocks_x + AffineExpr::Dim(kBlockIdX);
  return (block * rows.per_block).FloorDiv(rows.row_length);
}

}  // namespace

std::optional<RowReductions> FindRowReductions(const analysis::FusionAnalysis& analysis,
                                               const std::vector<FusionOutput>& outputs,
                                               const ElementLoopShape& shape) {
  if (shape.chunks != 1 || outputs.empty()) return std::nullopt;
  const hlo::Shape& output = *outputs.front().shape;
  for (const FusionOutput& each : outputs) {
    if (!each.shape->IsArray() || !each.shape->layout().IsDefault() ||
        !std::ranges::equal(each.shape->dims(), output.dims())) {
      return std::nullopt;
    }
  }
  RowReductions rows;
  for (const std::unique_ptr<HloInstruction>& owned : analysis.fusion->instructions()) {
    const HloInstruction* instruction = owned.get();
    if (instruction->opcode() != hlo::HloOpcode::kReduce || !instruction->shape().IsArray()) {
      continue;
    }
    int64_t rank = instruction->shape().rank();
    if (rank == 0 || rank >= output.rank() ||
        !std::equal(instruction->shape().dims().begin(), instruction->shape().dims().end(),
                    output.dims().begin())) {
      continue;
    }
    if (rows.row_rank != 0 && rank != rows.row_rank) continue;
    // Every output reads it only at its own leading dims (through a broadcast), if at all.
    bool read_at_rows = true;
    bool read = false;
    for (const FusionOutput& each : outputs) {
      if (each.root == instruction) read_at_rows = false;
      Expected<analysis::GroupedIndexing> indexing = analysis::ComputeGroupedOutputToInputIndexing(
          *analysis.fusion, *each.root, std::max<int64_t>(each.leaf, 0));
      if (!indexing) return std::nullopt;
      std::span<const analysis::IndexingMap> maps = indexing->MapsTo(*instruction);
      if (maps.empty()) continue;
      read = true;
      if (maps.size() != 1 || maps[0].symbol_count() != 0 ||
          static_cast<int64_t>(maps[0].results().size()) != rank) {
        read_at_rows = false;
        continue;
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (!(maps[0].result(d) == AffineExpr::Dim(d))) read_at_rows = false;
      }
    }
    if (!read || !read_at_rows) continue;
    rows.row_rank = rank;
    rows.reduces.push_back(instruction);
  }
  if (rows.reduces.empty()) return std::nullopt;
  rows.row_length = 1;
  for (int64_t d = rows.row_rank; d < output.rank(); ++d) rows.row_length *= output.dims()[d];
  rows.rows = output.ElementCount() / std::max<int64_t>(rows.row_length, 1);
  rows.per_block = shape.threads * shape.vector;
  if (rows.row_length < 2) return std::nullopt;
  if (rows.per_block % rows.row_length == 0) {
    rows.rows_per_block = rows.per_block / rows.row_length;
  } else if (rows.row_length % rows.per_block == 0) {
    rows.rows_per_block = 1;
  } else {
    rows.rows_per_block = rows.per_block / rows.row_length + 2;
  }
  // One thread computes one row; a block with more rows than threads has short rows,
  // which are cheap to recompute where they are read.
  if (rows.rows_per_block > shape.threads) return std::nullopt;
  return rows;
}

void AddRowReductionPhase(const RowReductions& rows, const ElementLoopShape& shape,
                          KernelIR& kernel, int64_t& next_value) {
  const hlo::Shape& row_shape = rows.reduces.front()->shape();
  AffineExpr thread = AffineExpr::Dim(kThreadIdX);
  AffineExpr row = FirstRowOfBlock(rows, shape) + thread;
  std::vector<AffineExpr> results;
  AffineExpr rest = row;
  for (int64_t d = rows.row_rank - 1; d >= 0; --d) {
    int64_t size = row_shape.dims()[d];
    results.insert(results.begin(), d == 0 ? rest : rest.Mod(size));
    rest = rest.FloorDiv(size);
  }
  results.push_back(thread);
  std::vector<Interval> dims = {Interval::ForSize(shape.threads),
                                Interval::Point(0),
                                Interval::Point(0),
                                Interval::ForSize(shape.blocks_x),
                                Interval::ForSize(shape.blocks_y),
                                Interval::Point(0)};
  std::vector<analysis::Constraint> constraints = {{thread, Interval::ForSize(rows.rows_per_block)},
                                                   {row, Interval::ForSize(rows.rows)}};
  analysis::IndexingMap map(dims, {}, results, constraints);
  map.Simplify();
  LoopStmt loop{std::move(map), {}};
  std::vector<AffineExpr> at;
  for (int64_t d = 0; d < rows.row_rank; ++d) at.push_back(AffineExpr::Dim(d));
  std::vector<ValueBinding> computed;
  for (const HloInstruction* reduce : rows.reduces) {
    int64_t function = static_cast<int64_t>(kernel.functions.size());
    kernel.functions.push_back({reduce->name(), {reduce}, OperandClosure(reduce)});
    int64_t value = next_value++;
    loop.body.push_back(CallStmt{function, at, value, computed});
    int64_t alloc = static_cast<int64_t>(kernel.shared.size());
    kernel.shared.push_back({"rows" + std::to_string(computed.size()),
                             reduce->shape().element_type(),
                             {rows.rows_per_block}});
    loop.body.push_back(SharedStoreStmt{alloc, {AffineExpr::Dim(rows.row_rank)}, value});
    // A later reduction over a row reads the earlier ones' values (softmax's sum of
    // exp(x - max)) from the same thread.
    computed.push_back({reduce, at, value, -1});
  }
  Phase phase;
  phase.loops.push_back(std::move(loop));
  kernel.phases.push_back(std::move(phase));
}

AffineExpr RowSlot(const RowReductions& rows, const ElementLoopShape& shape,
                   std::span<const AffineExpr> index) {
  return FlatRow(index, rows.reduces.front()->shape().dims(), rows.row_rank) -
         FirstRowOfBlock(rows, shape);
}

void BindRowReductions(const RowReductions& rows, const KernelIR& kernel, int64_t slot,
                       std::vector<BodyStmt>& body, int64_t& next_value) {
  std::vector<AffineExpr> at;
  for (int64_t d = 0; d < rows.row_rank; ++d) at.push_back(AffineExpr::Dim(d));
  std::vector<BodyStmt> loads;
  std::vector<ValueBinding> bindings;
  int64_t first_alloc = FirstAlloc(rows, kernel);
  for (size_t i = 0; i < rows.reduces.size(); ++i) {
    int64_t value = next_value++;
    loads.push_back(
        SharedLoadStmt{first_alloc + static_cast<int64_t>(i), {AffineExpr::Dim(slot)}, value});
    bindings.push_back({rows.reduces[i], at, value, -1});
  }
  for (BodyStmt& statement : body) {
    if (auto* call = std::get_if<CallStmt>(&statement)) {
      call->bindings.insert(call->bindings.end(), bindings.begin(), bindings.end());
    }
  }
  body.insert(body.begin(), loads.begin(), loads.end());
}

}  // namespace tilesmith::emitters
