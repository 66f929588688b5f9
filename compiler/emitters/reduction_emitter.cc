#include "compiler/emitters/reduction_emitter.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>

#include "compiler/emitters/element_loop.h"
#include "compiler/emitters/reduction_internal.h"

namespace tilesmith::emitters {
namespace {

using analysis::AffineExpr;
using analysis::FusionAnalysis;
using analysis::Interval;
using analysis::ReductionVariant;
using hlo::HloInstruction;
using reduction_internal::BlockCount;
using reduction_internal::InputIndex;
using reduction_internal::kWarp;
using reduction_internal::NeedsPresence;
using reduction_internal::OutputIndex;
using reduction_internal::Outputs;
using reduction_internal::PartialsDims;
using reduction_internal::PowerOfTwoAtLeast;
using reduction_internal::ReductionHeroes;
using reduction_internal::SplitAtomicOp;

// The launch dims every loop map of the kernel has.
std::vector<Interval> LaunchDims(const ReductionConfig& config, int64_t blocks) {
  return {Interval::ForSize(config.threads()), Interval::Point(0), Interval::Point(0),
          Interval::ForSize(blocks),           Interval::Point(0), Interval::Point(0)};
}

// The shared-memory index of partial k of a slot, and a slot's output coordinates.
using SharedIndex = std::function<std::vector<AffineExpr>(AffineExpr slot, AffineExpr k)>;
using KeptCoordinates = std::function<std::array<AffineExpr, 3>(AffineExpr slot, AffineExpr block)>;

// Builds the kernel: functions by root, value ids, the phases' loops.
class ReductionKernelBuilder {
 public:
  ReductionKernelBuilder(const FusionAnalysis& analysis, const ReductionConfig& config,
                         KernelIR& kernel)
      : analysis_(analysis),
        config_(config),
        sizes_(analysis.reduction->dimensions),
        row_(analysis.reduction->is_row_reduction),
        kernel_(kernel) {}

  Status Build() {
    heroes_ = ReductionHeroes(analysis_);
    presence_ = NeedsPresence(analysis_);
    blocks_ = BlockCount(analysis_, config_);
    kernel_.launch.threads = {config_.threads(), 1, 1};
    kernel_.launch.blocks = {blocks_, 1, 1};
    std::vector<int64_t> partials = PartialsDims(analysis_, config_);
    for (const HloInstruction* hero : heroes_) {
      std::vector<int64_t> allocs;
      for (int64_t i = 0; i < Width(hero) && !partials.empty(); ++i) {
        allocs.push_back(static_cast<int64_t>(kernel_.shared.size()));
        hlo::PrimitiveType type = i < Outputs(hero) ? hero->operand(i)->shape().element_type()
                                                    : hlo::PrimitiveType::kPred;
        kernel_.shared.push_back(
            {"partials" + std::to_string(kernel_.shared.size()), type, partials});
      }
      shared_of_.push_back(allocs);
    }
    if (config_.tree) AddTreeScratch();
    Phase first;
    Phase second;
    Phase last;
    if (row_) {
      TS_RETURN_IF_ERROR(BuildRow(first, second, last));
    } else {
      TS_RETURN_IF_ERROR(BuildColumn(first, second, last));
    }
    TS_RETURN_IF_ERROR(AddSideOutputs(first));
    kernel_.phases.push_back(std::move(first));
    if (!second.loops.empty()) kernel_.phases.push_back(std::move(second));
    if (!last.loops.empty()) kernel_.phases.push_back(std::move(last));
    return OkStatus();
  }

 private:
  // A tree split's scratch: per hero, one partials buffer per value of a partial
  // ([split] + the hero's output dims), and one arrival counter per group of outputs (the
  // blocks that differ only in their part); the flag tells a block's threads who was last.
  void AddTreeScratch() {
    tiles_ = blocks_ / config_.split;
    for (const HloInstruction* hero : heroes_) {
      std::vector<const hlo::Shape*> leaves = ArrayLeaves(hero->shape());
      std::vector<int64_t> dims = {config_.split};
      for (int64_t d = 0; d < leaves.front()->rank(); ++d) dims.push_back(leaves.front()->dim(d));
      std::vector<int64_t> buffers;
      for (int64_t i = 0; i < Width(hero); ++i) {
        hlo::PrimitiveType type =
            i < Outputs(hero) ? leaves[i]->element_type() : hlo::PrimitiveType::kPred;
        buffers.push_back(AddScratch("partials", hlo::Shape::Array(type, dims), std::nullopt));
      }
      scratch_of_.push_back(std::move(buffers));
    }
    arrival_.counter =
        AddScratch("arrivals", hlo::Shape::Array(hlo::PrimitiveType::kS32, {tiles_}), 0.0);
    arrival_.index = AffineExpr::Dim(kBlockIdX).Mod(tiles_);
    arrival_.arrivals = config_.split;
    arrival_.flag = static_cast<int64_t>(kernel_.shared.size());
    kernel_.shared.push_back({"last_block", hlo::PrimitiveType::kS32, {1}});
  }

