// Kernel IR: what every emitter produces and every code generator consumes. A kernel is
// its buffers, its launch grid, shared-memory allocations, the partitioned subgraph
// functions of the fusion, and phases of per-thread code separated by barriers. Indexing
// is data (analysis::IndexingMap), in the spirit of XLA's xla_gpu dialect.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/analysis/indexing_map.h"
#include "compiler/hlo/hlo_module.h"

namespace tilesmith::emitters {

/// Blocks and threads per block, in x, y, z.
struct LaunchGrid {
  std::array<int64_t, 3> blocks = {1, 1, 1};
  std::array<int64_t, 3> threads = {1, 1, 1};
  int64_t block_count() const { return blocks[0] * blocks[1] * blocks[2]; }
  int64_t threads_per_block() const { return threads[0] * threads[1] * threads[2]; }
};

/// A kernel argument: a fusion parameter (read) or a fusion output (written). A
/// tuple-shaped parameter gets one buffer per array leaf.
struct KernelBuffer {
  std::string name;  // "p0", "out0"
  hlo::Shape shape;  // array shape with its layout: how the bytes are laid out
  bool is_output = false;
  int64_t index = 0;  // the parameter number, or the output's position
  int64_t leaf = -1;  // the array leaf of a tuple-shaped parameter (ArrayLeaves order)
  /// For an output updated in place (dynamic-update-slice): the input buffer it aliases.
  /// The kernel writes only part of it, so callers must give it that input's bytes as its
  /// initial contents (or pass the input's memory itself). -1: a plain output.
  int64_t aliases = -1;
  /// For an output that blocks accumulate into with atomics (a split reduction): every
  /// element must hold this value (the reducer's identity) before the kernel runs. For
  /// scratch: its contents when the first launch starts (else any).
  std::optional<double> fill = std::nullopt;
  /// Scratch memory blocks share within a launch (a split reduction's partial results and
  /// arrival counters): neither a parameter nor an output. Callers allocate it once, starting
  /// at `fill` where set, pass it to every launch, and never read it back; the kernel leaves
  /// it as the next launch needs it.
  bool is_scratch = false;

  bool is_parameter() const { return !is_output && !is_scratch; }
};

/// The array leaves of `shape` in depth-first order (an array is its own only leaf). A
/// tuple-shaped value's leaves are numbered in this order: that flat number is the
/// "tuple index" kernels and elemental code use, so nested tuples need no paths.
std::vector<const hlo::Shape*> ArrayLeaves(const hlo::Shape& shape);

/// The flat number of the first leaf of tuple element `element` of tuple `shape`.
int64_t LeafOffset(const hlo::Shape& shape, int64_t element);

/// A piece of the fused computation emitted as one function: computes `roots` at one
/// index (the roots share a shape). Reads parameters directly and calls other functions
/// for operands outside it.
struct KernelFunction {
  std::string name;
  std::vector<const hlo::HloInstruction*> roots;
  std::vector<const hlo::HloInstruction*> instructions;  // post-order, roots included

