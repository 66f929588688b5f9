// Elements of ops that move indices (through their indexing maps) or combine many input
// elements (reduce, reduce-window, dot): the maps of analysis/op_indexing.h say which
// operand elements an output element reads; this file turns them into loads, branches and
// loops. Gather and scatter, whose reads depend on data, are in elemental_gather_scatter.cc.
#include "compiler/analysis/op_indexing.h"
#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/loop_builder.h"

namespace tilesmith::codegen {

Expected<ScalarValue> EmitGatherElement(ElementalEmitter& emitter, const hlo::HloInstruction& gather,
                                        std::span<const analysis::AffineExpr> index);
Expected<ScalarValue> EmitScatterElement(ElementalEmitter& emitter,
                                         const hlo::HloInstruction& scatter,
                                         std::span<const analysis::AffineExpr> index,
                                         int64_t tuple_index);

namespace {

using analysis::AffineExpr;
using analysis::IndexingMap;
using analysis::SymbolKind;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;

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
    llvm::Value* wide = hlo::IsSignedIntegral(offset.type)
                            ? b.CreateSExtOrTrunc(offset.value, b.getInt64Ty())
                            : b.CreateZExtOrTrunc(offset.value, b.getInt64Ty());
    // Offsets are clamped so the slice stays inside the operand (XLA semantics).
    wide = b.CreateSelect(b.CreateICmpSLT(wide, b.getInt64(symbol.range.lower)),
                          b.getInt64(symbol.range.lower), wide);
    wide = b.CreateSelect(b.CreateICmpSGT(wide, b.getInt64(symbol.range.upper)),
                          b.getInt64(symbol.range.upper), wide);
    symbols.push_back(emitter.env().AddVariable(wide, symbol.range));
  }
  return symbols;
}

std::vector<AffineExpr> Apply(ElementalEmitter& emitter, const IndexingMap& map,
                              std::span<const AffineExpr> index,
                              std::span<const AffineExpr> symbols) {
  std::vector<AffineExpr> results;
  for (const AffineExpr& result : map.results()) {
    results.push_back(emitter.Simplify(result.Substitute(index, symbols)));
  }
  return results;
}

// The conjunction of `map`'s constraints at a point, or null when they always hold.
llvm::Value* ConstraintsHold(ElementalEmitter& emitter, const IndexingMap& map,
                             std::span<const AffineExpr> index, std::span<const AffineExpr> symbols) {
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
    llvm::Value* holds =
        b.CreateAnd(b.CreateICmpSGE(value, b.getInt64(constraint.range.lower)),
                    b.CreateICmpSLE(value, b.getInt64(constraint.range.upper)));
    condition = condition == nullptr ? holds : b.CreateAnd(condition, holds);
  }
  return condition;
}

// Reads operand `operand` of `instruction` through its map (no range symbols).
Expected<ScalarValue> ReadThrough(ElementalEmitter& emitter, const HloInstruction& instruction,
                                  int64_t operand, const IndexingMap& map,
                                  std::span<const AffineExpr> index) {
  TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> symbols, BindSymbols(emitter, map, {}));
  return emitter.EmitElement(*instruction.operand(operand), Apply(emitter, map, index, symbols));
}

// Picks among operands by their maps' constraints (pad, concatenate, dynamic-update-slice):
// the first operand in `candidates` whose constraints hold, else `fallback`.
Expected<ScalarValue> Select(ElementalEmitter& emitter, const HloInstruction& instruction,
                             const std::vector<IndexingMap>& maps, std::span<const int64_t> candidates,
                             int64_t fallback, std::span<const AffineExpr> index) {
  if (candidates.empty()) return ReadThrough(emitter, instruction, fallback, maps[fallback], index);
  int64_t operand = candidates[0];
  TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> symbols, BindSymbols(emitter, maps[operand], {}));
  llvm::Value* condition = ConstraintsHold(emitter, maps[operand], index, symbols);
  auto taken = [&]() -> Expected<ScalarValue> {
    return emitter.EmitElement(*instruction.operand(operand),
                               Apply(emitter, maps[operand], index, symbols));
  };
  auto rest = [&]() -> Expected<ScalarValue> {
    return Select(emitter, instruction, maps, candidates.subspan(1), fallback, index);
  };
  if (condition == nullptr) return taken();
  PrimitiveType type = instruction.shape().IsTuple() ? PrimitiveType::kInvalid
                                                     : instruction.shape().element_type();
  auto scoped = [&](const std::function<Expected<ScalarValue>()>& arm) -> Expected<llvm::Value*> {
    emitter.PushScope();
    auto value = arm();
    emitter.PopScope();
    if (!value) return std::unexpected(value.error());
    return value->value;
  };
  TS_ASSIGN_OR_RETURN(llvm::Value* value,
                      EmitIfElse(emitter.builder(), condition, [&] { return scoped(taken); },
                                 [&] { return scoped(rest); }));
  return ScalarValue{value, type};
}