  int64_t AddScratch(const std::string& name, hlo::Shape shape, std::optional<double> fill) {
    int64_t index = static_cast<int64_t>(kernel_.buffers.size());
    KernelBuffer buffer;
    buffer.name = name + std::to_string(index);
    buffer.shape = std::move(shape);
    buffer.fill = fill;
    buffer.is_scratch = true;
    buffer.index = -1;  // not a parameter or output number, so nothing takes it for one
    kernel_.buffers.push_back(std::move(buffer));
    return index;
  }

  // Row: loop results (h, tx, lane, warp in row, row in block, part of the split row).
  Status BuildRow(Phase& first, Phase& second, Phase& last) {
    const ReductionConfig& c = config_;
    int64_t row_blocks = CeilDiv(sizes_[1], c.threads_y);
    AffineExpr thread = AffineExpr::Dim(kThreadIdX);
    AffineExpr block = AffineExpr::Dim(kBlockIdX);
    AffineExpr row_in_block = thread.FloorDiv(c.threads_x);
    AffineExpr tx = thread.Mod(c.threads_x);
    std::vector<AffineExpr> results = {block.Mod(row_blocks) * c.threads_y + row_in_block,
                                       tx,
                                       thread.Mod(kWarp),
                                       tx.FloorDiv(kWarp),
                                       row_in_block,
                                       block.FloorDiv(row_blocks)};
    LoopStmt loop = Loop(std::move(results), {});
    AffineExpr h = AffineExpr::Dim(0);
    int64_t unroll = c.elements_per_thread / c.vector;
    int64_t steps = CeilDiv(sizes_[2], c.threads_x * c.elements_per_thread);
    // A split row: part p of `split` takes steps [p * per_part, (p + 1) * per_part).
    int64_t per_part = CeilDiv(steps, c.split);
    AffineExpr step = AffineExpr::Dim(5) * per_part + AffineExpr::Symbol(1);
    // Symbols: d, step, unrolled vector, lane of the vector.
    AffineExpr w =
        ((step * unroll + AffineExpr::Symbol(2)) * c.threads_x + AffineExpr::Dim(1)) * c.vector +
        AffineExpr::Symbol(3);
    std::vector<Interval> symbols = {Interval::ForSize(sizes_[0]), Interval::ForSize(per_part),
                                     Interval::ForSize(unroll), Interval::ForSize(c.vector)};
    std::vector<analysis::Constraint> bounds = {{h, Interval::ForSize(sizes_[1])},
                                                {w, Interval::ForSize(sizes_[2])}};
    std::vector<std::vector<int64_t>> values;
    for (const HloInstruction* hero : heroes_) {
      // One accumulator set per vector lane (independent chains), then combined.
      TS_ASSIGN_OR_RETURN(
          int64_t lanes_value,
          AddPartialReduce(loop, hero, symbols, {AffineExpr::Symbol(0), h, w}, bounds, c.vector));
      int64_t first_value = CombineLanes(loop, hero, lanes_value, c.vector);
      values.push_back(Shuffled(loop, hero, first_value, std::min(kWarp, c.threads_x)));
    }
    auto kept = [&](AffineExpr slot, AffineExpr block_id) {
      return std::array<AffineExpr, 3>{AffineExpr::Constant(0),
                                       block_id.Mod(row_blocks) * c.threads_y + slot,
                                       AffineExpr::Constant(0)};
    };
    if (c.threads_x <= kWarp) {
      // One warp (or part of one) per row: its first lane writes.
      std::vector<analysis::Constraint> writer = {{AffineExpr::Dim(1), Interval::Point(0)},
                                                  {h, Interval::ForSize(sizes_[1])}};
      TS_RETURN_IF_ERROR(WriteResults(loop, values,
                                      {AffineExpr::Constant(0), h, AffineExpr::Constant(0)}, writer,
                                      AffineExpr::Dim(5)));
      first.loops.push_back(std::move(loop));
      return TreePass(last, /*slots=*/c.threads_y, kept);
    }
    for (size_t k = 0; k < heroes_.size(); ++k) {
      for (size_t i = 0; i < values[k].size(); ++i) {
        loop.body.push_back(SharedStoreStmt{shared_of_[k][i],
                                            {AffineExpr::Dim(4), AffineExpr::Dim(3)},
                                            values[k][i],
                                            {{AffineExpr::Dim(2), Interval::Point(0)}}});
      }
    }
    first.loops.push_back(std::move(loop));
    int64_t warps = c.threads_x / kWarp;
    TS_RETURN_IF_ERROR(GroupPass(
        second, /*slots=*/c.threads_y, /*partials=*/warps,
        [](AffineExpr slot, AffineExpr k) {
          return std::vector{slot, k};
        },
        kept));
    return TreePass(last, /*slots=*/c.threads_y, kept);
  }

