// Elements of ops that move indices (through their indexing maps) or combine many input
// elements (reduce, reduce-window, dot): the maps of analysis/op_indexing.h say which
// operand elements an output element reads; this file turns them into loads, branches and
// loops. Gather and scatter, whose reads depend on data, are in elemental_gather_scatter.cc.
#include <algorithm>
#include <array>

#include "compiler/analysis/op_indexing.h"
#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/loop_builder.h"
#include "compiler/codegen/ordered_keys.h"

namespace tilesmith::codegen {

using analysis::AffineExpr;
using hlo::PrimitiveType;

std::vector<AffineExpr> ApplyMap(ElementalEmitter& emitter, const analysis::IndexingMap& map,
                                 std::span<const AffineExpr> index,
                                 std::span<const AffineExpr> symbols) {
  std::vector<AffineExpr> results;
  for (const AffineExpr& result : map.results()) {
    results.push_back(emitter.Simplify(result.Substitute(index, symbols)));
  }
  return results;
}

llvm::Value* ConstraintsHold(ElementalEmitter& emitter, const analysis::IndexingMap& map,
                             std::span<const AffineExpr> index,
                             std::span<const AffineExpr> symbols) {
  llvm::IRBuilder<>& b = emitter.builder();
  llvm::Value* condition = nullptr;
  // A map may narrow a dim's range instead of constraining it (a concatenate piece).
  for (int64_t i = 0; i < map.dim_count() && i < static_cast<int64_t>(index.size()); ++i) {
    analysis::Interval range = emitter.env().RangeOf(index[i]);
    if (map.dim_range(i).Contains(range)) continue;
    if (range.Intersect(map.dim_range(i)).IsEmpty()) return b.getFalse();
    llvm::Value* value = emitter.env().Emit(index[i]);
    llvm::Value* inside = b.CreateAnd(b.CreateICmpSGE(value, b.getInt64(map.dim_range(i).lower)),
                                      b.CreateICmpSLE(value, b.getInt64(map.dim_range(i).upper)));
    condition = condition == nullptr ? inside : b.CreateAnd(condition, inside);
  }
  for (const analysis::Constraint& constraint : map.constraints()) {
    AffineExpr expr = emitter.Simplify(constraint.expr.Substitute(index, symbols));
    analysis::Interval range = emitter.env().RangeOf(expr);
    if (constraint.range.Contains(range)) continue;
    if (range.Intersect(constraint.range).IsEmpty()) return b.getFalse();
    llvm::Value* value = emitter.env().Emit(expr);
    llvm::Value* holds = b.CreateAnd(b.CreateICmpSGE(value, b.getInt64(constraint.range.lower)),
                                     b.CreateICmpSLE(value, b.getInt64(constraint.range.upper)));
    condition = condition == nullptr ? holds : b.CreateAnd(condition, holds);
  }
  return condition;
}

llvm::Value* IndexAsInt64(llvm::IRBuilderBase& b, ScalarValue value) {
  if (hlo::IsSignedIntegral(value.type)) return b.CreateSExtOrTrunc(value.value, b.getInt64Ty());
  llvm::Value* wide = b.CreateZExtOrTrunc(value.value, b.getInt64Ty());
  if (value.type != PrimitiveType::kU64) return wide;
  // A u64 above INT64_MAX is far past any bound, not negative.
  return b.CreateSelect(b.CreateICmpSLT(wide, b.getInt64(0)), b.getInt64(INT64_MAX), wide);
}

llvm::Value* ClampIndex(llvm::IRBuilderBase& b, llvm::Value* value, int64_t lower, int64_t upper) {
  value = b.CreateSelect(b.CreateICmpSLT(value, b.getInt64(lower)), b.getInt64(lower), value);
  return b.CreateSelect(b.CreateICmpSGT(value, b.getInt64(upper)), b.getInt64(upper), value);
}

llvm::Value* Pack(llvm::IRBuilderBase& b, std::span<const ScalarValue> values) {
  std::vector<llvm::Type*> types;
  for (const ScalarValue& v : values) types.push_back(v.value->getType());
  llvm::Value* packed = llvm::UndefValue::get(llvm::StructType::get(b.getContext(), types));
  for (size_t i = 0; i < values.size(); ++i) {
    packed = b.CreateInsertValue(packed, values[i].value, {static_cast<unsigned>(i)});
  }
  return packed;
}

std::vector<ScalarValue> Unpack(llvm::IRBuilderBase& b, llvm::Value* packed,
                                std::span<const hlo::PrimitiveType> types) {
  std::vector<ScalarValue> values;
  for (size_t i = 0; i < types.size(); ++i) {
    values.push_back({b.CreateExtractValue(packed, {static_cast<unsigned>(i)}), types[i]});
  }
  return values;
}

namespace {

using analysis::IndexingMap;
using analysis::SymbolKind;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Binds the runtime symbols of `map` (clamped offsets read from scalar operands) and
// leaves range symbols to the caller: `symbols` gets one expression per symbol, with
// range symbols taken from `range_values` in order.
Expected<std::vector<AffineExpr>> BindSymbols(ElementalEmitter& emitter, const IndexingMap& map,
                                              std::span<const AffineExpr> range_values) {
  std::vector<AffineExpr> symbols;
  size_t next_range = 0;
  llvm::IRBuilder<>& b = emitter.builder();
  for (const analysis::SymbolVar& symbol : map.symbols()) {
    if (symbol.kind == SymbolKind::kRange) {
      if (next_range >= range_values.size()) {
        return MakeError(ErrorCode::kInternal, "an indexing map has more loops than bound");
      }
      symbols.push_back(range_values[next_range++]);
      continue;
    }
    TS_ASSIGN_OR_RETURN(ScalarValue offset, emitter.EmitElement(*symbol.source, {}));
    // Offsets are clamped so the slice stays inside the operand (XLA semantics).
    llvm::Value* wide =
        ClampIndex(b, IndexAsInt64(b, offset), symbol.range.lower, symbol.range.upper);
    symbols.push_back(emitter.env().AddVariable(wide, symbol.range));
  }
  return symbols;
}

// Reads operand `operand` of `instruction` through its map (no range symbols).
Expected<ScalarValue> ReadThrough(ElementalEmitter& emitter, const HloInstruction& instruction,
                                  int64_t operand, const IndexingMap& map,
                                  std::span<const AffineExpr> index) {
  TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> symbols, BindSymbols(emitter, map, {}));
  return emitter.EmitElement(*instruction.operand(operand), ApplyMap(emitter, map, index, symbols));
}

// Picks among operands by their maps' constraints (pad, concatenate, dynamic-update-slice):
// the first operand in `candidates` whose constraints hold, else `fallback`.
Expected<ScalarValue> Select(ElementalEmitter& emitter, const HloInstruction& instruction,
                             const std::vector<IndexingMap>& maps,
                             std::span<const int64_t> candidates, int64_t fallback,
                             std::span<const AffineExpr> index) {
  if (candidates.empty()) return ReadThrough(emitter, instruction, fallback, maps[fallback], index);
  int64_t operand = candidates[0];
  TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> symbols, BindSymbols(emitter, maps[operand], {}));
  llvm::Value* condition = ConstraintsHold(emitter, maps[operand], index, symbols);
  auto taken = [&]() -> Expected<ScalarValue> {
    return emitter.EmitElement(*instruction.operand(operand),
                               ApplyMap(emitter, maps[operand], index, symbols));
  };
  auto rest = [&]() -> Expected<ScalarValue> {
    return Select(emitter, instruction, maps, candidates.subspan(1), fallback, index);
  };
  if (condition == nullptr) return taken();
  PrimitiveType type =
      instruction.shape().IsTuple() ? PrimitiveType::kInvalid : instruction.shape().element_type();
  auto scoped = [&](const std::function<Expected<ScalarValue>()>& arm) -> Expected<llvm::Value*> {
    emitter.PushScope();
    auto value = arm();
    emitter.PopScope();
    if (!value) return std::unexpected(value.error());
    return value->value;
  };
  TS_ASSIGN_OR_RETURN(llvm::Value * value,
                      EmitIfElse(
                          emitter.builder(), condition, [&] { return scoped(taken); },
                          [&] { return scoped(rest); }));
  return ScalarValue{value, type};
}

