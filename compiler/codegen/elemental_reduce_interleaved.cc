// An elemental reduce with several accumulators along its innermost reduced dim, for
// targets whose threads run one element after another (elemental.h's
// ReductionAccumulators): consecutive elements go to the accumulators in turn, which are
// combined pairwise at the end. The reducer is associative and commutative (XLA's
// contract), and the first elements seed the accumulators, so the init value is still
// combined exactly once, as the evaluator does.
#include <algorithm>
#include <unordered_set>

#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/loop_builder.h"

namespace tilesmith::codegen {

using analysis::AffineExpr;
using analysis::Interval;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsSmallElementwiseClosure(const HloInstruction& reduce, int64_t inputs) {
  // Each accumulator, and each seed, is a copy of the inputs' code: keep them small, and
  // free of the ops that are loops or large code themselves.
  constexpr size_t kMostInstructions = 24;
  std::unordered_set<const HloInstruction*> seen;
  std::vector<const HloInstruction*> pending;
  for (int64_t i = 0; i < inputs; ++i) pending.push_back(reduce.operand(i));
  while (!pending.empty()) {
    const HloInstruction* instruction = pending.back();
    pending.pop_back();
    if (!seen.insert(instruction).second) continue;
    if (seen.size() > kMostInstructions) return false;
    switch (instruction->opcode()) {
      case HloOpcode::kDot:
      case HloOpcode::kConvolution:
      case HloOpcode::kGather:
      case HloOpcode::kScatter:
      case HloOpcode::kSort:
      case HloOpcode::kReduceWindow:
      case HloOpcode::kCustomCall:
        return false;
      default:
        break;
    }
    for (const HloInstruction* operand : instruction->operands()) pending.push_back(operand);
  }
  return true;
}

Expected<std::vector<ScalarValue>> ReduceInterleaved(
    ElementalEmitter& emitter, const analysis::IndexingMap& map, std::vector<ScalarValue> initial,
    int accumulators, const ElementsAt& elements_at, const Combine& combine) {
  if (map.IsKnownEmpty()) return initial;
  std::vector<Interval> ranges;
  for (const analysis::SymbolVar& symbol : map.symbols()) {
    if (symbol.kind == analysis::SymbolKind::kRange) ranges.push_back(symbol.range);
  }
  std::vector<hlo::PrimitiveType> types;
  for (const ScalarValue& v : initial) types.push_back(v.type);
  llvm::IRBuilder<>& b = emitter.builder();
  std::vector<AffineExpr> bound;
  // One element's values, its memoised subexpressions kept to itself.
  auto at = [&](const AffineExpr& innermost) -> Expected<std::vector<ScalarValue>> {
    std::vector<AffineExpr> loops = bound;
    loops.push_back(innermost);
    emitter.PushScope();
    auto values = elements_at(loops);
    emitter.PopScope();
    return values;
  };
  // carried = combine(carried, element) for the innermost symbol over [first, last].
  auto plain_loop = [&](int64_t first, int64_t last,
                        std::vector<ScalarValue> carried) -> Expected<std::vector<ScalarValue>> {
    if (first > last) return carried;
    TS_ASSIGN_OR_RETURN(
        std::vector<llvm::Value*> result,
        EmitCountedLoop(
            b, b.getInt64(first), b.getInt64(last + 1), {Pack(b, carried)},
            [&](llvm::Value* i,
                std::vector<llvm::Value*> values) -> Expected<std::vector<llvm::Value*>> {
              emitter.PushScope();
              AffineExpr symbol = emitter.env().AddVariable(i, Interval{first, last});
              auto element = at(symbol);
              emitter.PopScope();
              if (!element) return std::unexpected(element.error());
              TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> next,
                                  combine(Unpack(b, values[0], types), *element));
              return std::vector<llvm::Value*>{Pack(b, next)};
            },
            "reduce"));
    return Unpack(b, result[0], types);
  };
  std::function<Expected<std::vector<ScalarValue>>(size_t, std::vector<ScalarValue>)> nest =
      [&](size_t depth, std::vector<ScalarValue> carried) -> Expected<std::vector<ScalarValue>> {
    Interval range = ranges[depth];
    if (range.IsEmpty()) return carried;
    int64_t size = range.upper - range.lower + 1;
    if (depth + 1 < ranges.size()) {
      TS_ASSIGN_OR_RETURN(
          std::vector<llvm::Value*> result,
          EmitCountedLoop(
              b, b.getInt64(range.lower), b.getInt64(range.upper + 1), {Pack(b, carried)},
              [&](llvm::Value* i,
                  std::vector<llvm::Value*> values) -> Expected<std::vector<llvm::Value*>> {
                emitter.PushScope();
                bound.push_back(emitter.env().AddVariable(i, range));
                auto next = nest(depth + 1, Unpack(b, values[0], types));
                bound.pop_back();
                emitter.PopScope();
                if (!next) return std::unexpected(next.error());
                return std::vector<llvm::Value*>{Pack(b, *next)};
              },
              "reduce"));
      return Unpack(b, result[0], types);
    }
    int64_t lanes = accumulators;
    if (size < 2 * lanes) return plain_loop(range.lower, range.upper, std::move(carried));
    // Seeds: the first element joins the carried value, the next ones start the others.
    std::vector<std::vector<ScalarValue>> sets;
    for (int64_t k = 0; k < lanes; ++k) {
      TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> element,
                          at(AffineExpr::Constant(range.lower + k)));
      if (k == 0) {
        TS_ASSIGN_OR_RETURN(element, combine(carried, element));
      }
      sets.push_back(std::move(element));
    }
    int64_t rounds = size / lanes;
    if (rounds > 1) {
      std::vector<llvm::Value*> packed;
      for (const std::vector<ScalarValue>& set : sets) packed.push_back(Pack(b, set));
      TS_ASSIGN_OR_RETURN(
          packed, EmitCountedLoop(
                      b, b.getInt64(1), b.getInt64(rounds), packed,
                      [&](llvm::Value* i,
                          std::vector<llvm::Value*> values) -> Expected<std::vector<llvm::Value*>> {
                        emitter.PushScope();
                        AffineExpr round = emitter.env().AddVariable(i, Interval{1, rounds - 1});
                        std::vector<llvm::Value*> next;
                        Status status = OkStatus();
                        for (int64_t k = 0; k < lanes && status; ++k) {
                          auto element = at(round * lanes + (range.lower + k));
                          if (!element) {
                            status = std::unexpected(element.error());
                            break;
                          }
                          auto combined = combine(Unpack(b, values[k], types), *element);
                          if (!combined) {
                            status = std::unexpected(combined.error());
                            break;
                          }
                          next.push_back(Pack(b, *combined));
                        }
                        emitter.PopScope();
                        if (!status) return std::unexpected(status.error());
                        return next;
                      },
                      "reduce_lanes"));
      for (int64_t k = 0; k < lanes; ++k) sets[k] = Unpack(b, packed[k], types);
    }
    for (int64_t stride = 1; stride < lanes; stride *= 2) {
      for (int64_t k = 0; k + stride < lanes; k += 2 * stride) {
        TS_ASSIGN_OR_RETURN(sets[k], combine(sets[k], sets[k + stride]));
      }
    }
    return plain_loop(range.lower + rounds * lanes, range.upper, std::move(sets[0]));
  };
  if (ranges.empty()) {
    TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> element, at(AffineExpr::Constant(0)));
    return combine(std::move(initial), element);
  }
  return nest(0, std::move(initial));
}

}  // namespace tilesmith::codegen
