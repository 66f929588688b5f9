// Elemental emission: the LLVM IR computing one element of an HLO instruction at a
// (symbolic) index. Index-only ops move the index through their indexing maps; the rest
// compute from their operands' elements. Semantics match hlo::Evaluate: narrow floats are
// computed in f32 and rounded after every op, integers wrap, XLA's division/shift rules.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/codegen/index_emitter.h"
#include "compiler/hlo/hlo_module.h"
#include "support/status.h"

namespace tilesmith::codegen {

/// A scalar of an HLO element type, in its compute representation: pred -> i1; sN and uN ->
/// iN; f32 -> float; f64 -> double; bf16, f16 and the f8/f4 types -> float holding a value
/// of the type; c64 -> {float, float}; c128 -> {double, double}.
struct ScalarValue {
  llvm::Value* value = nullptr;
  hlo::PrimitiveType type = hlo::PrimitiveType::kInvalid;
};

/// What differs between targets in elemental code.
class TargetHooks {
 public:
  virtual ~TargetHooks() = default;
  /// The callee computing math function `name` ("exp", "tanh", "log1p", "atan2", "pow",
  /// "erf", …) on `type` (float or double): libm on the host, libdevice on NVPTX.
  virtual llvm::FunctionCallee MathFunction(llvm::Module& module, std::string_view name,
                                            llvm::Type* type) = 0;

  /// Inline code for math function `name` on `x` (and `y` for two-argument functions such
  /// as atan2 and pow; null otherwise) that the optimiser can vectorise, or null to call
  /// `MathFunction` instead.
  virtual llvm::Value* EmitMathInline(llvm::IRBuilderBase& /*builder*/, std::string_view /*name*/,
                                      llvm::Value* /*x*/, llvm::Value* /*y*/) {
    return nullptr;
  }

  /// Independent accumulators an elemental reduce of `type` keeps along its innermost
  /// reduced dim (consecutive elements to each in turn, combined pairwise at the end): one
  /// accumulator is a chain of the reducer's latency per element, several are independent
  /// chains that a CPU overlaps and its vectoriser turns into one SIMD operation. 1 keeps
  /// one chain (a GPU thread has its warp for that).
  virtual int ReductionAccumulators(hlo::PrimitiveType /*type*/) { return 1; }

  /// Whether a float max or min reduction folds its elements as ordered integer keys
  /// (ordered_keys.h): one integer max per element on the accumulator's chain instead of
  /// the NaN- and signed-zero-aware compare-and-select, which a CPU pays as a long
  /// dependency chain (a host row max ran 5-7x a row sum on the same config). A GPU has
  /// NaN-propagating max instructions.
  virtual bool FoldMinMaxAsOrderedKeys() { return false; }

  /// Calls the C library's complex function `name` on `arguments` of complex `type` (c64
  /// or c128, each an {re, im} struct) and returns its {re, im} result. Names are C99's
  /// without the `c` prefix and type suffix ("exp", "log", "pow", "asinh", …), plus "mul"
  /// and "div", the runtime's Annex G multiply and divide (`__mulsc3`, `__divdc3`). Returns
  /// null where the target has no such library; elemental code then uses its own formulas.
  /// The host calls the same functions as the evaluator (through std::complex), so its
  /// results are the evaluator's bit for bit.
  virtual llvm::Value* CallComplexFunction(llvm::IRBuilderBase& builder, std::string_view name,
                                           hlo::PrimitiveType type,
                                           std::span<llvm::Value* const> arguments);
};

/// A buffer the kernel reads or writes: its base pointer and its shape (with layout).
struct BufferRef {
  llvm::Value* base = nullptr;
  const hlo::Shape* shape = nullptr;
};

/// The LLVM type of `type`'s compute representation.
llvm::Type* ComputeType(llvm::LLVMContext& context, hlo::PrimitiveType type);

/// Emits element computations into the builder's current insertion point.
class ElementalEmitter {
 public:
  /// `parameters[i][leaf]` is the buffer of fusion parameter i: one for an array, one per
  /// array leaf (emitters::ArrayLeaves) for a tuple.
  ElementalEmitter(llvm::IRBuilder<>& builder, TargetHooks& hooks, IndexEnv& env,
                   std::vector<std::vector<BufferRef>> parameters);