// Loops over the range symbols of `map` (the reduced dims, the window, the contracting
// dims), carrying `initial` through `step(symbol values, carried) -> carried`.
Expected<std::vector<ScalarValue>> ReduceOverSymbols(
    ElementalEmitter& emitter, const IndexingMap& map, std::vector<ScalarValue> initial,
    const std::function<Expected<std::vector<ScalarValue>>(std::span<const AffineExpr>,
                                                           std::vector<ScalarValue>)>& step) {
  // No input element at all (a zero-sized reduced or contracted dimension): the
  // accumulators keep their initial values.
  if (map.IsKnownEmpty()) return initial;
  std::vector<analysis::Interval> ranges;
  for (const analysis::SymbolVar& symbol : map.symbols()) {
    if (symbol.kind == SymbolKind::kRange) ranges.push_back(symbol.range);
  }
  std::vector<PrimitiveType> types;
  for (const ScalarValue& v : initial) types.push_back(v.type);
  llvm::IRBuilder<>& b = emitter.builder();
  std::vector<AffineExpr> bound;
  std::function<Expected<std::vector<ScalarValue>>(size_t, std::vector<ScalarValue>)> nest =
      [&](size_t depth, std::vector<ScalarValue> carried) -> Expected<std::vector<ScalarValue>> {
    if (depth == ranges.size()) return step(bound, std::move(carried));
    analysis::Interval range = ranges[depth];
    if (range.IsEmpty()) return carried;
    llvm::Value* packed = Pack(b, carried);
    TS_ASSIGN_OR_RETURN(
        std::vector<llvm::Value*> result,
        EmitCountedLoop(
            b, b.getInt64(range.lower), b.getInt64(range.upper + 1), {packed},
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
  };
  return nest(0, std::move(initial));
}

Expected<ScalarValue> EmitReduce(ElementalEmitter& emitter, const HloInstruction& reduce,
                                 std::span<const AffineExpr> index, int64_t tuple_index) {
  int64_t n = reduce.operand_count() / 2;
  std::vector<IndexingMap> maps =
      analysis::OutputToInputIndexing(reduce, std::max<int64_t>(tuple_index, 0));
  std::vector<ScalarValue> initial;
  for (int64_t i = 0; i < n; ++i) {
    TS_ASSIGN_OR_RETURN(ScalarValue init, emitter.EmitElement(*reduce.operand(n + i), {}));
    initial.push_back(init);
  }
  bool window = reduce.opcode() == HloOpcode::kReduceWindow;
  // A window that never reaches into padding reads every point of its loops, as a reduce.
  if (!window || maps[0].constraints().empty()) {
    int accumulators = emitter.hooks().ReductionAccumulators(initial.front().type);
    std::optional<OrderedKeys> keys;
    if (emitter.hooks().FoldMinMaxAsOrderedKeys()) keys = OrderedKeysOf(reduce);
    if (accumulators > 1 && IsSmallElementwiseClosure(reduce, n)) {
      llvm::IRBuilder<>& b = emitter.builder();
      // An integer max is a reduction LLVM's loop vectoriser takes whole: along a reduce's
      // rows one key chain vectorises over consecutive elements, where interleaved chains
      // became strided shuffles (a row max in a loop fusion ran 2.3x slower). A window's
      // few points keep the independent chains.
      int chains = keys && reduce.opcode() == HloOpcode::kReduce ? 1 : accumulators;
      std::vector<ScalarValue> start = initial;
      if (keys) start[0] = EncodeKey(b, *keys, start[0]);
      TS_ASSIGN_OR_RETURN(
          std::vector<ScalarValue> result,
          ReduceInterleaved(
              emitter, maps[0], std::move(start), chains,
              [&](std::span<const AffineExpr> loops) -> Expected<std::vector<ScalarValue>> {
                TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> symbols,
                                    BindSymbols(emitter, maps[0], loops));
                std::vector<ScalarValue> elements;
                for (int64_t i = 0; i < n; ++i) {
                  TS_ASSIGN_OR_RETURN(ScalarValue x, emitter.EmitElement(*reduce.operand(i),
                                                                         ApplyMap(emitter, maps[i],
                                                                                  index, symbols)));
                  elements.push_back(keys ? EncodeKey(b, *keys, x) : x);
                }
                return elements;
              },
              [&](std::vector<ScalarValue> a,
                  std::span<const ScalarValue> rhs) -> Expected<std::vector<ScalarValue>> {
                if (keys) return std::vector<ScalarValue>{CombineKeys(b, *keys, a[0], rhs[0])};
                a.insert(a.end(), rhs.begin(), rhs.end());
                return emitter.CallScalarComputation(*reduce.called_computation(), a);
              }));
      ScalarValue value = result[std::max<int64_t>(tuple_index, 0)];
      return keys ? DecodeKey(b, *keys, value) : value;
    }
  }
  TS_ASSIGN_OR_RETURN(
      std::vector<ScalarValue> result,
      ReduceOverSymbols(
          emitter, maps[0], initial,
          [&](std::span<const AffineExpr> loops,
              std::vector<ScalarValue> accumulators) -> Expected<std::vector<ScalarValue>> {
            TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> symbols,
                                BindSymbols(emitter, maps[0], loops));
            auto combine = [&]() -> Expected<std::vector<ScalarValue>> {
              std::vector<ScalarValue> args = accumulators;
              for (int64_t i = 0; i < n; ++i) {
                TS_ASSIGN_OR_RETURN(
                    ScalarValue x, emitter.EmitElement(*reduce.operand(i),
                                                       ApplyMap(emitter, maps[i], index, symbols)));
                args.push_back(x);
              }
              return emitter.CallScalarComputation(*reduce.called_computation(), args);
            };
            // A window position in the padding contributes nothing (XLA's evaluator).
            llvm::Value* inside =
                window ? ConstraintsHold(emitter, maps[0], index, symbols) : nullptr;
            if (inside == nullptr) return combine();
            std::vector<PrimitiveType> types;
            for (const ScalarValue& v : accumulators) types.push_back(v.type);
            TS_ASSIGN_OR_RETURN(llvm::Value * packed, EmitIfElse(
                                                          emitter.builder(), inside,
                                                          [&]() -> Expected<llvm::Value*> {
                                                            emitter.PushScope();
                                                            auto next = combine();
                                                            emitter.PopScope();
                                                            if (!next)
                                                              return std::unexpected(next.error());
                                                            return Pack(emitter.builder(), *next);
                                                          },
                                                          [&]() -> Expected<llvm::Value*> {
                                                            return Pack(emitter.builder(),
                                                                        accumulators);
                                                          }));
            return Unpack(emitter.builder(), packed, types);
          }));
  return result[std::max<int64_t>(tuple_index, 0)];
}

