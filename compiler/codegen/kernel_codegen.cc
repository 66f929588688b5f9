#include "compiler/codegen/kernel_codegen.h"

#include "compiler/codegen/loop_builder.h"

namespace tilesmith::codegen {
namespace {

using analysis::AffineExpr;
using analysis::Interval;
using emitters::KernelIR;
using emitters::LoopStmt;

// Symbols with at most this many values are unrolled at compile time: vector lanes, so
// that their addresses are constant offsets the vectorisers can combine.
constexpr int64_t kMaxUnrolledSymbolRange = 8;

class BodyEmitter {
 public:
  BodyEmitter(const KernelIR& kernel, llvm::IRBuilder<>& builder, KernelAbi& abi,
              llvm::Function* function)
      : kernel_(kernel), builder_(builder), abi_(abi), env_(builder) {
    std::vector<std::vector<BufferRef>> parameters(kernel.fusion->parameter_count());
    for (size_t i = 0; i < kernel.buffers.size(); ++i) {
      const emitters::KernelBuffer& buffer = kernel.buffers[i];
      buffers_.push_back(
          {abi.BufferPointer(builder, function, static_cast<int64_t>(i)), &buffer.shape});
      if (buffer.is_output) continue;
      std::vector<BufferRef>& leaves = parameters[buffer.index];
      size_t leaf = static_cast<size_t>(std::max<int64_t>(buffer.leaf, 0));
      if (leaves.size() <= leaf) leaves.resize(leaf + 1);
      leaves[leaf] = buffers_.back();
    }
    elemental_ = std::make_unique<ElementalEmitter>(builder, abi.hooks(), env_, parameters);
  }

  /// Registers the six launch ids (values and ranges) before any loop is emitted.
  void SetLaunchIds(const std::array<llvm::Value*, emitters::kLaunchDims>& ids) {
    const emitters::LaunchGrid& grid = kernel_.launch;
    const std::array<int64_t, emitters::kLaunchDims> sizes = {grid.threads[0], grid.threads[1],
                                                              grid.threads[2], grid.blocks[0],
                                                              grid.blocks[1],  grid.blocks[2]};
    for (int64_t i = 0; i < emitters::kLaunchDims; ++i) {
      launch_[i] = env_.AddVariable(ids[i], Interval::ForSize(sizes[i]));
    }
  }

  Status EmitPhase(const emitters::Phase& phase) {
    for (const LoopStmt& loop : phase.loops) TS_RETURN_IF_ERROR(EmitLoop(loop));
    return OkStatus();
  }

 private:
  Status EmitLoop(const LoopStmt& loop) {
    std::vector<AffineExpr> symbols;
    return EmitSymbols(loop, symbols);
  }

  // Binds the loop map's symbols one by one (unrolled or as counted loops), then emits the
  // body for that point of the domain.
  Status EmitSymbols(const LoopStmt& loop, std::vector<AffineExpr>& symbols) {
    const analysis::IndexingMap& map = loop.map;
    if (static_cast<int64_t>(symbols.size()) == map.symbol_count()) return EmitBody(loop, symbols);
    const analysis::SymbolVar& symbol = map.symbol(static_cast<int64_t>(symbols.size()));
    Interval range = symbol.range;
    if (range.IsEmpty()) return OkStatus();
    if (range.NumElements() <= kMaxUnrolledSymbolRange) {
      for (int64_t value = range.lower; value <= range.upper; ++value) {
        symbols.push_back(AffineExpr::Constant(value));
        TS_RETURN_IF_ERROR(EmitSymbols(loop, symbols));
        symbols.pop_back();
      }
      return OkStatus();
    }
    llvm::Value* begin = builder_.getInt64(range.lower);
    llvm::Value* end = builder_.getInt64(range.upper + 1);
    auto result = EmitCountedLoop(
        builder_, begin, end, {},
        [&](llvm::Value* i, std::vector<llvm::Value*>) -> Expected<std::vector<llvm::Value*>> {
          elemental_->PushScope();
          symbols.push_back(env_.AddVariable(i, range));
          Status status = EmitSymbols(loop, symbols);
          symbols.pop_back();
          elemental_->PopScope();
          if (!status) return std::unexpected(status.error());
          return std::vector<llvm::Value*>{};
        },
        "symbol");
    if (!result) return std::unexpected(result.error());
    return OkStatus();
  }