  // Column: loop results (d, tx, ty, first column of the thread, part of the split column).
  // Blocks run over column tiles, then D, then the parts.
  Status BuildColumn(Phase& first, Phase& second, Phase& last) {
    const ReductionConfig& c = config_;
    int64_t columns = c.threads_x * c.vector;
    int64_t column_blocks = CeilDiv(sizes_[2], columns);
    AffineExpr thread = AffineExpr::Dim(kThreadIdX);
    AffineExpr block = AffineExpr::Dim(kBlockIdX);
    AffineExpr tx = thread.Mod(c.threads_x);
    std::vector<AffineExpr> results = {block.FloorDiv(column_blocks).Mod(sizes_[0]), tx,
                                       thread.FloorDiv(c.threads_x),
                                       (block.Mod(column_blocks) * c.threads_x + tx) * c.vector,
                                       block.FloorDiv(column_blocks * sizes_[0])};
    LoopStmt loop = Loop(std::move(results), {});
    int64_t unroll = c.elements_per_thread;
    int64_t steps = CeilDiv(sizes_[1], c.threads_y * unroll);
    int64_t per_part = CeilDiv(steps, c.split);
    AffineExpr step = AffineExpr::Dim(4) * per_part + AffineExpr::Symbol(0);
    AffineExpr h = (step * unroll + AffineExpr::Symbol(1)) * c.threads_y + AffineExpr::Dim(2);
    // The vector's columns are lanes of one partial reduction: one accumulator set each.
    std::vector<Interval> symbols = {Interval::ForSize(per_part), Interval::ForSize(unroll),
                                     Interval::ForSize(c.vector)};
    AffineExpr w = AffineExpr::Dim(3) + AffineExpr::Symbol(2);
    std::vector<analysis::Constraint> bounds = {{h, Interval::ForSize(sizes_[1])},
                                                {w, Interval::ForSize(sizes_[2])}};
    for (size_t k = 0; k < heroes_.size(); ++k) {
      TS_ASSIGN_OR_RETURN(int64_t first_value,
                          AddPartialReduce(loop, heroes_[k], symbols, {AffineExpr::Dim(0), h, w},
                                           bounds, c.vector));
      for (int64_t v = 0; v < c.vector; ++v) {
        for (int64_t i = 0; i < Width(heroes_[k]); ++i) {
          loop.body.push_back(
              SharedStoreStmt{shared_of_[k][i],
                              {AffineExpr::Dim(2), AffineExpr::Dim(1) * c.vector + v},
                              first_value + v * Width(heroes_[k]) + i});
        }
      }
    }
    first.loops.push_back(std::move(loop));
    auto kept = [&](AffineExpr slot, AffineExpr block_id) {
      return std::array<AffineExpr, 3>{block_id.FloorDiv(column_blocks).Mod(sizes_[0]),
                                       AffineExpr::Constant(0),
                                       block_id.Mod(column_blocks) * columns + slot};
    };
    TS_RETURN_IF_ERROR(GroupPass(
        second, /*slots=*/columns, /*partials=*/c.threads_y,
        [](AffineExpr slot, AffineExpr k) {
          return std::vector{k, slot};
        },
        kept));
    return TreePass(last, /*slots=*/columns, kept);
  }

