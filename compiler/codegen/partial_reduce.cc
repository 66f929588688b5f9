#include "compiler/codegen/partial_reduce.h"

#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/loop_builder.h"

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

}  // namespace tilesmith::codegen