  /// One value per array a call returns: (root, leaf), the leaf -1 for an array root and
  /// each array leaf's flat number for a tuple-shaped root (a variadic reduce, a call).
  std::vector<std::pair<const hlo::HloInstruction*, int64_t>> Leaves() const;
};

/// Dims of every loop map: the thread and block ids, in this order.
inline constexpr int64_t kThreadIdX = 0;
inline constexpr int64_t kThreadIdY = 1;
inline constexpr int64_t kThreadIdZ = 2;
inline constexpr int64_t kBlockIdX = 3;
inline constexpr int64_t kBlockIdY = 4;
inline constexpr int64_t kBlockIdZ = 5;
inline constexpr int64_t kLaunchDims = 6;

/// Inside a call, `instruction` at `indices` is the already computed value `%v<value>` (a
/// transpose hero read back from shared memory) instead of being computed from its operands.
/// The binding applies where the function asks for exactly that element.
struct ValueBinding {
  const hlo::HloInstruction* instruction = nullptr;
  std::vector<analysis::AffineExpr> indices;  // affine in the enclosing loop's results
  int64_t value = 0;
  int64_t leaf = -1;  // the array leaf of a tuple-shaped instruction (a variadic reduce)
};

/// `%v<first>.. = call @function(indices…) [with …]`: the values of the function's leaves at
/// an index. Indices are affine in the enclosing loop's results (`d<i>` = result i).
struct CallStmt {
  int64_t function = 0;
  std::vector<analysis::AffineExpr> indices;
  int64_t first_value = 0;  // the leaves' values get consecutive ids from here
  std::vector<ValueBinding> bindings = {};
};

/// A statement that writes runs only where each predicate holds: `expr` (affine in the
/// enclosing loop's results) lies in `range` — an in-bounds test for a partial tile.
using Predicate = analysis::Constraint;

/// `store %buffer[indices…] = %v<value> [if …]`.
struct StoreStmt {
  int64_t buffer = 0;
  std::vector<analysis::AffineExpr> indices;  // affine in the enclosing loop's results
  int64_t value = 0;
  std::vector<Predicate> predicates = {};
};

/// A block's shared-memory array (`shared %tile0: f32[32,33]`), row-major, one element per
/// at least one byte (packed types get a byte each, so threads never share a byte).
struct SharedAlloc {
  std::string name;
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
  std::vector<int64_t> dims;

