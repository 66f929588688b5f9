#include "compiler/codegen/kernel_codegen.h"

#include <llvm/IR/Instructions.h>

#include <map>
#include <unordered_map>

#include "compiler/codegen/kernel_body.h"
#include "compiler/codegen/loop_builder.h"

namespace tilesmith::codegen {
namespace {

using emitters::BodyStmt;
using emitters::KernelIR;
using emitters::LoopStmt;

bool HasShuffle(const LoopStmt& loop) {
  return std::any_of(loop.body.begin(), loop.body.end(), [](const BodyStmt& stmt) {
    return std::holds_alternative<emitters::ShuffleStmt>(stmt);
  });
}

// Host: the block's threads one after another, each with its ids split from the linear one.
Status ForEachThread(llvm::IRBuilder<>& builder, BodyEmitter& body,
                     const emitters::LaunchGrid& grid, llvm::Value* block_x, llvm::Value* block_y,
                     llvm::Value* block_z, const std::function<Status()>& emit) {
  auto threads = EmitCountedLoop(
      builder, builder.getInt64(0), builder.getInt64(grid.threads_per_block()), {},
      [&](llvm::Value* thread, std::vector<llvm::Value*>) -> Expected<std::vector<llvm::Value*>> {
        llvm::Value* threads_x = builder.getInt64(grid.threads[0]);
        llvm::Value* threads_y = builder.getInt64(grid.threads[1]);
        llvm::Value* thread_x = builder.CreateURem(thread, threads_x);
        llvm::Value* thread_rest = builder.CreateUDiv(thread, threads_x);
        llvm::Value* thread_y = builder.CreateURem(thread_rest, threads_y);
        llvm::Value* thread_z = builder.CreateUDiv(thread_rest, threads_y);
        body.PushScope();
        body.SetLaunchIds({thread_x, thread_y, thread_z, block_x, block_y, block_z});
        Status status = emit();
        body.PopScope();
        if (!status) return std::unexpected(status.error());
        return std::vector<llvm::Value*>{};
      },
      "thread");
  if (!threads) return std::unexpected(threads.error());
  return OkStatus();
}

// Emits phases from `first` on through `emit(p, after_arrival)`. A phase with an arrival
// asks `arrive` whether this block arrived last, and nests itself and every later phase in
// that branch (a GPU's barriers stay uniform: the whole block branches together).
Status EmitPhases(llvm::IRBuilder<>& builder, KernelAbi& abi, const KernelIR& kernel, size_t first,
                  bool arrived,
                  const std::function<Expected<llvm::Value*>(const emitters::Arrival&)>& arrive,
                  const std::function<Status(size_t, bool)>& emit) {
  for (size_t p = first; p < kernel.phases.size(); ++p) {
    bool after_arrival = arrived && p == first;
    const std::optional<emitters::Arrival>& arrival = kernel.phases[p].arrival;
    if (arrival && !after_arrival) {
      TS_ASSIGN_OR_RETURN(llvm::Value * last, arrive(*arrival));
      return EmitIf(builder, last, [&] {
        abi.Fence(builder);  // the other blocks' partials are read after their arrivals
        return EmitPhases(builder, abi, kernel, p, true, arrive, emit);
      });
    }
    TS_RETURN_IF_ERROR(emit(p, after_arrival));
  }
  return OkStatus();
}

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
    TS_RETURN_IF_ERROR(EmitPhases(
        builder, abi, kernel, 0, false,
        [&](const emitters::Arrival& arrival) { return body.Arrive(arrival); },
        [&](size_t p, bool after_arrival) -> Status {
          if (p > 0 && !after_arrival) abi.Barrier(builder);  // an arrival has its own
          return body.EmitPhase(kernel.phases[p]);
        }));
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
        auto for_each_thread = [&](const std::function<Status()>& emit) {
          return ForEachThread(builder, body, grid, block_x, block_y, block_z, emit);
        };
        auto arrive = [&](const emitters::Arrival& arrival) {
          llvm::Value* zero = builder.getInt64(0);
          body.PushScope();
          body.SetLaunchIds({zero, zero, zero, block_x, block_y, block_z});
          Expected<llvm::Value*> last = body.Arrive(arrival);
          body.PopScope();
          return last;
        };
        // Every thread of the block finishes a phase before any starts the next: the
        // barrier between phases.
        auto emit_phase = [&](size_t p, bool) -> Status {
          const emitters::Phase& phase = kernel.phases[p];
          if (!std::any_of(phase.loops.begin(), phase.loops.end(), HasShuffle)) {
            return for_each_thread([&] { return body.EmitPhase(phase); });
          }
          for (const LoopStmt& loop : phase.loops) {
            TS_RETURN_IF_ERROR(HasShuffle(loop)
                                   ? body.EmitLoopInSegments(loop, for_each_thread)
                                   : for_each_thread([&] { return body.EmitHostLoop(loop); }));
          }
          return OkStatus();
        };
        Status status = EmitPhases(builder, abi, kernel, 0, false, arrive, emit_phase);
        if (!status) return std::unexpected(status.error());
        return std::vector<llvm::Value*>{};
      },
      "block");
  if (!blocks) return std::unexpected(blocks.error());
  builder.CreateRetVoid();
  abi.Finish(module, function, kernel);
  return function;
}

}  // namespace tilesmith::codegen