  Status EmitBody(const LoopStmt& loop, std::span<const AffineExpr> symbols) {
    const analysis::IndexingMap& map = loop.map;
    std::vector<AffineExpr> results;
    for (const AffineExpr& result : map.results()) {
      results.push_back(elemental_->Simplify(result.Substitute(launch_, symbols)));
    }
    // The domain guards the body (the last, partial block's threads): dims whose range is
    // narrower than the launch, and the constraints.
    llvm::Value* condition = nullptr;
    for (int64_t i = 0; i < map.dim_count(); ++i) {
      Interval range = map.dim_range(i);
      if (range.Contains(env_.RangeOf(launch_[i]))) continue;
      llvm::Value* value = env_.Emit(launch_[i]);
      llvm::Value* inside =
          builder_.CreateAnd(builder_.CreateICmpSGE(value, builder_.getInt64(range.lower)),
                             builder_.CreateICmpSLE(value, builder_.getInt64(range.upper)));
      condition = condition == nullptr ? inside : builder_.CreateAnd(condition, inside);
    }
    for (const analysis::Constraint& constraint : map.constraints()) {
      AffineExpr expr = elemental_->Simplify(constraint.expr.Substitute(launch_, symbols));
      if (constraint.range.Contains(env_.RangeOf(expr))) continue;
      llvm::Value* value = env_.Emit(expr);
      llvm::Value* holds = builder_.CreateAnd(
          builder_.CreateICmpSGE(value, builder_.getInt64(constraint.range.lower)),
          builder_.CreateICmpSLE(value, builder_.getInt64(constraint.range.upper)));
      condition = condition == nullptr ? holds : builder_.CreateAnd(condition, holds);
    }
    auto emit_statements = [&]() -> Status {
      elemental_->PushScope();
      Status status = EmitStatements(loop, results);
      elemental_->PopScope();
      return status;
    };
    if (condition == nullptr) return emit_statements();
    return EmitIf(builder_, condition, emit_statements);
  }

  // A call's leaves are emitted when a store needs them, not all at the call: the leaves
  // of a tuple-shaped root (a call returning arrays of other shapes) need not be valid at
  // the index of the loop that stores one of them.
  Status EmitStatements(const LoopStmt& loop, std::span<const AffineExpr> index) {
    struct PendingLeaf {
      const hlo::HloInstruction* root;
      int64_t leaf;
      std::vector<AffineExpr> indices;
    };
    std::unordered_map<int64_t, PendingLeaf> values;
    for (const emitters::BodyStmt& stmt : loop.body) {
      if (const auto* call = std::get_if<emitters::CallStmt>(&stmt)) {
        std::vector<AffineExpr> indices;
        for (const AffineExpr& expr : call->indices) indices.push_back(expr.Substitute(index, {}));
        const emitters::KernelFunction& function = kernel_.functions[call->function];
        int64_t position = call->first_value;
        for (const auto& [root, leaf] : function.Leaves()) {
          values[position++] = {root, leaf, indices};
        }
      } else if (const auto* store = std::get_if<emitters::StoreStmt>(&stmt)) {
        std::vector<AffineExpr> indices;
        for (const AffineExpr& expr : store->indices) indices.push_back(expr.Substitute(index, {}));
        auto it = values.find(store->value);
        if (it == values.end()) {
          return MakeError(ErrorCode::kInternal,
                           "store of undefined value %v" + std::to_string(store->value));
        }
        const PendingLeaf& pending = it->second;
        TS_ASSIGN_OR_RETURN(ScalarValue value,
                            elemental_->EmitElement(*pending.root, pending.indices, pending.leaf));
        TS_RETURN_IF_ERROR(elemental_->Store(buffers_[store->buffer], indices, value));
      }
    }
    return OkStatus();
  }

