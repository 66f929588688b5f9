#include "compiler/codegen/kernel_body.h"

#include <llvm/IR/Instructions.h>

#include "compiler/codegen/loop_builder.h"
#include "compiler/codegen/partial_reduce.h"

namespace tilesmith::codegen {
namespace {

using analysis::AffineExpr;
using analysis::Interval;
using emitters::BodyStmt;
using emitters::KernelIR;
using emitters::LoopStmt;

// Symbols with at most this many values are unrolled at compile time: vector lanes, so
// that their addresses are constant offsets the vectorisers can combine.
constexpr int64_t kMaxUnrolledSymbolRange = 8;
constexpr int64_t kWarpSize = 32;

// The bits of a value's storage, widened to whole 32-bit words (what shuffles and scratch
// slots move).
int64_t WordBits(hlo::PrimitiveType type) {
  return (std::max(1, hlo::BitWidth(type)) + 31) / 32 * 32;
}

// The atomicrmw operation of `op` on elements of `type`.
llvm::AtomicRMWInst::BinOp AtomicBinOp(emitters::AtomicOp op, hlo::PrimitiveType type) {
  bool is_float = hlo::IsFloatingPoint(type);
  bool is_signed = hlo::IsSignedIntegral(type);
  switch (op) {
    case emitters::AtomicOp::kAdd:
      return is_float ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
    case emitters::AtomicOp::kMax:
      return is_float ? llvm::AtomicRMWInst::FMax
                      : (is_signed ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax);
    case emitters::AtomicOp::kMin:
      return is_float ? llvm::AtomicRMWInst::FMin
                      : (is_signed ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin);
  }
  return llvm::AtomicRMWInst::Add;
}

// The status of a step whose result is not needed.
Status Done(const Expected<llvm::Value*>& step) {
  if (!step) return std::unexpected(step.error());
  return OkStatus();
}
}  // namespace

BodyEmitter::BodyEmitter(const KernelIR& kernel, llvm::IRBuilder<>& builder, KernelAbi& abi,
                         llvm::Function* function)
    : kernel_(kernel), builder_(builder), abi_(abi), function_(function), env_(builder) {
  std::vector<std::vector<BufferRef>> parameters(kernel.fusion->parameter_count());
  for (size_t i = 0; i < kernel.buffers.size(); ++i) {
    const emitters::KernelBuffer& buffer = kernel.buffers[i];
    buffers_.push_back(
        {abi.BufferPointer(builder, function, static_cast<int64_t>(i)), &buffer.shape});
    if (!buffer.is_parameter()) continue;
    std::vector<BufferRef>& leaves = parameters[buffer.index];
    size_t leaf = static_cast<size_t>(std::max<int64_t>(buffer.leaf, 0));
    if (leaves.size() <= leaf) leaves.resize(leaf + 1);
    leaves[leaf] = buffers_.back();
  }
  for (const emitters::SharedAlloc& alloc : kernel.shared) shared_shapes_.push_back(alloc.shape());
  for (size_t i = 0; i < kernel.shared.size(); ++i) {
    shared_.push_back(
        {abi.SharedBase(builder, function, kernel, static_cast<int64_t>(i)), &shared_shapes_[i]});
  }
  elemental_ = std::make_unique<ElementalEmitter>(builder, abi.hooks(), env_, parameters);
}

void BodyEmitter::SetLaunchIds(const std::array<llvm::Value*, emitters::kLaunchDims>& ids) {
  const emitters::LaunchGrid& grid = kernel_.launch;
  const std::array<int64_t, emitters::kLaunchDims> sizes = {grid.threads[0], grid.threads[1],
                                                            grid.threads[2], grid.blocks[0],
                                                            grid.blocks[1],  grid.blocks[2]};
  for (int64_t i = 0; i < emitters::kLaunchDims; ++i) {
    launch_[i] = env_.AddVariable(ids[i], Interval::ForSize(sizes[i]));
  }
}

Status BodyEmitter::EmitPhase(const emitters::Phase& phase) {
  for (const LoopStmt& loop : phase.loops) {
    TS_RETURN_IF_ERROR(abi_.LoopsOverLaunch() ? EmitHostLoop(loop) : EmitLoop(loop));
  }
  return OkStatus();
}

Status BodyEmitter::EmitLoop(const LoopStmt& loop) {
  std::vector<AffineExpr> symbols;
  return EmitSymbols(loop, symbols, [&](std::span<const AffineExpr> bound) {
    return EmitBody(loop, bound, Segment{0, loop.body.size(), false});
  });
}

Status BodyEmitter::EmitLoopInSegments(
    const LoopStmt& loop,
    const std::function<Status(const std::function<Status()>&)>& for_each_thread) {
  if (kernel_.launch.threads_per_block() % kWarpSize != 0) {
    return InvalidArgument("warp shuffles need whole warps; the block has " +
                           std::to_string(kernel_.launch.threads_per_block()) + " threads");
  }
  std::vector<size_t> starts = {0};
  for (size_t i = 0; i < loop.body.size(); ++i) {
    if (std::holds_alternative<emitters::ShuffleStmt>(loop.body[i]) && i > 0) starts.push_back(i);
  }
  std::vector<AffineExpr> symbols;
  return EmitSymbols(loop, symbols, [&](std::span<const AffineExpr> bound) -> Status {
    std::vector<AffineExpr> fixed(bound.begin(), bound.end());
    for (size_t k = 0; k < starts.size(); ++k) {
      size_t end = k + 1 < starts.size() ? starts[k + 1] : loop.body.size();
      Segment segment{starts[k], end, true};
      TS_RETURN_IF_ERROR(for_each_thread([&] { return EmitBody(loop, fixed, segment); }));
    }
    return OkStatus();
  });
}

Expected<llvm::Value*> BodyEmitter::Arrive(const emitters::Arrival& arrival) {
  const BufferRef& counter = buffers_[arrival.counter];
  std::vector<AffineExpr> at = {elemental_->Simplify(arrival.index.Substitute(launch_, {}))};
  auto count_in = [&]() -> Expected<llvm::Value*> {
    // Sequentially consistent: the block's earlier writes are seen by whoever arrives later.
    TS_ASSIGN_OR_RETURN(
        llvm::Value * before,
        elemental_->AtomicUpdate(counter, at, llvm::AtomicRMWInst::Add,
                                 {builder_.getInt32(1), hlo::PrimitiveType::kS32},
                                 static_cast<int>(llvm::AtomicOrdering::SequentiallyConsistent)));
    llvm::Value* last = builder_.CreateICmpEQ(before, builder_.getInt32(arrival.arrivals - 1));
    // No other block of this launch touches the element again: the next launch starts at 0.
    TS_RETURN_IF_ERROR(EmitIf(builder_, last, [&] {
      return elemental_->Store(counter, at, {builder_.getInt32(0), hlo::PrimitiveType::kS32});
    }));
    return last;
  };
  if (abi_.LoopsOverLaunch()) return count_in();
  // Every thread's writes are visible to the whole device before one thread counts the
  // block in, and its answer reaches every thread through shared memory.
  abi_.Fence(builder_);
  abi_.Barrier(builder_);
  const BufferRef& flag = shared_[arrival.flag];
  std::vector<AffineExpr> first = {AffineExpr::Constant(0)};
  llvm::Value* leader = builder_.CreateICmpEQ(LinearThreadId(), builder_.getInt64(0));
  TS_RETURN_IF_ERROR(EmitIf(builder_, leader, [&]() -> Status {
    // Values computed only in the leader's branch must not be reused after it.
    elemental_->PushScope();
    Expected<llvm::Value*> last = count_in();
    Status stored = last ? elemental_->Store(flag, first,
                                             {builder_.CreateZExt(*last, builder_.getInt32Ty()),
                                              hlo::PrimitiveType::kS32})
                         : std::unexpected(last.error());
    elemental_->PopScope();
    return stored;
  }));
  abi_.Barrier(builder_);
  TS_ASSIGN_OR_RETURN(ScalarValue told, elemental_->Load(flag, first));
  return builder_.CreateICmpNE(told.value, builder_.getInt32(0));
}

llvm::Value* BodyEmitter::LinearThreadId() {
  const emitters::LaunchGrid& grid = kernel_.launch;
  AffineExpr linear = launch_[emitters::kThreadIdX] +
                      launch_[emitters::kThreadIdY] * grid.threads[0] +
                      launch_[emitters::kThreadIdZ] * (grid.threads[0] * grid.threads[1]);
  return env_.Emit(elemental_->Simplify(linear));
}

Status BodyEmitter::EmitSymbols(const LoopStmt& loop, std::vector<AffineExpr>& symbols,
                                const BodyCallback& body, int64_t bound) {
  const analysis::IndexingMap& map = loop.map;
  if (bound < 0) bound = map.symbol_count();
  if (static_cast<int64_t>(symbols.size()) == bound) return body(symbols);
  const analysis::SymbolVar& symbol = map.symbol(static_cast<int64_t>(symbols.size()));
  Interval range = symbol.range;
  if (range.IsEmpty()) return OkStatus();
  if (symbol.kind == analysis::SymbolKind::kRuntime) {
    // One value read at run time (an in-place dynamic-update-slice start), clamped into
    // its range as HLO specifies.
    TS_ASSIGN_OR_RETURN(ScalarValue offset, elemental_->EmitElement(*symbol.source, {}));
    llvm::Value* clamped =
        ClampIndex(builder_, IndexAsInt64(builder_, offset), range.lower, range.upper);
    symbols.push_back(env_.AddVariable(clamped, range));
    Status status = EmitSymbols(loop, symbols, body, bound);
    symbols.pop_back();
    return status;
  }
  if (range.NumElements() <= kMaxUnrolledSymbolRange) {
    for (int64_t value = range.lower; value <= range.upper; ++value) {
      symbols.push_back(AffineExpr::Constant(value));
      TS_RETURN_IF_ERROR(EmitSymbols(loop, symbols, body, bound));
      symbols.pop_back();
    }
    return OkStatus();
  }
  auto result = EmitCountedLoop(
      builder_, builder_.getInt64(range.lower), builder_.getInt64(range.upper + 1), {},
      [&](llvm::Value* i, std::vector<llvm::Value*>) -> Expected<std::vector<llvm::Value*>> {
        elemental_->PushScope();
        symbols.push_back(env_.AddVariable(i, range));
        Status status = EmitSymbols(loop, symbols, body, bound);
        symbols.pop_back();
        elemental_->PopScope();
        if (!status) return std::unexpected(status.error());
        return std::vector<llvm::Value*>{};
      },
      "symbol");
  if (!result) return std::unexpected(result.error());
  return OkStatus();
}

llvm::Value* BodyEmitter::Holds(const AffineExpr& expr, Interval range) {
  AffineExpr simplified = elemental_->Simplify(expr);
  if (range.Contains(env_.RangeOf(simplified))) return nullptr;
  return InRange(simplified, range);
}

llvm::Value* BodyEmitter::InRange(const AffineExpr& expr, Interval range) {
  llvm::Value* value = env_.Emit(expr);
  return builder_.CreateAnd(builder_.CreateICmpSGE(value, builder_.getInt64(range.lower)),
                            builder_.CreateICmpSLE(value, builder_.getInt64(range.upper)));
}

llvm::Value* BodyEmitter::And(llvm::Value* a, llvm::Value* b) {
  if (a == nullptr) return b;
  return b == nullptr ? a : builder_.CreateAnd(a, b);
}

std::vector<AffineExpr> BodyEmitter::PointIndex(const LoopStmt& loop,
                                                std::span<const AffineExpr> symbols) {
  std::vector<AffineExpr> results;
  for (const AffineExpr& result : loop.map.results()) {
    results.push_back(elemental_->Simplify(result.Substitute(launch_, symbols)));
  }
  return results;
}

std::vector<IndexEnv::Condition> BodyEmitter::DomainConditions(
    const LoopStmt& loop, std::span<const AffineExpr> symbols) {
  // Dims whose range is narrower than the launch (the last, partial block's threads), and
  // the constraints.
  const analysis::IndexingMap& map = loop.map;
  std::vector<IndexEnv::Condition> conditions;
  for (int64_t i = 0; i < map.dim_count(); ++i)
    conditions.emplace_back(launch_[i], map.dim_range(i));
  for (const analysis::Constraint& constraint : map.constraints()) {
    conditions.emplace_back(constraint.expr.Substitute(launch_, symbols), constraint.range);
  }
  return Unproven(conditions);
}

std::vector<IndexEnv::Condition> BodyEmitter::Unproven(
    std::span<const IndexEnv::Condition> conditions) {
  std::vector<IndexEnv::Condition> unproven;
  for (const auto& [expr, range] : conditions) {
    AffineExpr simplified = elemental_->Simplify(expr);
    if (!range.Contains(env_.RangeOf(simplified))) unproven.emplace_back(simplified, range);
  }
  return unproven;
}

llvm::Value* BodyEmitter::AllHold(std::span<const IndexEnv::Condition> conditions) {
  llvm::Value* all = nullptr;
  for (const auto& [expr, range] : conditions) all = And(all, InRange(expr, range));
  return all;
}

Status BodyEmitter::EmitBody(const LoopStmt& loop, std::span<const AffineExpr> symbols,
                             Segment segment) {
  std::vector<AffineExpr> results = PointIndex(loop, symbols);
  std::vector<IndexEnv::Condition> conditions = DomainConditions(loop, symbols);
  auto emit_statements = [&]() -> Status {
    elemental_->PushScope();
    Status status = EmitStatements(loop, results, segment);
    elemental_->PopScope();
    return status;
  };
  if (conditions.empty()) return emit_statements();
  return EmitIf(builder_, AllHold(conditions), emit_statements, env_.HoldShare(conditions));
}

std::vector<AffineExpr> BodyEmitter::Indices(std::span<const AffineExpr> exprs,
                                             std::span<const AffineExpr> index) {
  std::vector<AffineExpr> indices;
  for (const AffineExpr& expr : exprs) indices.push_back(expr.Substitute(index, {}));
  return indices;
}

Expected<ScalarValue> BodyEmitter::Resolve(const Values& values, int64_t id) {
  auto it = values.find(id);
  if (it == values.end()) {
    return MakeError(ErrorCode::kInternal, "use of undefined value %v" + std::to_string(id));
  }
  if (const auto* scalar = std::get_if<ScalarValue>(&it->second)) return *scalar;
  const auto& pending = std::get<PendingLeaf>(it->second);
  for (const auto& [binding, indices] : pending.bindings) {
    TS_ASSIGN_OR_RETURN(ScalarValue bound, Resolve(values, binding->value));
    elemental_->Bind(*binding->instruction, indices, bound, binding->leaf);
  }
  return elemental_->EmitElement(*pending.root, pending.indices, pending.leaf);
}

Status BodyEmitter::Predicated(std::span<const emitters::Predicate> predicates,
                               std::span<const AffineExpr> index,
                               const std::function<Status()>& write) {
  llvm::Value* condition = nullptr;
  for (const emitters::Predicate& predicate : predicates) {
    condition = And(condition, Holds(predicate.expr.Substitute(index, {}), predicate.range));
  }
  auto scoped = [&]() -> Status {
    elemental_->PushScope();
    Status status = write();
    elemental_->PopScope();
    return status;
  };
  if (condition == nullptr) return scoped();
  return EmitIf(builder_, condition, scoped);
}

llvm::Value* BodyEmitter::ScratchSlot(int64_t key, int64_t bits, llvm::Value* thread) {
  llvm::Type* type =
      llvm::ArrayType::get(builder_.getIntNTy(static_cast<unsigned>(bits)),
                           static_cast<uint64_t>(kernel_.launch.threads_per_block()));
  llvm::Value*& array = scratch_[{key, bits}];
  if (array == nullptr) {
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    array = entry.CreateAlloca(type);
  }
  return builder_.CreateInBoundsGEP(type, array, {builder_.getInt64(0), thread});
}

void BodyEmitter::SaveToScratch(int64_t key, ScalarValue value, llvm::Value* thread) {
  int64_t bits = WordBits(value.type);
  builder_.CreateStore(ToStorageBits(builder_, value, bits), ScratchSlot(key, bits, thread));
  scratch_types_[key] = value.type;
}

ScalarValue BodyEmitter::LoadFromScratch(int64_t key, llvm::Value* thread) {
  hlo::PrimitiveType type = scratch_types_.at(key);
  int64_t bits = WordBits(type);
  llvm::Value* slot = ScratchSlot(key, bits, thread);
  return FromStorageBits(builder_, builder_.CreateLoad(builder_.getIntNTy(bits), slot), type);
}

Expected<ScalarValue> BodyEmitter::Shuffle(const emitters::ShuffleStmt& shuffle,
                                           const Values& values) {
  TS_ASSIGN_OR_RETURN(ScalarValue input, Resolve(values, shuffle.value));
  int64_t bits = WordBits(input.type);
  llvm::Value* wide = ToStorageBits(builder_, input, bits);
  llvm::Value* result = llvm::ConstantInt::get(wide->getType(), 0);
  for (int64_t word = 0; word < bits / 32; ++word) {
    llvm::Value* part =
        builder_.CreateTrunc(builder_.CreateLShr(wide, word * 32), builder_.getInt32Ty());
    llvm::Value* moved = abi_.ShuffleXor(builder_, part, shuffle.offset);
    if (moved == nullptr) return MakeError(ErrorCode::kInternal, "the target has no warp shuffle");
    result = builder_.CreateOr(
        result, builder_.CreateShl(builder_.CreateZExt(moved, wide->getType()), word * 32));
  }
  return FromStorageBits(builder_, result, input.type);
}

Expected<std::vector<ScalarValue>> BodyEmitter::PartialReduce(const emitters::ReduceStmt& reduce,
                                                              std::span<const AffineExpr> index) {
  auto source = [&](int64_t i, std::span<const AffineExpr> at) -> Expected<ScalarValue> {
    if (!reduce.from_shared.empty()) return elemental_->Load(shared_[reduce.from_shared[i]], at);
    if (!reduce.from_buffers.empty()) {
      return elemental_->Load(buffers_[reduce.from_buffers[i]], at);
    }
    return elemental_->EmitElement(*reduce.hero->operand(i), at);
  };
  auto inside = [&](std::span<const IndexEnv::Condition> conditions) {
    std::vector<IndexEnv::Condition> unproven = Unproven(conditions);
    return Inside{AllHold(unproven), env_.HoldShare(unproven)};
  };
  return EmitPartialReduce(*elemental_, reduce, index, source, inside, kMaxUnrolledSymbolRange);
}

Expected<std::vector<ScalarValue>> BodyEmitter::Combine(const emitters::CombineStmt& combine,
                                                        const Values& values) {
  std::vector<ScalarValue> lhs;
  std::vector<ScalarValue> rhs;
  for (int64_t id : combine.lhs) {
    TS_ASSIGN_OR_RETURN(ScalarValue value, Resolve(values, id));
    lhs.push_back(value);
  }
  for (int64_t id : combine.rhs) {
    TS_ASSIGN_OR_RETURN(ScalarValue value, Resolve(values, id));
    rhs.push_back(value);
  }
  if (!combine.presence) return ApplyReducer(*elemental_, *combine.hero, lhs, rhs);
  // An empty left side is the init, present: it is folded in exactly once.
  if (lhs.empty()) {
    TS_ASSIGN_OR_RETURN(lhs, InitValues(*elemental_, *combine.hero, true, true));
  }
  return CombinePresent(*elemental_, *combine.hero, lhs, rhs);
}

Status BodyEmitter::EmitScatter(const emitters::ScatterStmt& scatter,
                                std::span<const AffineExpr> index) {
  std::vector<AffineExpr> update_index = Indices(scatter.update_index, index);
  TS_ASSIGN_OR_RETURN(auto target, ScatterTarget(*elemental_, *scatter.hero, update_index));
  const BufferRef& output = buffers_[scatter.buffer];
  return EmitIf(builder_, target.first, [&]() -> Status {
    elemental_->PushScope();
    auto combine = [&]() -> Status {
      TS_ASSIGN_OR_RETURN(ScalarValue update,
                          elemental_->EmitElement(*scatter.hero->operand(2), update_index));
      if (scatter.atomic) {
        return Done(elemental_->AtomicUpdate(
            output, target.second, AtomicBinOp(scatter.op, output.shape->element_type()), update));
      }
      TS_ASSIGN_OR_RETURN(ScalarValue current, elemental_->Load(output, target.second));
      std::vector<ScalarValue> args = {current, update};
      TS_ASSIGN_OR_RETURN(
          std::vector<ScalarValue> combined,
          elemental_->CallScalarComputation(*scatter.hero->called_computation(), args));
      return elemental_->Store(output, target.second, combined[0]);
    };
    Status status = combine();
    elemental_->PopScope();
    return status;
  });
}

Status BodyEmitter::EmitStatements(const LoopStmt& loop, std::span<const AffineExpr> index,
                                   Segment segment) {
  Values values;
  llvm::Value* thread = segment.host_segments ? LinearThreadId() : nullptr;
  for (size_t position = 0; position < segment.end; ++position) {
    const BodyStmt& stmt = loop.body[position];
    bool replay = position < segment.begin;
    if (const auto* call = std::get_if<emitters::CallStmt>(&stmt)) {
      PendingLeaf pending{nullptr, -1, Indices(call->indices, index), {}};
      for (const emitters::ValueBinding& binding : call->bindings) {
        pending.bindings.emplace_back(&binding, Indices(binding.indices, index));
      }
      int64_t id = call->first_value;
      for (const auto& [root, leaf] : kernel_.functions[call->function].Leaves()) {
        pending.root = root;
        pending.leaf = leaf;
        values[id++] = pending;
      }
    } else if (const auto* load = std::get_if<emitters::SharedLoadStmt>(&stmt)) {
      if (replay) {
        values[load->value] = LoadFromScratch(load->value, thread);
        continue;
      }
      TS_ASSIGN_OR_RETURN(ScalarValue value,
                          elemental_->Load(shared_[load->alloc], Indices(load->indices, index)));
      values[load->value] = value;
      if (segment.host_segments) SaveToScratch(load->value, value, thread);
    } else if (const auto* shuffle = std::get_if<emitters::ShuffleStmt>(&stmt)) {
      if (replay) {
        values[shuffle->result] = LoadFromScratch(shuffle->result, thread);
      } else if (segment.host_segments) {
        // The partner lane's input, saved at the end of the previous segment.
        llvm::Value* partner = builder_.CreateXor(thread, builder_.getInt64(shuffle->offset));
        ScalarValue moved = LoadFromScratch(ShuffleInputKey(shuffle->result), partner);
        values[shuffle->result] = moved;
        SaveToScratch(shuffle->result, moved, thread);
      } else {
        TS_ASSIGN_OR_RETURN(values[shuffle->result], Shuffle(*shuffle, values));
      }
    } else if (std::holds_alternative<emitters::ReduceStmt>(stmt) ||
               std::holds_alternative<emitters::CombineStmt>(stmt)) {
      const auto* reduce = std::get_if<emitters::ReduceStmt>(&stmt);
      const auto* combine = std::get_if<emitters::CombineStmt>(&stmt);
      int64_t first = reduce ? reduce->first_value : combine->first_value;
      size_t count = reduce ? (static_cast<size_t>(reduce->hero->operand_count() / 2) +
                               (reduce->presence ? 1 : 0)) *
                                  static_cast<size_t>(reduce->lanes)
                            : combine->rhs.size();
      if (replay) {
        for (size_t i = 0; i < count; ++i) {
          int64_t id = first + static_cast<int64_t>(i);
          values[id] = LoadFromScratch(id, thread);
        }
        continue;
      }
      Expected<std::vector<ScalarValue>> results =
          reduce ? PartialReduce(*reduce, index) : Combine(*combine, values);
      if (!results) return std::unexpected(results.error());
      for (size_t i = 0; i < results->size(); ++i) {
        int64_t id = first + static_cast<int64_t>(i);
        values[id] = (*results)[i];
        if (segment.host_segments) SaveToScratch(id, (*results)[i], thread);
      }
    } else if (replay) {
      continue;  // writes happened in their own segment
    } else if (const auto* store = std::get_if<emitters::StoreStmt>(&stmt)) {
      TS_RETURN_IF_ERROR(Predicated(store->predicates, index, [&]() -> Status {
        TS_ASSIGN_OR_RETURN(ScalarValue value, Resolve(values, store->value));
        return elemental_->Store(buffers_[store->buffer], Indices(store->indices, index), value);
      }));
    } else if (const auto* store = std::get_if<emitters::SharedStoreStmt>(&stmt);
               store != nullptr && shared_writes_ != nullptr) {
      TS_ASSIGN_OR_RETURN(ScalarValue value, Resolve(values, store->value));
      shared_writes_->push_back({store->alloc, Indices(store->indices, index), value});
    } else if (const auto* store = std::get_if<emitters::SharedStoreStmt>(&stmt)) {
      TS_RETURN_IF_ERROR(Predicated(store->predicates, index, [&]() -> Status {
        TS_ASSIGN_OR_RETURN(ScalarValue value, Resolve(values, store->value));
        return elemental_->Store(shared_[store->alloc], Indices(store->indices, index), value);
      }));
    } else if (const auto* scatter = std::get_if<emitters::ScatterStmt>(&stmt)) {
      TS_RETURN_IF_ERROR(EmitScatter(*scatter, index));
    } else if (const auto* atomic = std::get_if<emitters::AtomicStmt>(&stmt)) {
      TS_RETURN_IF_ERROR(Predicated(atomic->predicates, index, [&]() -> Status {
        TS_ASSIGN_OR_RETURN(ScalarValue value, Resolve(values, atomic->value));
        const BufferRef& buffer = buffers_[atomic->buffer];
        return Done(elemental_->AtomicUpdate(buffer, Indices(atomic->indices, index),
                                             AtomicBinOp(atomic->op, buffer.shape->element_type()),
                                             value));
      }));
    }
  }
  // The host's segment ends at a shuffle: its input goes where the partner lanes read it.
  if (segment.host_segments && segment.end < loop.body.size()) {
    const auto& shuffle = std::get<emitters::ShuffleStmt>(loop.body[segment.end]);
    TS_ASSIGN_OR_RETURN(ScalarValue input, Resolve(values, shuffle.value));
    SaveToScratch(ShuffleInputKey(shuffle.result), input, thread);
  }
  return OkStatus();
}

}  // namespace tilesmith::codegen