// The accumulation type of a dot, as the evaluator picks it from all three element types:
// c128 if any is complex, else f64 if any is f64, else f32 if any is a float, else s64
// (integers wrap the same at any width).
PrimitiveType DotAccumulation(const HloInstruction& dot) {
  std::array<PrimitiveType, 3> types = {dot.operand(0)->shape().element_type(),
                                        dot.operand(1)->shape().element_type(),
                                        dot.shape().element_type()};
  auto any = [&](auto predicate) { return std::any_of(types.begin(), types.end(), predicate); };
  if (any([](PrimitiveType t) { return hlo::IsComplex(t); })) return PrimitiveType::kC128;
  if (any([](PrimitiveType t) { return t == PrimitiveType::kF64; })) return PrimitiveType::kF64;
  if (any([](PrimitiveType t) { return hlo::IsFloatingPoint(t); })) return PrimitiveType::kF32;
  return PrimitiveType::kS64;
}

Expected<ScalarValue> EmitDot(ElementalEmitter& emitter, const HloInstruction& dot,
                              std::span<const AffineExpr> index) {
  std::vector<IndexingMap> maps = analysis::OutputToInputIndexing(dot);
  PrimitiveType accumulation = DotAccumulation(dot);
  ScalarValue zero = ConstantOfType(emitter.builder(), accumulation, 0.0);
  auto step = [&](std::span<const AffineExpr> loops,
                  std::vector<ScalarValue> carried) -> Expected<std::vector<ScalarValue>> {
    std::array<ScalarValue, 2> factors;
    for (int64_t i = 0; i < 2; ++i) {
      TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> symbols, BindSymbols(emitter, maps[i], loops));
      TS_ASSIGN_OR_RETURN(
          ScalarValue value,
          emitter.EmitElement(*dot.operand(i), ApplyMap(emitter, maps[i], index, symbols)));
      TS_ASSIGN_OR_RETURN(factors[i], EmitConvert(emitter, value, accumulation));
    }
    llvm::IRBuilder<>& b = emitter.builder();
    llvm::Value* l = factors[0].value;
    llvm::Value* r = factors[1].value;
    llvm::Value* acc = carried[0].value;
    llvm::Value* next;
    if (hlo::IsComplex(accumulation)) {
      llvm::Value* product = EmitComplexMultiply(emitter, accumulation, l, r);
      next = MakeComplex(
          b, b.CreateFAdd(b.CreateExtractValue(acc, 0), b.CreateExtractValue(product, 0)),
          b.CreateFAdd(b.CreateExtractValue(acc, 1), b.CreateExtractValue(product, 1)));
    } else if (hlo::IsFloatingPoint(accumulation)) {
      next = b.CreateFAdd(acc, b.CreateFMul(l, r));
    } else {
      next = b.CreateAdd(acc, b.CreateMul(l, r));
    }
    return std::vector<ScalarValue>{{next, accumulation}};
  };
  TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> sum,
                      ReduceOverSymbols(emitter, maps[0], {zero}, step));
  return EmitConvert(emitter, sum[0], dot.shape().element_type());
}

}  // namespace