// Packs values into one struct so a branch or loop can carry them as one.
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
                                std::span<const PrimitiveType> types) {
  std::vector<ScalarValue> values;
  for (size_t i = 0; i < types.size(); ++i) {
    values.push_back({b.CreateExtractValue(packed, {static_cast<unsigned>(i)}), types[i]});
  }
  return values;
}

// Loops over the range symbols of `map` (the reduced dims, the window, the contracting
// dims), carrying `initial` through `step(symbol values, carried) -> carried`.
Expected<std::vector<ScalarValue>> ReduceOverSymbols(
    ElementalEmitter& emitter, const IndexingMap& map, std::vector<ScalarValue> initial,
    const std::function<Expected<std::vector<ScalarValue>>(std::span<const AffineExpr>,
                                                           std::vector<ScalarValue>)>& step) {
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
            [&](llvm::Value* i, std::vector<llvm::Value*> values) -> Expected<std::vector<llvm::Value*>> {
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
  std::vector<IndexingMap> maps = analysis::OutputToInputIndexing(reduce, std::max<int64_t>(tuple_index, 0));
  std::vector<ScalarValue> initial;
  for (int64_t i = 0; i < n; ++i) {
    TS_ASSIGN_OR_RETURN(ScalarValue init, emitter.EmitElement(*reduce.operand(n + i), {}));
    initial.push_back(init);
  }
  bool window = reduce.opcode() == HloOpcode::kReduceWindow;
  TS_ASSIGN_OR_RETURN(
      std::vector<ScalarValue> result,
      ReduceOverSymbols(
          emitter, maps[0], initial,
          [&](std::span<const AffineExpr> loops,
              std::vector<ScalarValue> accumulators) -> Expected<std::vector<ScalarValue>> {
            TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> symbols, BindSymbols(emitter, maps[0], loops));
            auto combine = [&]() -> Expected<std::vector<ScalarValue>> {
              std::vector<ScalarValue> args = accumulators;
              for (int64_t i = 0; i < n; ++i) {
                TS_ASSIGN_OR_RETURN(ScalarValue x, emitter.EmitElement(*reduce.operand(i),
                                                                       Apply(emitter, maps[i], index, symbols)));
                args.push_back(x);
              }
              return emitter.CallScalarComputation(*reduce.called_computation(), args);
            };
            // A window position in the padding contributes nothing (XLA's evaluator).
            llvm::Value* inside = window ? ConstraintsHold(emitter, maps[0], index, symbols) : nullptr;
            if (inside == nullptr) return combine();
            std::vector<PrimitiveType> types;
            for (const ScalarValue& v : accumulators) types.push_back(v.type);
            TS_ASSIGN_OR_RETURN(
                llvm::Value* packed,
                EmitIfElse(
                    emitter.builder(), inside,
                    [&]() -> Expected<llvm::Value*> {
                      emitter.PushScope();
                      auto next = combine();
                      emitter.PopScope();
                      if (!next) return std::unexpected(next.error());
                      return Pack(emitter.builder(), *next);
                    },
                    [&]() -> Expected<llvm::Value*> { return Pack(emitter.builder(), accumulators); }));
            return Unpack(emitter.builder(), packed, types);
          }));
  return result[std::max<int64_t>(tuple_index, 0)];
}

// The accumulation type of a dot: f32 for every float narrower than f64, and the result's
// own type otherwise.
PrimitiveType DotAccumulation(PrimitiveType result) {
  if (hlo::IsNarrowFloat(result)) return PrimitiveType::kF32;
  return result;
}

