#include "compiler/codegen/partial_reduce.h"

#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/loop_builder.h"
#include "compiler/codegen/ordered_keys.h"

namespace tilesmith::codegen {

using analysis::AffineExpr;
using analysis::Interval;

Expected<std::vector<ScalarValue>> ApplyReducer(ElementalEmitter& emitter,
                                                const hlo::HloInstruction& hero,
                                                std::span<const ScalarValue> lhs,
                                                std::span<const ScalarValue> rhs) {
  std::vector<ScalarValue> args(lhs.begin(), lhs.end());
  args.insert(args.end(), rhs.begin(), rhs.end());
  return emitter.CallScalarComputation(*hero.called_computation(), args);
}

Expected<std::vector<ScalarValue>> CombinePresent(ElementalEmitter& emitter,
                                                  const hlo::HloInstruction& hero,
                                                  std::span<const ScalarValue> lhs,
                                                  std::span<const ScalarValue> rhs) {
  size_t n = rhs.size() - 1;
  TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> both,
                      ApplyReducer(emitter, hero, lhs.subspan(0, n), rhs.subspan(0, n)));
  llvm::IRBuilder<>& b = emitter.builder();
  llvm::Value* left = lhs[n].value;
  llvm::Value* right = rhs[n].value;
  std::vector<ScalarValue> result;
  for (size_t i = 0; i < n; ++i) {
    llvm::Value* only_left = b.CreateSelect(right, both[i].value, lhs[i].value);
    result.push_back({b.CreateSelect(left, only_left, rhs[i].value), rhs[i].type});
  }
  result.push_back({b.CreateOr(left, right), hlo::PrimitiveType::kPred});
  return result;
}

Expected<std::vector<ScalarValue>> InitValues(ElementalEmitter& emitter,
                                              const hlo::HloInstruction& hero, bool presence,
                                              bool present) {
  int64_t outputs = hero.operand_count() / 2;
  std::vector<ScalarValue> values;
  for (int64_t i = 0; i < outputs; ++i) {
    TS_ASSIGN_OR_RETURN(ScalarValue init, emitter.EmitElement(*hero.operand(outputs + i), {}));
    values.push_back(init);
  }
  if (presence) {
    llvm::IRBuilder<>& b = emitter.builder();
    values.push_back({present ? b.getTrue() : b.getFalse(), hlo::PrimitiveType::kPred});
  }
  return values;
}

Expected<std::vector<ScalarValue>> FoldOverSymbols(ElementalEmitter& emitter,
                                                   const analysis::IndexingMap& map,
                                                   std::vector<ScalarValue> initial,
                                                   int64_t max_unrolled, const FoldStep& step) {
  std::vector<hlo::PrimitiveType> types;
  for (const ScalarValue& value : initial) types.push_back(value.type);
  llvm::IRBuilder<>& b = emitter.builder();
  std::vector<AffineExpr> bound;
  std::function<Expected<std::vector<ScalarValue>>(std::vector<ScalarValue>)> nest =
      [&](std::vector<ScalarValue> carried) -> Expected<std::vector<ScalarValue>> {
    if (static_cast<int64_t>(bound.size()) == map.symbol_count()) {
      return step(bound, std::move(carried));
    }
    Interval range = map.symbol(static_cast<int64_t>(bound.size())).range;
    if (range.IsEmpty()) return carried;
    if (range.NumElements() <= max_unrolled) {
      for (int64_t value = range.lower; value <= range.upper; ++value) {
        bound.push_back(AffineExpr::Constant(value));
        auto next = nest(std::move(carried));
        bound.pop_back();
        if (!next) return next;
        carried = std::move(*next);
      }
      return carried;
    }
    TS_ASSIGN_OR_RETURN(
        std::vector<llvm::Value*> result,
        EmitCountedLoop(
            b, b.getInt64(range.lower), b.getInt64(range.upper + 1), {Pack(b, carried)},
            [&](llvm::Value* i,
                std::vector<llvm::Value*> values) -> Expected<std::vector<llvm::Value*>> {
              emitter.PushScope();
              bound.push_back(emitter.env().AddVariable(i, range));
              auto next = nest(Unpack(b, values[0], types));
              bound.pop_back();
              emitter.PopScope();
              if (!next) return std::unexpected(next.error());
              return std::vector<llvm::Value*>{Pack(b, *next)};
            },
            "reduce"));
    return Unpack(b, result[0], types);
  };
  return nest(std::move(initial));
}