  // A tree split's second level, in the block that arrives last for its outputs: each of the
  // `slots` outputs of the block folds the `split` partials the blocks of its group stored.
  Status TreePass(Phase& phase, int64_t slots, const KeptCoordinates& kept) {
    if (!config_.tree) return OkStatus();
    phase.arrival = arrival_;
    return GroupPass(phase, slots, config_.split, nullptr, kept);
  }

  // A group of G lanes (a power of two up to a warp) reduces each of `slots` outputs: lane g
  // folds partials g, g + G, … (from shared memory at `at(slot, k)`, or without `at` from the
  // tree's scratch at [k, the output's index]), then the group shuffles and its first lane
  // writes the output at `kept(slot)` (a tree's first level: the partial). Every thread runs
  // the shuffles, so warps stay whole.
  Status GroupPass(Phase& phase, int64_t slots, int64_t partials, const SharedIndex& at,
                   const KeptCoordinates& kept) {
    int64_t group = std::min(kWarp, PowerOfTwoAtLeast(partials));
    int64_t per_pass = config_.threads() / group;
    int64_t passes = CeilDiv(slots, per_pass);
    AffineExpr thread = AffineExpr::Dim(kThreadIdX);
    // Results: (slot, lane in group, block); the pass is symbol 0.
    LoopStmt loop = Loop({thread.FloorDiv(group) + AffineExpr::Symbol(0) * per_pass,
                          thread.Mod(group), AffineExpr::Dim(kBlockIdX)},
                         {Interval::ForSize(passes)});
    AffineExpr slot = AffineExpr::Dim(0);
    AffineExpr k = AffineExpr::Dim(1) + AffineExpr::Symbol(0) * group;
    std::vector<analysis::Constraint> bounds = {{slot, Interval::ForSize(slots)},
                                                {k, Interval::ForSize(partials)}};
    std::array<AffineExpr, 3> coordinates = kept(slot, AffineExpr::Dim(2));
    // The kept coordinates must lie inside the reduction's kept dims.
    analysis::Constraint inside =
        row_ ? analysis::Constraint{coordinates[1], Interval::ForSize(sizes_[1])}
             : analysis::Constraint{coordinates[2], Interval::ForSize(sizes_[2])};
    std::vector<std::vector<int64_t>> values;
    for (size_t h = 0; h < heroes_.size(); ++h) {
      int64_t first_value = next_value_;
      next_value_ += Width(heroes_[h]);
      std::vector<analysis::SymbolVar> symbols = {{Interval::ForSize(CeilDiv(partials, group))}};
      if (at) {
        analysis::IndexingMap elements(ResultDims(), symbols, at(slot, k), bounds);
        loop.body.push_back(
            ReduceStmt{heroes_[h], std::move(elements), shared_of_[h], first_value, presence_});
      } else {
        TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> index,
                            OutputIndex(heroes_[h], sizes_, coordinates));
        index.insert(index.begin(), k);
        std::vector<analysis::Constraint> read = bounds;
        read.push_back(inside);
        analysis::IndexingMap elements(ResultDims(), symbols, index, read);
        loop.body.push_back(ReduceStmt{
            heroes_[h], std::move(elements), {}, first_value, presence_, 1, scratch_of_[h]});
      }
      values.push_back(Shuffled(loop, heroes_[h], first_value, group));
    }
    std::vector<analysis::Constraint> writer = {
        {AffineExpr::Dim(1), Interval::Point(0)}, {slot, Interval::ForSize(slots)}, inside};
    if (at) {
      TS_RETURN_IF_ERROR(WriteResults(loop, values, coordinates, writer,
                                      AffineExpr::Dim(2).FloorDiv(blocks_ / config_.split)));
    } else {
      TS_RETURN_IF_ERROR(WriteOutputs(loop, values, coordinates, writer));
    }
    phase.loops.push_back(std::move(loop));
    return OkStatus();
  }

  // What a level writes: the outputs, or a tree split's partials at [`part`, …].
  Status WriteResults(LoopStmt& loop, const std::vector<std::vector<int64_t>>& values,
                      const std::array<AffineExpr, 3>& coordinates,
                      const std::vector<analysis::Constraint>& writer, AffineExpr part) {
    if (!config_.tree) return WriteOutputs(loop, values, coordinates, writer);
    for (size_t h = 0; h < heroes_.size(); ++h) {
      TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> at, OutputIndex(heroes_[h], sizes_, coordinates));
      at.insert(at.begin(), part);
      for (size_t i = 0; i < values[h].size(); ++i) {
        loop.body.push_back(StoreStmt{scratch_of_[h][i], at, values[h][i], writer});
      }
    }
    return OkStatus();
  }