Expected<ScalarValue> EmitDot(ElementalEmitter& emitter, const HloInstruction& dot,
                              std::span<const AffineExpr> index) {
  std::vector<IndexingMap> maps = analysis::OutputToInputIndexing(dot);
  PrimitiveType result_type = dot.shape().element_type();
  PrimitiveType accumulation = DotAccumulation(result_type);
  if (hlo::IsComplex(accumulation)) return Unimplemented("complex dot in the elemental emitter");
  ScalarValue zero = ConstantOfType(emitter.builder(), accumulation, 0.0);
  TS_ASSIGN_OR_RETURN(
      std::vector<ScalarValue> sum,
      ReduceOverSymbols(emitter, maps[0], {zero},
                        [&](std::span<const AffineExpr> loops, std::vector<ScalarValue> carried)
                            -> Expected<std::vector<ScalarValue>> {
                          TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> lhs_symbols,
                                              BindSymbols(emitter, maps[0], loops));
                          TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> rhs_symbols,
                                              BindSymbols(emitter, maps[1], loops));
                          TS_ASSIGN_OR_RETURN(ScalarValue lhs,
                                              emitter.EmitElement(*dot.operand(0),
                                                                  Apply(emitter, maps[0], index, lhs_symbols)));
                          TS_ASSIGN_OR_RETURN(ScalarValue rhs,
                                              emitter.EmitElement(*dot.operand(1),
                                                                  Apply(emitter, maps[1], index, rhs_symbols)));
                          TS_ASSIGN_OR_RETURN(ScalarValue l, EmitConvert(emitter, lhs, accumulation));
                          TS_ASSIGN_OR_RETURN(ScalarValue r, EmitConvert(emitter, rhs, accumulation));
                          llvm::IRBuilder<>& b = emitter.builder();
                          llvm::Value* acc = carried[0].value;
                          llvm::Value* next =
                              hlo::IsFloatingPoint(accumulation)
                                  ? b.CreateFAdd(acc, b.CreateFMul(l.value, r.value))
                                  : b.CreateAdd(acc, b.CreateMul(l.value, r.value));
                          return std::vector<ScalarValue>{{next, accumulation}};
                        }));
  return EmitConvert(emitter, sum[0], result_type);
}

// Reinterprets the bits of `value` as `to` (same width): bitcast between element types.
Expected<ScalarValue> ReinterpretBits(ElementalEmitter& emitter, ScalarValue value, PrimitiveType to) {
  if (value.type == to) return value;
  llvm::IRBuilder<>& b = emitter.builder();
  int bits = hlo::BitWidth(value.type);
  llvm::Value* raw = value.value;
  if (hlo::IsNarrowFloat(value.type)) {
    raw = EncodeNarrowFloatBits(b, raw, value.type);
    raw = b.CreateZExtOrTrunc(raw, b.getIntNTy(bits));
  } else if (raw->getType()->isFloatingPointTy()) {
    raw = b.CreateBitCast(raw, b.getIntNTy(bits));
  } else if (value.type == PrimitiveType::kPred) {
    raw = b.CreateZExt(raw, b.getInt8Ty());
  }
  if (hlo::IsComplex(to) || hlo::IsComplex(value.type)) {
    return Unimplemented("bitcast between complex and other types");
  }
  if (hlo::IsNarrowFloat(to)) return ScalarValue{DecodeNarrowFloatBits(b, raw, to), to};
  if (to == PrimitiveType::kF32 || to == PrimitiveType::kF64) {
    return ScalarValue{b.CreateBitCast(raw, ComputeType(b.getContext(), to)), to};
  }
  if (to == PrimitiveType::kPred) return ScalarValue{b.CreateICmpNE(raw, b.getInt8(0)), to};
  return ScalarValue{b.CreateZExtOrTrunc(raw, ComputeType(b.getContext(), to)), to};
}

}  // namespace

Expected<ScalarValue> EmitStructuralElement(ElementalEmitter& emitter, const HloInstruction& instruction,
                                            std::span<const AffineExpr> index, int64_t tuple_index) {
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
    case HloOpcode::kBitcast: {
      std::vector<IndexingMap> maps = analysis::OutputToInputIndexing(instruction);
      if (maps[0].IsUndefined()) {
        return Unimplemented("bitcast '" + instruction.name() + "' has no indexing map");
      }
      TS_ASSIGN_OR_RETURN(ScalarValue value, ReadThrough(emitter, instruction, 0, maps[0], index));
      return ReinterpretBits(emitter, value, instruction.shape().element_type());
    }
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