  /// The element of `instruction` at `index` (affine in the environment's variables). For a
  /// tuple-shaped instruction (variadic reduce, call, nested tuples), `tuple_index` is the
  /// flat number of the array leaf (emitters::ArrayLeaves order).
  Expected<ScalarValue> EmitElement(const hlo::HloInstruction& instruction,
                                    std::span<const analysis::AffineExpr> index,
                                    int64_t tuple_index = -1);

  /// Reads / writes the element at `index` of a buffer, through its layout.
  Expected<ScalarValue> Load(const BufferRef& buffer, std::span<const analysis::AffineExpr> index);
  Status Store(const BufferRef& buffer, std::span<const analysis::AffineExpr> index,
               ScalarValue value);
  /// Writes `slots`, a vector of storage words (ToStorageBits), to the element at `index`
  /// and the ones after it in memory, in one store. The caller knows that the elements it
  /// means are adjacent there. Elements narrower than a byte are refused.
  Status StoreSlots(const BufferRef& buffer, std::span<const analysis::AffineExpr> index,
                    llvm::Value* slots);

  /// buffer[index] = op(buffer[index], value) as one atomic read-modify-write (integers of
  /// 8 bits and more, f32 and f64; `op` an llvm::AtomicRMWInst::BinOp); returns the value the
  /// element held before. Monotonic unless `ordering` (an llvm::AtomicOrdering) says more.
  Expected<llvm::Value*> AtomicUpdate(const BufferRef& buffer,
                                      std::span<const analysis::AffineExpr> index, int op,
                                      ScalarValue value, int ordering = -1);

  /// In the current scope, `instruction` at `index` is `value`: later EmitElement calls for
  /// exactly that element return it instead of computing it (a value read back from shared
  /// memory).
  void Bind(const hlo::HloInstruction& instruction, std::span<const analysis::AffineExpr> index,
            ScalarValue value, int64_t tuple_index = -1);

  /// Applies a computation with scalar parameters (a reducer) to scalar arguments.
  Expected<std::vector<ScalarValue>> CallScalarComputation(const hlo::HloComputation& computation,
                                                           std::span<const ScalarValue> args);

  /// Elementwise op `instruction` applied to scalar operands (the operands' element types
  /// are those of the instruction's operands).
  Expected<ScalarValue> EmitElementwise(const hlo::HloInstruction& instruction,
                                        std::span<const ScalarValue> operands);

  /// Opens / closes a region whose values may not be reused after it (a branch, a loop).
  void PushScope();
  void PopScope();

  llvm::IRBuilder<>& builder() { return builder_; }
  TargetHooks& hooks() { return hooks_; }
  IndexEnv& env() { return env_; }
  llvm::Module& module();

  /// Simplifies `expr` over the environment's variable ranges.
  analysis::AffineExpr Simplify(const analysis::AffineExpr& expr) const;

 private:
  struct Key {
    const hlo::HloInstruction* instruction;
    int64_t tuple_index;
    std::vector<analysis::AffineExpr> index;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };

  Expected<ScalarValue> EmitUncached(const hlo::HloInstruction& instruction,
                                     std::span<const analysis::AffineExpr> index,
                                     int64_t tuple_index);

  // What the parameters of a computation being called elementally stand for: scalars (a
  // reducer's arguments) or the caller's operands, read at the same index (call, fusion).
  struct Binding {
    std::unordered_map<const hlo::HloInstruction*, ScalarValue> scalars;
    std::unordered_map<const hlo::HloInstruction*, const hlo::HloInstruction*> arrays;
  };

  Expected<ScalarValue> EmitParameter(const hlo::HloInstruction& parameter,
                                      std::span<const analysis::AffineExpr> index,
                                      int64_t tuple_index);
  Expected<ScalarValue> EmitTupleElement(const hlo::HloInstruction& instruction,
                                         std::span<const analysis::AffineExpr> index,
                                         int64_t tuple_index);
  Expected<ScalarValue> EmitCall(const hlo::HloInstruction& call,
                                 std::span<const analysis::AffineExpr> index, int64_t tuple_index);

  llvm::IRBuilder<>& builder_;
  TargetHooks& hooks_;
  IndexEnv& env_;
  std::vector<std::vector<BufferRef>> parameters_;
  std::vector<std::unordered_map<Key, ScalarValue, KeyHash>> memo_{1};
  std::vector<Binding> bindings_;
};

}  // namespace tilesmith::codegen