  // The per-thread loop over the launch ids with `results` and `symbols`; no domain
  // constraints, so every thread of every warp runs its shuffles.
  LoopStmt Loop(std::vector<AffineExpr> results, std::vector<Interval> symbols) {
    std::vector<analysis::SymbolVar> vars;
    for (Interval range : symbols) vars.push_back({range});
    analysis::IndexingMap map(LaunchDims(config_, blocks_), vars, std::move(results), {});
    map.Simplify();
    result_count_ = map.result_count();
    return LoopStmt{std::move(map), {}};
  }

  // Dims of an elements map: one per result of the enclosing loop (their ranges come from
  // the loop when the code is generated).
  std::vector<Interval> ResultDims() const {
    return std::vector<Interval>(static_cast<size_t>(result_count_),
                                 Interval::ForSize(int64_t{1} << 40));
  }

  // `%v.. = reduce @hero` over the hero's operands at `[D, H, W]` coordinates, with `lanes`
  // accumulator sets picked by the last symbol.
  Expected<int64_t> AddPartialReduce(LoopStmt& loop, const HloInstruction* hero,
                                     const std::vector<Interval>& symbols,
                                     const std::array<AffineExpr, 3>& coordinates,
                                     std::vector<analysis::Constraint> bounds, int64_t lanes) {
    TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> index,
                        InputIndex(hero->operand(0)->shape(), sizes_, coordinates));
    std::vector<analysis::SymbolVar> vars;
    for (Interval range : symbols) vars.push_back({range});
    analysis::IndexingMap elements(ResultDims(), vars, index, std::move(bounds));
    int64_t first_value = next_value_;
    next_value_ += Width(hero) * lanes;
    loop.body.push_back(ReduceStmt{hero, std::move(elements), {}, first_value, presence_, lanes});
    return first_value;
  }

  // Folds `lanes` accumulator sets (lane-major from `first_value`) into one, pairwise.
  int64_t CombineLanes(LoopStmt& loop, const HloInstruction* hero, int64_t first_value,
                       int64_t lanes) {
    std::vector<int64_t> sets;
    for (int64_t l = 0; l < lanes; ++l) sets.push_back(first_value + l * Width(hero));
    while (sets.size() > 1) {
      std::vector<int64_t> next;
      for (size_t i = 0; i + 1 < sets.size(); i += 2) {
        std::vector<int64_t> lhs;
        std::vector<int64_t> rhs;
        for (int64_t j = 0; j < Width(hero); ++j) {
          lhs.push_back(sets[i] + j);
          rhs.push_back(sets[i + 1] + j);
        }
        next.push_back(next_value_);
        loop.body.push_back(CombineStmt{hero, lhs, rhs, next_value_, presence_});
        next_value_ += Width(hero);
      }
      if (sets.size() % 2 == 1) next.push_back(sets.back());
      sets = std::move(next);
    }
    return sets.front();
  }

  // A butterfly over `lanes` lanes (offsets lanes/2 … 1): every lane ends with the group's
  // result. Returns the final values' ids.
  std::vector<int64_t> Shuffled(LoopStmt& loop, const HloInstruction* hero, int64_t first_value,
                                int64_t lanes) {
    std::vector<int64_t> current;
    for (int64_t i = 0; i < Width(hero); ++i) current.push_back(first_value + i);
    for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
      std::vector<int64_t> partner;
      for (int64_t value : current) {
        partner.push_back(next_value_);
        loop.body.push_back(ShuffleStmt{value, offset, next_value_++});
      }
      int64_t combined = next_value_;
      next_value_ += Width(hero);
      loop.body.push_back(CombineStmt{hero, current, partner, combined, presence_});
      for (size_t i = 0; i < current.size(); ++i) current[i] = combined + static_cast<int64_t>(i);
    }
    return current;
  }

  // Stores every reduction output at the kept coordinates where `writer` holds: the hero's
  // value itself, or its epilogue computed with the hero bound to the reduced value.
  Status WriteOutputs(LoopStmt& loop, const std::vector<std::vector<int64_t>>& values,
                      const std::array<AffineExpr, 3>& coordinates,
                      const std::vector<analysis::Constraint>& writer) {
    std::vector<FusionOutput> outputs = FusionOutputs(analysis_);
    for (size_t o = 0; o < outputs.size(); ++o) {
      const FusionOutput& output = outputs[o];
      const HloInstruction* hero = HeroOf(output.root);
      auto found = std::find(heroes_.begin(), heroes_.end(), hero);
      if (found == heroes_.end()) continue;  // a side output
      std::vector<int64_t> reduced = values[found - heroes_.begin()];
      if (presence_) {
        // The init, folded in once; the output has no presence.
        int64_t finished = next_value_;
        next_value_ += Width(hero);
        loop.body.push_back(CombineStmt{hero, {}, reduced, finished, true});
        reduced.clear();
        for (int64_t i = 0; i < Outputs(hero); ++i) reduced.push_back(finished + i);
      }
      int64_t buffer = kernel_.OutputBuffer(static_cast<int64_t>(o));
      TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> hero_at, OutputIndex(hero, sizes_, coordinates));
      if (output.root == hero) {
        int64_t leaf = std::max<int64_t>(output.leaf, 0);
        if (config_.split > 1 && !config_.tree) {
          // Several blocks share the output: each folds its part in atomically, into a
          // buffer that starts at the (identity) init.
          loop.body.push_back(
              AtomicStmt{SplitAtomicOp(hero), buffer, hero_at, reduced[leaf], writer});
          kernel_.buffers[buffer].fill = hero->operand(1)->literal()->GetDouble(0);
          continue;
        }
        loop.body.push_back(StoreStmt{buffer, hero_at, reduced[leaf], writer});
        continue;
      }
      if (output.leaf >= 0) {
        return Unimplemented("output '" + output.root->name() +
                             "' is a tuple leaf of an epilogue; the reduction emitter writes "
                             "array epilogues");
      }
      const hlo::Shape& hero_shape = *ArrayLeaves(hero->shape()).front();
      std::vector<ValueBinding> bindings;
      const HloInstruction* target = Outputs(hero) == 1 ? BindingTarget(output.root, hero) : hero;
      TS_ASSIGN_OR_RETURN(
          std::vector<AffineExpr> target_at,
          ReinterpretIndex(hero_shape, *ArrayLeaves(target->shape()).front(), hero_at));
      for (size_t i = 0; i < reduced.size(); ++i) {
        int64_t leaf = hero->shape().IsTuple() ? static_cast<int64_t>(i) : -1;
        bindings.push_back(ValueBinding{target, target_at, reduced[i], leaf});
      }
      TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> root_at,
                          ReinterpretIndex(hero_shape, *output.shape, hero_at));
      int64_t value = Call(loop, output.root, root_at, std::move(bindings));
      loop.body.push_back(StoreStmt{buffer, root_at, value, writer});
    }
    return OkStatus();
  }

  // Roots that are not reductions: a grid-stride loop over their own elements.
  Status AddSideOutputs(Phase& phase) {
    std::vector<FusionOutput> outputs = FusionOutputs(analysis_);
    for (size_t o = 0; o < outputs.size(); ++o) {
      const FusionOutput& output = outputs[o];
      const HloInstruction* hero = HeroOf(output.root);
      if (std::find(heroes_.begin(), heroes_.end(), hero) != heroes_.end()) continue;
      if (output.leaf >= 0) {
        return Unimplemented("side output '" + output.root->name() +
                             "' is a tuple leaf; the reduction emitter writes array roots");
      }
      ElementLoopShape shape;
      shape.threads = config_.threads();
      shape.blocks_x = blocks_;
      shape.chunks = CeilDiv(output.shape->ElementCount(), config_.threads() * blocks_);
      analysis::IndexingMap map =
          ElementLoopMap(shape, *output.shape, {}, [](std::span<const AffineExpr> index) {
            return std::vector<AffineExpr>(index.begin(), index.end());
          });
      LoopStmt loop{std::move(map), {}};
      std::vector<AffineExpr> at;
      for (int64_t i = 0; i < output.shape->rank(); ++i) at.push_back(AffineExpr::Dim(i));
      int64_t value = Call(loop, output.root, at, {});
      loop.body.push_back(StoreStmt{kernel_.OutputBuffer(static_cast<int64_t>(o)), at, value});
      phase.loops.push_back(std::move(loop));
    }
    return OkStatus();
  }

  // Values a partial of `hero` carries: one per reducer output, and the presence flag.
  int64_t Width(const HloInstruction* hero) const { return Outputs(hero) + (presence_ ? 1 : 0); }

  const HloInstruction* HeroOf(const HloInstruction* root) const {
    for (size_t r = 0; r < analysis_.roots.size(); ++r) {
      if (analysis_.roots[r] == root) return analysis_.heroes[r];
    }
    return root;
  }

  int64_t Call(LoopStmt& loop, const HloInstruction* root, std::vector<AffineExpr> at,
               std::vector<ValueBinding> bindings) {
    auto [it, added] = function_of_.emplace(root, static_cast<int64_t>(kernel_.functions.size()));
    if (added) kernel_.functions.push_back({root->name(), {root}, OperandClosure(root)});
    int64_t value = next_value_;
    next_value_ += static_cast<int64_t>(kernel_.functions[it->second].Leaves().size());
    loop.body.push_back(CallStmt{it->second, std::move(at), value, std::move(bindings)});
    return value;
  }

  const FusionAnalysis& analysis_;
  const ReductionConfig& config_;
  std::array<int64_t, 3> sizes_;
  bool row_;
  bool presence_ = false;
  KernelIR& kernel_;
  std::vector<const HloInstruction*> heroes_;
  std::vector<std::vector<int64_t>> shared_of_;   // per hero: one alloc per reducer output
  std::vector<std::vector<int64_t>> scratch_of_;  // per hero: a tree's partials buffers
  Arrival arrival_;
  int64_t tiles_ = 1;  // a tree's groups of blocks that share outputs
  std::unordered_map<const HloInstruction*, int64_t> function_of_;
  int64_t blocks_ = 1;
  int64_t result_count_ = 0;
  int64_t next_value_ = 0;
};

}  // namespace
Expected<KernelIR> EmitReductionKernel(const FusionAnalysis& analysis,
                                       const ReductionConfig& config, const DeviceInfo& device) {
  TS_RETURN_IF_ERROR(ValidateReductionConfig(config, analysis, device));
  KernelIR kernel;
  kernel.name = analysis.fusion->name();
  kernel.fusion = analysis.fusion;
  kernel.emitter = "reduction";
  kernel.config_json = config.ToJson().dump();
  AddFusionBuffers(analysis, kernel);
  ReductionKernelBuilder builder(analysis, config, kernel);
  TS_RETURN_IF_ERROR(builder.Build());
  return kernel;
}

