// Kernel IR statements -> LLVM IR for one kernel body (internal to compiler/codegen):
// kernel_codegen.cc drives it per phase and target, kernel_body.cc emits the statements.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <variant>
#include <vector>

#include "compiler/codegen/elemental_internal.h"
#include "compiler/codegen/kernel_codegen.h"

namespace tilesmith::codegen {

// Emits a kernel's phases. On a GPU one instance emits everything for the current thread;
// on the host one instance serves the whole function and each thread loop sets new ids.
class BodyEmitter {
  using AffineExpr = analysis::AffineExpr;
  using Interval = analysis::Interval;
  using KernelIR = emitters::KernelIR;
  using LoopStmt = emitters::LoopStmt;

 public:
  BodyEmitter(const KernelIR& kernel, llvm::IRBuilder<>& builder, KernelAbi& abi,
              llvm::Function* function);

  /// Registers the six launch ids (values and ranges); the host calls it once per thread loop.
  void SetLaunchIds(const std::array<llvm::Value*, emitters::kLaunchDims>& ids);

  void PushScope() { elemental_->PushScope(); }
  void PopScope() { elemental_->PopScope(); }

  Status EmitPhase(const emitters::Phase& phase);

  Status EmitLoop(const LoopStmt& loop);

  /// The host's form of EmitLoop. Where the loop asks for a register transpose and its body
  /// allows one, each square of points is loaded as vectors along one symbol, transposed
  /// with shuffles and stored as vectors along the other (kernel_body_transpose.cc): LLVM's
  /// vectorisers would leave it element by element.
  Status EmitHostLoop(const LoopStmt& loop);

  /// The host's form of a loop with warp shuffles: for every point of the symbols, one loop
  /// over the block's threads per segment (the statements between shuffles). A shuffle's
  /// input goes to a per-thread scratch array at the end of one segment and is read from the
  /// partner lane's slot at the start of the next; values that live across segments are kept
  /// in per-thread scratch arrays too.
  Status EmitLoopInSegments(
      const LoopStmt& loop,
      const std::function<Status(const std::function<Status()>&)>& for_each_thread);

  /// Counts this block in at its arrival counter. Returns an i1, true in every thread of the
  /// block that arrived last. On a GPU every thread of the block must run it; on the host,
  /// where one worker runs the whole block, it needs only the block ids set.
  Expected<llvm::Value*> Arrive(const emitters::Arrival& arrival);

  // The thread's linear id within its block (the lane is its low 5 bits).
  llvm::Value* LinearThreadId();

 private:
  // Statements [begin, end) of a loop body; on the host's segmented loops the statements
  // before `begin` are replayed only to re-establish the values they defined.
  struct Segment {
    size_t begin;
    size_t end;
    bool host_segments;
  };

  // A call's leaf, emitted when a statement needs it: the leaves of a tuple-shaped root (a
  // call returning arrays of other shapes) need not be valid at the index of the loop that
  // stores one of them.
  struct PendingLeaf {
    const hlo::HloInstruction* root;
    int64_t leaf;
    std::vector<AffineExpr> indices;
    std::vector<std::pair<const emitters::ValueBinding*, std::vector<AffineExpr>>> bindings;
  };
  using Value = std::variant<PendingLeaf, ScalarValue>;
  using Values = std::unordered_map<int64_t, Value>;

  using BodyCallback = std::function<Status(std::span<const AffineExpr>)>;

  // Binds the loop map's symbols one by one (unrolled or as counted loops), then calls
  // `body` for that point of the domain.
  // `bound` stops after the first that many symbols (-1: all).
  Status EmitSymbols(const LoopStmt& loop, std::vector<AffineExpr>& symbols,
                     const BodyCallback& body, int64_t bound = -1);

  // The side of the squares a loop's register transpose moves, or 0 where its body does not
  // allow one (kernel_body_transpose.cc).
  int64_t RegisterTransposeSide(const LoopStmt& loop) const;

  // One square of a register-transposed loop, the other symbols bound to `outer`: vectors
  // where every point of the square is in the domain and the shared stores land in
  // adjacent elements, else point by point.
  Status EmitTransposedSquare(const LoopStmt& loop, std::span<const AffineExpr> outer,
                              int64_t side);