Expected<ScalarValue> EmitStructuralElement(ElementalEmitter& emitter,
                                            const HloInstruction& instruction,
                                            std::span<const AffineExpr> index,
                                            int64_t tuple_index) {
  HloOpcode opcode = instruction.opcode();
  switch (opcode) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReshape:
    case HloOpcode::kSlice:
    case HloOpcode::kReverse:
    case HloOpcode::kDynamicSlice: {
      std::vector<IndexingMap> maps = analysis::OutputToInputIndexing(instruction);
      return ReadThrough(emitter, instruction, 0, maps[0], index);
    }
    case HloOpcode::kBitcast:
      return EmitBitcastElement(emitter, instruction, index);
    case HloOpcode::kPad: {
      std::vector<IndexingMap> maps = analysis::OutputToInputIndexing(instruction);
      std::vector<int64_t> candidates = {0};
      return Select(emitter, instruction, maps, candidates, 1, index);
    }
    case HloOpcode::kConcatenate: {
      std::vector<IndexingMap> maps = analysis::OutputToInputIndexing(instruction);
      std::vector<int64_t> candidates;
      for (int64_t i = 0; i + 1 < instruction.operand_count(); ++i) candidates.push_back(i);
      return Select(emitter, instruction, maps, candidates, instruction.operand_count() - 1, index);
    }
    case HloOpcode::kDynamicUpdateSlice: {
      std::vector<IndexingMap> maps = analysis::OutputToInputIndexing(instruction);
      std::vector<int64_t> candidates = {1};
      return Select(emitter, instruction, maps, candidates, 0, index);
    }
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
      return EmitReduce(emitter, instruction, index, tuple_index);
    case HloOpcode::kDot:
      return EmitDot(emitter, instruction, index);
    case HloOpcode::kGather:
      return EmitGatherElement(emitter, instruction, index);
    case HloOpcode::kScatter:
      return EmitScatterElement(emitter, instruction, index, tuple_index);
    case HloOpcode::kMap: {
      std::vector<ScalarValue> args;
      for (const HloInstruction* operand : instruction.operands()) {
        TS_ASSIGN_OR_RETURN(ScalarValue value, emitter.EmitElement(*operand, index));
        args.push_back(value);
      }
      TS_ASSIGN_OR_RETURN(std::vector<ScalarValue> results,
                          emitter.CallScalarComputation(*instruction.called_computation(), args));
      return results[0];
    }
    default:
      return Unimplemented("the elemental emitter does not implement '" +
                           std::string(hlo::HloOpcodeName(opcode)) + "'");
  }
}

}  // namespace tilesmith::codegen
