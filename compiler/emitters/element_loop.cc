#include "compiler/emitters/element_loop.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/analysis/layout_indexing.h"

namespace tilesmith::emitters {

using analysis::AffineExpr;
using analysis::Interval;
using hlo::HloInstruction;
using hlo::HloOpcode;

std::vector<FusionOutput> FusionOutputs(const analysis::FusionAnalysis& analysis) {
  std::vector<FusionOutput> outputs;
  for (const HloInstruction* root : analysis.roots) {
    if (!root->shape().IsTuple()) {
      outputs.push_back({root, -1, &root->shape()});
      continue;
    }
    std::vector<const hlo::Shape*> leaves = ArrayLeaves(root->shape());
    for (size_t i = 0; i < leaves.size(); ++i) {
      outputs.push_back({root, static_cast<int64_t>(i), leaves[i]});
    }
  }
  return outputs;
}

bool MayPreventVectorization(const hlo::HloComputation& fusion) {
  constexpr int64_t kMaxConcatOperandsForUnrolling = 10;
  for (const auto& instruction : fusion.instructions()) {
    switch (instruction->opcode()) {
      case HloOpcode::kReduceWindow:
      case HloOpcode::kSort:
      case HloOpcode::kDot:
      case HloOpcode::kSin:
      case HloOpcode::kCos:
      case HloOpcode::kTan:
      case HloOpcode::kPower:
      case HloOpcode::kAtan2:
        return true;
      case HloOpcode::kConcatenate:
        if (instruction->operand_count() > kMaxConcatOperandsForUnrolling) return true;
        break;
      case HloOpcode::kReduce:
        if (instruction->shape().IsTuple()) return true;
        break;
      default:
        break;
    }
  }
  return false;
}

Expected<std::vector<AffineExpr>> IndexFromMergedDims(const hlo::Shape& shape,
                                                      std::span<const int64_t> order,
                                                      std::span<const int64_t> sizes,
                                                      std::span<const AffineExpr> coordinates,
                                                      std::string_view what) {
  std::vector<AffineExpr> index(shape.rank(), AffineExpr::Constant(0));
  size_t next = 0;
  for (size_t j = 0; j < sizes.size(); ++j) {
    std::vector<int64_t> run;
    int64_t product = 1;
    while (product < sizes[j] && next < order.size()) {
      run.push_back(order[next]);
      product *= shape.dim(order[next++]);
    }
    if (product != sizes[j]) {
      return MakeError(ErrorCode::kInternal,
                       hlo::ShapeToString(shape) + " does not match " + std::string(what));
    }
    int64_t stride = 1;
    for (size_t i = run.size(); i-- > 0;) {
      AffineExpr scaled = stride == 1 ? coordinates[j] : coordinates[j].FloorDiv(stride);
      index[run[i]] = i == 0 ? scaled : scaled.Mod(shape.dim(run[i]));
      stride *= shape.dim(run[i]);
    }
  }
  return index;
}

std::vector<AffineExpr> Delinearize(const AffineExpr& linear, const hlo::Shape& shape) {
  std::vector<AffineExpr> index(shape.rank(), AffineExpr::Constant(0));
  int64_t stride = 1;
  for (int64_t dim : shape.layout().minor_to_major) {
    int64_t size = shape.dim(dim);
    AffineExpr scaled = stride == 1 ? linear : linear.FloorDiv(stride);
    index[dim] = scaled.Mod(size);
    stride *= size;
  }
  return index;
}

Expected<std::vector<AffineExpr>> ReinterpretIndex(const hlo::Shape& from, const hlo::Shape& to,
                                                   std::span<const AffineExpr> index) {
  if (std::equal(from.dims().begin(), from.dims().end(), to.dims().begin(), to.dims().end())) {
    return std::vector<AffineExpr>(index.begin(), index.end());
  }
  TS_ASSIGN_OR_RETURN(analysis::IndexingMap slot, analysis::LogicalToLinearIndexing(from));
  TS_ASSIGN_OR_RETURN(analysis::IndexingMap element, analysis::LinearToLogicalIndexing(to));
  AffineExpr linear = slot.result(0).Substitute(index, {});
  std::vector<AffineExpr> result;
  for (const AffineExpr& expr : element.results())
    result.push_back(expr.Substitute({&linear, 1}, {}));
  return result;
}

void AddFusionBuffers(const analysis::FusionAnalysis& analysis, KernelIR& kernel) {
  for (const HloInstruction* parameter : analysis.fusion->parameters()) {
    std::string name = "p" + std::to_string(parameter->parameter_number());
    if (!parameter->shape().IsTuple()) {
      kernel.buffers.push_back({name, parameter->shape(), false, parameter->parameter_number()});
      continue;
    }
    std::vector<const hlo::Shape*> leaves = ArrayLeaves(parameter->shape());
    for (size_t i = 0; i < leaves.size(); ++i) {
      kernel.buffers.push_back({name + "." + std::to_string(i), *leaves[i], false,
                                parameter->parameter_number(), static_cast<int64_t>(i)});
    }
  }
  std::vector<FusionOutput> outputs = FusionOutputs(analysis);
  for (size_t i = 0; i < outputs.size(); ++i) {
    kernel.buffers.push_back(
        {"out" + std::to_string(i), *outputs[i].shape, true, static_cast<int64_t>(i)});
  }
}

analysis::IndexingMap ElementLoopMap(
    const ElementLoopShape& loop, const hlo::Shape& shape, std::vector<analysis::SymbolVar> leading,
    const std::function<std::vector<AffineExpr>(std::span<const AffineExpr>)>& results) {
  std::vector<Interval> dim_ranges = {Interval::ForSize(loop.threads),
                                      Interval::Point(0),
                                      Interval::Point(0),
                                      Interval::ForSize(loop.blocks_x),
                                      Interval::ForSize(loop.blocks_y),
                                      Interval::Point(0)};
  int64_t chunk = static_cast<int64_t>(leading.size());
  std::vector<analysis::SymbolVar> symbols = std::move(leading);
  symbols.push_back({Interval::ForSize(loop.chunks)});
  symbols.push_back({Interval::ForSize(loop.vector)});
  int64_t total_threads = loop.threads * loop.blocks_x * loop.blocks_y;
  AffineExpr thread = AffineExpr::Dim(kThreadIdX);
  AffineExpr block = AffineExpr::Dim(kBlockIdY) * loop.blocks_x + AffineExpr::Dim(kBlockIdX);
  AffineExpr linear = (block * loop.threads + thread) * loop.vector +
                      AffineExpr::Symbol(chunk) * (loop.vector * total_threads) +
                      AffineExpr::Symbol(chunk + 1);
  analysis::IndexingMap map(dim_ranges, symbols, results(Delinearize(linear, shape)),
                            {{linear, Interval::ForSize(shape.ElementCount())}});
  map.Simplify();
  return map;
}

void AddPartitionFunctions(const analysis::PartitionedComputation& partition, KernelIR& kernel) {
  for (const analysis::Subgraph& subgraph : partition.subgraphs()) {
    kernel.functions.push_back({subgraph.name, subgraph.roots, subgraph.instructions});
  }
}

void StoreOutputs(const KernelIR& kernel, const analysis::PartitionedComputation& partition,
                  const std::vector<FusionOutput>& outputs, std::span<const int64_t> which,
                  std::span<const AffineExpr> index, std::vector<BodyStmt>& body,
                  int64_t& next_value) {
  std::vector<AffineExpr> indices(index.begin(), index.end());
  size_t first_stmt = body.size();
  for (int64_t output : which) {
    const FusionOutput& leaf = outputs[output];
    int64_t function = partition.SubgraphOf(*leaf.root);
    std::vector<std::pair<const HloInstruction*, int64_t>> leaves =
        kernel.functions[function].Leaves();
    int64_t position =
        std::find(leaves.begin(), leaves.end(), std::make_pair(leaf.root, leaf.leaf)) -
        leaves.begin();
    int64_t value = -1;
    for (size_t s = first_stmt; s < body.size(); ++s) {
      if (const auto* call = std::get_if<CallStmt>(&body[s]); call && call->function == function) {
        value = call->first_value + position;
      }
    }
    if (value < 0) {
      CallStmt call;
      call.function = function;
      call.indices = indices;
      call.first_value = next_value;
      body.push_back(std::move(call));
      value = next_value + position;
      next_value += static_cast<int64_t>(leaves.size());
    }
    StoreStmt store;
    store.buffer = kernel.OutputBuffer(output);
    store.indices = indices;
    store.value = value;
    body.push_back(std::move(store));
  }
}

std::vector<const hlo::HloInstruction*> OperandClosure(const hlo::HloInstruction* root) {
  std::vector<const hlo::HloInstruction*> order;
  std::unordered_set<const hlo::HloInstruction*> seen;
  std::function<void(const hlo::HloInstruction*)> visit = [&](const hlo::HloInstruction* node) {
    if (!seen.insert(node).second) return;
    for (const hlo::HloInstruction* operand : node->operands()) visit(operand);
    order.push_back(node);
  };
  visit(root);
  return order;
}

const HloInstruction* BindingTarget(const HloInstruction* root, const HloInstruction* hero) {
  std::vector<const HloInstruction*> path;
  std::unordered_set<const HloInstruction*> dead_ends;
  std::function<bool(const HloInstruction*)> find = [&](const HloInstruction* node) {
    if (dead_ends.count(node) > 0) return false;
    path.push_back(node);
    if (node == hero) return true;
    for (const HloInstruction* operand : node->operands()) {
      if (find(operand)) return true;
    }
    path.pop_back();
    dead_ends.insert(node);
    return false;
  };
  if (!find(root)) return hero;
  size_t top = path.size() - 1;
  while (top > 0) {
    hlo::HloOpcode opcode = path[top - 1]->opcode();
    bool keeps_values = opcode == hlo::HloOpcode::kBitcast || opcode == hlo::HloOpcode::kReshape ||
                        opcode == hlo::HloOpcode::kCopy || opcode == hlo::HloOpcode::kTranspose;
    if (!keeps_values) break;
    --top;
  }
  return path[top];
}

}  // namespace tilesmith::emitters