  // A shared store EmitStatements handed over instead of storing (see shared_writes_).
  struct SharedWrite {
    int64_t alloc;
    std::vector<AffineExpr> indices;
    ScalarValue value;
  };

  // Stores one statement's writes of a square (`at(a, b)`): a vector per row along `b` after
  // a shuffle transpose where they are adjacent there, else element by element.
  Status StoreSquare(int64_t side, const std::function<const SharedWrite&(int64_t, int64_t)>& at);

  // `expr in range` as an i1, or null when the ranges prove it.
  llvm::Value* Holds(const AffineExpr& expr, Interval range);
  // `expr in range` as an i1, `expr` simplified already.
  llvm::Value* InRange(const AffineExpr& expr, Interval range);

  llvm::Value* And(llvm::Value* a, llvm::Value* b);

  // The loop's results at a point of its symbols (the index its statements see).
  std::vector<AffineExpr> PointIndex(const LoopStmt& loop, std::span<const AffineExpr> symbols);

  // The conditions of the loop's domain at a point of its symbols that the variables'
  // ranges do not already prove: the point is in the domain where they all hold.
  std::vector<IndexEnv::Condition> DomainConditions(const LoopStmt& loop,
                                                    std::span<const AffineExpr> symbols);
  // Those of `conditions` (simplified) that the variables' ranges do not prove.
  std::vector<IndexEnv::Condition> Unproven(std::span<const IndexEnv::Condition> conditions);
  // An i1: every one of Unproven's conditions holds (null when there is none).
  llvm::Value* AllHold(std::span<const IndexEnv::Condition> conditions);

  Status EmitBody(const LoopStmt& loop, std::span<const AffineExpr> symbols, Segment segment);

  std::vector<AffineExpr> Indices(std::span<const AffineExpr> exprs,
                                  std::span<const AffineExpr> index);

  Expected<ScalarValue> Resolve(const Values& values, int64_t id);

  // Runs `write` where every predicate holds; the values it needs are computed inside, so a
  // partial tile never reads out of bounds.
  Status Predicated(std::span<const emitters::Predicate> predicates,
                    std::span<const AffineExpr> index, const std::function<Status()>& write);

  // A per-thread array of i<bits> slots in the function's entry block, one per key and width
  // (value ids of different loops may repeat with other types).
  llvm::Value* ScratchSlot(int64_t key, int64_t bits, llvm::Value* thread);

  void SaveToScratch(int64_t key, ScalarValue value, llvm::Value* thread);

  ScalarValue LoadFromScratch(int64_t key, llvm::Value* thread);

  // Keys of scratch arrays: a value's own id, or a shuffle's input (kept apart by sign).
  static int64_t ShuffleInputKey(int64_t result) { return -1 - result; }

  Expected<ScalarValue> Shuffle(const emitters::ShuffleStmt& shuffle, const Values& values);

  // A thread's partial reduction, its elements read from the hero's operands, shared
  // partials or a scratch buffer's partials.
  Expected<std::vector<ScalarValue>> PartialReduce(const emitters::ReduceStmt& reduce,
                                                   std::span<const AffineExpr> index);

  Expected<std::vector<ScalarValue>> Combine(const emitters::CombineStmt& combine,
                                             const Values& values);

  // One update element combined into the output where its window fits.
  Status EmitScatter(const emitters::ScatterStmt& scatter, std::span<const AffineExpr> index);

  Status EmitStatements(const LoopStmt& loop, std::span<const AffineExpr> index, Segment segment);

  const KernelIR& kernel_;
  llvm::IRBuilder<>& builder_;
  KernelAbi& abi_;
  llvm::Function* function_;
  IndexEnv env_;
  std::vector<BufferRef> buffers_;
  std::vector<hlo::Shape> shared_shapes_;
  std::vector<BufferRef> shared_;
  std::unique_ptr<ElementalEmitter> elemental_;
  // While set, EmitStatements appends its shared stores here instead of emitting them.
  std::vector<SharedWrite>* shared_writes_ = nullptr;
  std::vector<AffineExpr> launch_ = std::vector<AffineExpr>(emitters::kLaunchDims);
  std::map<std::pair<int64_t, int64_t>, llvm::Value*> scratch_;
  std::unordered_map<int64_t, hlo::PrimitiveType> scratch_types_;
};

}  // namespace tilesmith::codegen