  const KernelIR& kernel_;
  llvm::IRBuilder<>& builder_;
  KernelAbi& abi_;
  IndexEnv env_;
  std::vector<BufferRef> buffers_;
  std::unique_ptr<ElementalEmitter> elemental_;
  std::vector<AffineExpr> launch_ = std::vector<AffineExpr>(emitters::kLaunchDims);
};

}  // namespace

Expected<llvm::Function*> EmitKernelFunction(const KernelIR& kernel, llvm::Module& module,
                                             KernelAbi& abi) {
  llvm::Function* function = abi.CreateFunction(module, kernel);
  llvm::IRBuilder<> builder(&function->getEntryBlock());
  BodyEmitter body(kernel, builder, abi, function);
  const emitters::LaunchGrid& grid = kernel.launch;

  if (!abi.LoopsOverLaunch()) {
    std::array<llvm::Value*, emitters::kLaunchDims> ids;
    for (int64_t i = 0; i < emitters::kLaunchDims; ++i) ids[i] = abi.LaunchId(builder, i, grid);
    body.SetLaunchIds(ids);
    for (const emitters::Phase& phase : kernel.phases) TS_RETURN_IF_ERROR(body.EmitPhase(phase));
    builder.CreateRetVoid();
    abi.Finish(module, function, kernel);
    return function;
  }

  // Host: the function's last two arguments are the block range it runs.
  llvm::Value* first_block = function->getArg(function->arg_size() - 2);
  llvm::Value* end_block = function->getArg(function->arg_size() - 1);
  auto blocks = EmitCountedLoop(
      builder, first_block, end_block, {},
      [&](llvm::Value* block, std::vector<llvm::Value*>) -> Expected<std::vector<llvm::Value*>> {
        llvm::Value* blocks_x = builder.getInt64(grid.blocks[0]);
        llvm::Value* blocks_y = builder.getInt64(grid.blocks[1]);
        llvm::Value* block_x = builder.CreateURem(block, blocks_x);
        llvm::Value* rest = builder.CreateUDiv(block, blocks_x);
        llvm::Value* block_y = builder.CreateURem(rest, blocks_y);
        llvm::Value* block_z = builder.CreateUDiv(rest, blocks_y);
        for (const emitters::Phase& phase : kernel.phases) {
          // Every thread of the block finishes a phase before any starts the next: the
          // barrier between phases.
          auto threads = EmitCountedLoop(
              builder, builder.getInt64(0), builder.getInt64(grid.threads_per_block()), {},
              [&](llvm::Value* thread,
                  std::vector<llvm::Value*>) -> Expected<std::vector<llvm::Value*>> {
                llvm::Value* threads_x = builder.getInt64(grid.threads[0]);
                llvm::Value* threads_y = builder.getInt64(grid.threads[1]);
                llvm::Value* thread_x = builder.CreateURem(thread, threads_x);
                llvm::Value* thread_rest = builder.CreateUDiv(thread, threads_x);
                llvm::Value* thread_y = builder.CreateURem(thread_rest, threads_y);
                llvm::Value* thread_z = builder.CreateUDiv(thread_rest, threads_y);
                BodyEmitter scoped(kernel, builder, abi, function);
                scoped.SetLaunchIds({thread_x, thread_y, thread_z, block_x, block_y, block_z});
                TS_RETURN_IF_ERROR(scoped.EmitPhase(phase));
                return std::vector<llvm::Value*>{};
              },
              "thread");
          if (!threads) return std::unexpected(threads.error());
        }
        return std::vector<llvm::Value*>{};
      },
      "block");
  if (!blocks) return std::unexpected(blocks.error());
  builder.CreateRetVoid();
  abi.Finish(module, function, kernel);
  return function;
}

}  // namespace tilesmith::codegen