namespace {

class ReductionEmitter final : public Emitter {
 public:
  std::string_view name() const override { return "reduction"; }
  std::span<const ConfigField> config_fields() const override {
    // `second_pass` ("tree" when partials are combined by a tree) has been no column since
    // the first feature schema; a column for it needs a new schema version.
    static constexpr ConfigField kFields[] = {
        {"threads_x"},           {"threads_y"}, {"vector"},
        {"elements_per_thread"}, {"split"},     {"second_pass", FeatureEncoding::kNone}};
    return kFields;
  }

  nlohmann::json DefaultConfig(const FusionAnalysis& analysis,
                               const DeviceInfo& device) const override {
    return DefaultReductionConfig(analysis, device).ToJson();
  }

  Status Validate(const FusionAnalysis& analysis, const nlohmann::json& config,
                  const DeviceInfo& device) const override {
    TS_ASSIGN_OR_RETURN(ReductionConfig reduction, Read(analysis, config, device));
    return ValidateReductionConfig(reduction, analysis, device);
  }

  Expected<KernelIR> Emit(const FusionAnalysis& analysis, const nlohmann::json& config,
                          const DeviceInfo& device) const override {
    TS_ASSIGN_OR_RETURN(ReductionConfig reduction, Read(analysis, config, device));
    return EmitReductionKernel(analysis, reduction, device);
  }

  std::vector<SpaceEntry> Space(const FusionAnalysis& analysis,
                                const DeviceInfo& device) const override {
    return ReductionSpace(analysis, device);
  }

 private:
  static Expected<ReductionConfig> Read(const FusionAnalysis& analysis,
                                        const nlohmann::json& config, const DeviceInfo& device) {
    ReductionConfig base = DefaultReductionConfig(analysis, device);
    if (config.is_null()) return base;
    return ReductionConfig::FromJson(config, base);
  }
};

}  // namespace

std::unique_ptr<Emitter> MakeReductionEmitter() { return std::make_unique<ReductionEmitter>(); }

}  // namespace tilesmith::emitters