namespace {

// One point of a partial reduction: where the elements map's constraints hold, the
// element `source` reads there folded into `accumulators`.
Expected<std::vector<ScalarValue>> FoldPoint(
    ElementalEmitter& emitter, const emitters::ReduceStmt& reduce,
    std::span<const AffineExpr> index, std::span<const AffineExpr> bound,
    std::vector<ScalarValue> accumulators, std::span<const hlo::PrimitiveType> types,
    const ElementSource& source, const DomainCheck& check, const std::optional<OrderedKeys>& keys) {
  llvm::IRBuilder<>& b = emitter.builder();
  const hlo::HloInstruction& hero = *reduce.hero;
  int64_t outputs = hero.operand_count() / 2;
  // Partials stored by an earlier level carry their presence flag.
  bool stored_presence =
      reduce.presence && (!reduce.from_shared.empty() || !reduce.from_buffers.empty());
  const analysis::IndexingMap& map = reduce.elements;
  std::vector<AffineExpr> at;
  for (const AffineExpr& result : map.results()) {
    at.push_back(emitter.Simplify(result.Substitute(index, bound)));
  }
  std::vector<IndexEnv::Condition> conditions;
  for (const analysis::Constraint& constraint : map.constraints()) {
    conditions.emplace_back(constraint.expr.Substitute(index, bound), constraint.range);
  }
  Inside inside = check(conditions);
  auto step = [&]() -> Expected<llvm::Value*> {
    emitter.PushScope();
    std::vector<ScalarValue> elements;
    for (int64_t i = 0; i < outputs + (stored_presence ? 1 : 0); ++i) {
      Expected<ScalarValue> element = source(i, at);
      if (!element) {
        emitter.PopScope();
        return std::unexpected(element.error());
      }
      elements.push_back(*element);
    }
    if (reduce.presence && !stored_presence) {
      elements.push_back({b.getTrue(), hlo::PrimitiveType::kPred});
    }
    Expected<std::vector<ScalarValue>> next = std::vector<ScalarValue>{};
    if (keys) {
      next->push_back(CombineKeys(b, *keys, accumulators[0], EncodeKey(b, *keys, elements[0])));
    } else {
      next = reduce.presence ? CombinePresent(emitter, hero, accumulators, elements)
                             : ApplyReducer(emitter, hero, accumulators, elements);
    }
    emitter.PopScope();
    if (!next) return std::unexpected(next.error());
    return Pack(b, *next);
  };
  if (inside.condition == nullptr) {
    TS_ASSIGN_OR_RETURN(llvm::Value * packed, step());
    return Unpack(b, packed, types);
  }
  TS_ASSIGN_OR_RETURN(
      llvm::Value * packed,
      EmitIfElse(
          b, inside.condition, step,
          [&]() -> Expected<llvm::Value*> { return Pack(b, accumulators); }, inside.share));
  return Unpack(b, packed, types);
}

}  // namespace

// A thread's partial reduction: the accumulators start at the hero's init values (or, with
// presence, empty) and fold in every point of the elements map's symbols whose constraints
// hold, read from the hero's operands or from shared partials; with lanes, into the
// accumulator set the last symbol picks.
Expected<std::vector<ScalarValue>> EmitPartialReduce(ElementalEmitter& emitter,
                                                     const emitters::ReduceStmt& reduce,
                                                     std::span<const AffineExpr> index,
                                                     const ElementSource& source,
                                                     const DomainCheck& inside,
                                                     int64_t max_unrolled) {
  TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> lane,
                      InitValues(emitter, *reduce.hero, reduce.presence, false));
  std::optional<OrderedKeys> keys;
  if (!reduce.presence && emitter.hooks().FoldMinMaxAsOrderedKeys()) {
    keys = OrderedKeysOf(*reduce.hero);
  }
  llvm::IRBuilder<>& b = emitter.builder();
  if (keys) lane[0] = EncodeKey(b, *keys, lane[0]);
  size_t width = lane.size();
  std::vector<hlo::PrimitiveType> types;
  for (const ScalarValue& value : lane) types.push_back(value.type);
  std::vector<ScalarValue> initial;
  for (int64_t l = 0; l < reduce.lanes; ++l)
    initial.insert(initial.end(), lane.begin(), lane.end());
  const analysis::IndexingMap& map = reduce.elements;
  if (reduce.lanes > 1 &&
      (map.symbol_count() == 0 || reduce.lanes > max_unrolled ||
       map.symbol(map.symbol_count() - 1).range.NumElements() != reduce.lanes)) {
    return MakeError(ErrorCode::kInternal, "a reduce's lanes must be its last, unrolled symbol");
  }
  auto fold = [&](std::span<const AffineExpr> bound,
                  std::vector<ScalarValue> all) -> Expected<std::vector<ScalarValue>> {
    size_t set = reduce.lanes > 1 ? static_cast<size_t>(bound.back().value()) : 0;
    std::vector<ScalarValue> accumulators(all.begin() + set * width,
                                          all.begin() + (set + 1) * width);
    TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> next,
                        FoldPoint(emitter, reduce, index, bound, std::move(accumulators), types,
                                  source, inside, keys));
    std::copy(next.begin(), next.end(), all.begin() + set * width);
    return all;
  };
  TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> folded,
                      FoldOverSymbols(emitter, map, std::move(initial), max_unrolled, fold));
  if (keys) {
    for (ScalarValue& value : folded) value = DecodeKey(b, *keys, value);
  }
  return folded;
}

}  // namespace tilesmith::codegen