  /// The row-major array shape the allocation is addressed through.
  hlo::Shape shape() const;
  int64_t bytes() const;
};

/// `%v<value> = load_shared %alloc[indices…]`.
struct SharedLoadStmt {
  int64_t alloc = 0;  // index into KernelIR::shared
  std::vector<analysis::AffineExpr> indices;
  int64_t value = 0;
};

/// `store_shared %alloc[indices…] = %v<value> [if …]`.
struct SharedStoreStmt {
  int64_t alloc = 0;
  std::vector<analysis::AffineExpr> indices;
  int64_t value = 0;
  std::vector<Predicate> predicates = {};
};

/// `%v<result> = shfl.bfly %v<value>, <offset>`: the value of the lane whose lane id is this
/// lane's xor `offset` (`shfl.sync.bfly`, full warp). Every lane of the warp must execute it:
/// emitters put it only in loops whose domain covers whole warps.
struct ShuffleStmt {
  int64_t value = 0;
  int64_t offset = 1;  // 1, 2, 4, 8 or 16
  int64_t result = 0;
};

/// The read-modify-write of an atomic.
enum class AtomicOp { kAdd, kMax, kMin };

/// `atomic_add %buffer[indices…] = %v<value> [if …]`: buffer[i] = op(buffer[i], value),
/// atomically (blocks and threads may target the same element).
struct AtomicStmt {
  AtomicOp op = AtomicOp::kAdd;
  int64_t buffer = 0;
  std::vector<analysis::AffineExpr> indices;
  int64_t value = 0;
  std::vector<Predicate> predicates = {};
};

/// `%v<first>.. = reduce @hero over map [from shared …]`: this thread's partial result of a
/// reduce hero, one value per reducer output. The accumulators start at the hero's init
/// values; every point of `elements`' symbols whose constraints hold folds in the element at
/// `elements`' results: the hero's operands there, or, when `from_shared` names one shared
/// allocation per reducer output, the partials stored there by an earlier phase.
///
/// With `presence`, the init values are not folded in (a reduce whose init is not a known
/// identity of its reducer must see it exactly once): the statement yields one more value,
/// a pred saying whether any element was folded, and the accumulators start at the first
/// element. `from_shared` then names one more allocation, of the partials' presence.
///
/// With `from_buffers` (one scratch buffer per reducer output) the elements are partials
/// other blocks stored in global memory, read at `elements`' results.
///
/// With `lanes` > 1 the last symbol (its range `lanes`) picks one of that many independent
/// accumulator sets, lane-major from `first_value`: chains a vector unit can run side by
/// side (a row's vector lanes, combined afterwards) or separate results (a column tile's
/// vector of columns).
struct ReduceStmt {
  const hlo::HloInstruction* hero = nullptr;  // a kReduce
  analysis::IndexingMap elements;             // (enclosing loop's results)[symbols] -> index
  std::vector<int64_t> from_shared = {};
  int64_t first_value = 0;
  bool presence = false;
  int64_t lanes = 1;
  std::vector<int64_t> from_buffers = {};
};

/// `%v<first>.. = combine @hero (%lhs…), (%rhs…)`: the hero's reducer applied to two partial
/// results (after a shuffle brought the partner lane's). With `presence`, each side and the
/// result end with their presence pred: a side without elements is skipped, and an empty
/// `lhs` stands for the hero's init values (present), which folds the init in once.
struct CombineStmt {
  const hlo::HloInstruction* hero = nullptr;
  std::vector<int64_t> lhs;
  std::vector<int64_t> rhs;
  int64_t first_value = 0;
  bool presence = false;
};

/// `scatter @hero %buffer at update[indices…] [atomic_add]`: the update element at `indices`
/// (affine in the loop's results) combined into the element of `buffer` (the scatter's
/// output, which starts as its operand) that its window puts it at, read from the
/// scatter's indices at run time; skipped when the window does not fit, as XLA does. With
/// `atomic`, the combine is one atomic read-modify-write (non-unique indices).
struct ScatterStmt {
  const hlo::HloInstruction* hero = nullptr;  // a kScatter with one operand and one update
  int64_t buffer = 0;
  std::vector<analysis::AffineExpr> update_index;
  bool atomic = false;
  AtomicOp op = AtomicOp::kAdd;
};

using BodyStmt = std::variant<CallStmt, StoreStmt, SharedLoadStmt, SharedStoreStmt, ShuffleStmt,
                              AtomicStmt, ReduceStmt, CombineStmt, ScatterStmt>;

/// Per-thread loop: for this thread's launch ids, every symbol assignment in the map's
/// domain that satisfies its constraints runs the body once, with the map's results as the
/// current index. The symbols are the elements a thread handles (unroll, vector lanes).
struct LoopStmt {
  analysis::IndexingMap map;  // (thread ids, block ids)[symbols] -> (index…)
  std::vector<BodyStmt> body;
  /// A hint for a loop that stores what it loads transposed (a packed transpose's first
  /// phase): its last two symbols, of equal range, run along the loads' minor dim
  /// (`along_load`) and along the shared stores' (`along_store`). A code generator may move
  /// each square of such points through registers (vector loads, a shuffle transpose, vector
  /// stores) instead of element by element; the loop means the same either way.
  struct RegisterTranspose {
    int64_t along_load = 0;
    int64_t along_store = 0;
  };
  std::optional<RegisterTranspose> register_transpose = std::nullopt;
};

/// `arrive %counter[index] of <arrivals>`: before its phase, each block counts itself in at
/// an element of a scratch s32 counter (`index` affine in the launch ids, the same for every
/// thread of a block). Only the block that arrives last of the `arrivals` blocks sharing the
/// element runs the phase and every later one: it sees every write the others made before
/// they arrived, and puts the counter back to 0 for the next launch. `flag` is an s32[1]
/// shared allocation that carries the answer to the block's threads on a GPU.
struct Arrival {
  int64_t counter = 0;  // a scratch buffer
  analysis::AffineExpr index;
  int64_t arrivals = 1;
  int64_t flag = 0;
};

/// Loops that run together; a barrier separates consecutive phases.
struct Phase {
  std::vector<LoopStmt> loops;
  std::optional<Arrival> arrival = std::nullopt;
};

/// One kernel: the output of an emitter for a (fusion, config, target).
struct KernelIR {
  std::string name;
  const hlo::HloComputation* fusion = nullptr;
  std::vector<KernelBuffer> buffers;
  LaunchGrid launch;
  std::vector<SharedAlloc> shared;  // per block; live across phases
  std::vector<KernelFunction> functions;
  std::vector<Phase> phases;
  /// The emitter and its config, for printing and keys (`loop`, `{"threads": 128, …}`).
  std::string emitter;
  std::string config_json;

  /// Readable text (what `tilesmith compile --emit kernel-ir` prints).
  std::string ToString() const;
  /// The buffer index of fusion output `output`.
  int64_t OutputBuffer(int64_t output) const;
  /// Bytes of shared memory a block uses.
  int64_t SharedBytes() const;
};

}  // namespace tilesmith::emitters
