// Pieces of the elemental emitter shared between its files. Private to compiler/codegen.
//
// Files by family: elemental.cc (driver, tuples, calls), elemental_memory.cc (loads,
// stores, constants, iota, narrow-float codecs), elemental_math.cc (real and integer
// arithmetic, the elementwise dispatcher), elemental_complex.cc, elemental_compare.cc,
// elemental_convert.cc, elemental_bitcast.cc (bitcast and bitcast-convert),
// elemental_structural.cc and elemental_gather_scatter.cc (index-moving and reducing ops).
#pragma once

#include <functional>

#include "compiler/analysis/indexing_map.h"
#include "compiler/codegen/elemental.h"

namespace tilesmith::codegen {

// ---------------------------------------------------------------------------------------
// Memory and constants (elemental_memory.cc).

/// The element of a `constant` at `index` (scalars fold to LLVM constants; arrays are
/// module globals in their compute representation).
Expected<ScalarValue> EmitConstantElement(ElementalEmitter& emitter,
                                          const hlo::HloInstruction& constant,
                                          std::span<const analysis::AffineExpr> index);

/// The element of an `iota` at `index`.
Expected<ScalarValue> EmitIotaElement(ElementalEmitter& emitter, const hlo::HloInstruction& iota,
                                      std::span<const analysis::AffineExpr> index);

/// The module flag that names the NVPTX architecture a module is emitted for (e.g. 90);
/// absent for the host. Elemental code reads it to use instructions newer GPUs have.
inline constexpr const char* kNvptxSmModuleFlag = "tilesmith.nvptx_sm";
/// That flag's value, or 0.
int NvptxSmOf(const llvm::Module& module);

/// `value` (float) rounded to the narrow float `type`, as a float: the rounding after
/// every narrow-float op.
llvm::Value* RoundToNarrowFloat(llvm::IRBuilderBase& builder, llvm::Value* value,
                                hlo::PrimitiveType type);

/// The bits of a narrow float value that is exactly representable in `type` (i8 or i16),
/// and back (`bits` may be the type's own width or wider; its low bits are read).
llvm::Value* EncodeNarrowFloatBits(llvm::IRBuilderBase& builder, llvm::Value* value,
                                   hlo::PrimitiveType type);
llvm::Value* DecodeNarrowFloatBits(llvm::IRBuilderBase& builder, llvm::Value* bits,
                                   hlo::PrimitiveType type);

/// The bits a value occupies in a memory slot of `slot_bits` (at least its type's width):
/// its type's bits, little-endian for complex (real part low), zeros above; as i<slot_bits>.
llvm::Value* ToStorageBits(llvm::IRBuilderBase& builder, ScalarValue value, int64_t slot_bits);

/// The value of `type` a slot holds, from the slot's bits (an integer at least as wide as
/// the type; only its low bits are read, except that any set bit makes a pred true).
ScalarValue FromStorageBits(llvm::IRBuilderBase& builder, llvm::Value* bits,
                            hlo::PrimitiveType type);

/// The linear slot map of `shape`'s layout (analysis::LogicalToLinearIndexing), cached.
const analysis::IndexingMap& SlotMap(const hlo::Shape& shape);

/// The compute value of a stored scalar literal element.
llvm::Constant* ConstantScalar(llvm::LLVMContext& context, const hlo::Literal& literal, int64_t i);

/// A typed scalar constant: `value` converted to the compute representation of `type`.
ScalarValue ConstantOfType(llvm::IRBuilderBase& builder, hlo::PrimitiveType type, double value);

/// The {re, im} struct of a complex value from its parts.
llvm::Value* MakeComplex(llvm::IRBuilderBase& builder, llvm::Value* re, llvm::Value* im);

// ---------------------------------------------------------------------------------------
// Elementwise families, all with hlo::Evaluate's semantics.

/// The error for an op the elemental emitter has no code for on `type`.
std::unexpected<Error> UnsupportedOp(hlo::HloOpcode opcode, hlo::PrimitiveType type);

/// The C math library's name of a unary elementwise op that is one function call there
/// ("exp" for exponential, "log1p", "asinh", …), or null.
const char* MathFunctionName(hlo::HloOpcode opcode);

/// Libm's (or libdevice's) `name` on `x` (and `y` for binary functions), in x's type.
llvm::Value* CallMath(ElementalEmitter& emitter, std::string_view name, llvm::Value* x,
                      llvm::Value* y = nullptr);

/// Ops on c64/c128 operands, including abs/real/imag (real results), and `complex`.
/// (elemental_complex.cc)
Expected<ScalarValue> EmitComplexElementwise(ElementalEmitter& emitter,
                                             const hlo::HloInstruction& instruction,
                                             std::span<const ScalarValue> operands);

/// Complex multiply with C's Annex G rules (the runtime's `__mulsc3` when both parts of
/// the plain product are NaN), as std::complex multiplies. (elemental_complex.cc)
llvm::Value* EmitComplexMultiply(ElementalEmitter& emitter, hlo::PrimitiveType type, llvm::Value* x,
                                 llvm::Value* y);

/// compare, every direction and comparison type. (elemental_compare.cc)
Expected<ScalarValue> EmitCompare(ElementalEmitter& emitter, const hlo::HloInstruction& compare,
                                  ScalarValue lhs, ScalarValue rhs);

/// `value` converted to `to` with hlo::Evaluate's convert semantics: float -> int
/// saturates (NaN -> 0); every conversion to a float type rounds once, to nearest even.
/// (elemental_convert.cc)
Expected<ScalarValue> EmitConvert(ElementalEmitter& emitter, ScalarValue value,
                                  hlo::PrimitiveType to);

/// The element of a bitcast-convert at `index`: the operand's bits re-read as the result
/// type, a minor dim splitting or joining elements of other widths. (elemental_bitcast.cc)
Expected<ScalarValue> EmitBitcastConvertElement(ElementalEmitter& emitter,
                                                const hlo::HloInstruction& instruction,
                                                std::span<const analysis::AffineExpr> index);

/// The element of a bitcast at `index`: through its indexing map where the element types
/// have equal storage, else through memory (output slot -> bits -> operand slots).
/// (elemental_bitcast.cc)
Expected<ScalarValue> EmitBitcastElement(ElementalEmitter& emitter,
                                         const hlo::HloInstruction& bitcast,
                                         std::span<const analysis::AffineExpr> index);

// ---------------------------------------------------------------------------------------
// Index-moving and reducing ops (elemental_structural.cc, elemental_gather_scatter.cc).

/// Ops that move indices or reduce: broadcast, transpose, reshape, slice, dynamic-slice,
/// dynamic-update-slice, pad, concatenate, reverse, reduce, reduce-window, dot, gather,
/// scatter, map.
Expected<ScalarValue> EmitStructuralElement(ElementalEmitter& emitter,
                                            const hlo::HloInstruction& instruction,
                                            std::span<const analysis::AffineExpr> index,
                                            int64_t tuple_index);

/// Gather and scatter elements, whose reads depend on index data.
/// (elemental_gather_scatter.cc)
Expected<ScalarValue> EmitGatherElement(ElementalEmitter& emitter,
                                        const hlo::HloInstruction& gather,
                                        std::span<const analysis::AffineExpr> index);
Expected<ScalarValue> EmitScatterElement(ElementalEmitter& emitter,
                                         const hlo::HloInstruction& scatter,
                                         std::span<const analysis::AffineExpr> index,
                                         int64_t tuple_index);

/// `map`'s results at `index` with its runtime symbols bound (ranges in `range_values`).
std::vector<analysis::AffineExpr> ApplyMap(ElementalEmitter& emitter,
                                           const analysis::IndexingMap& map,
                                           std::span<const analysis::AffineExpr> index,
                                           std::span<const analysis::AffineExpr> symbols);

/// The conjunction of `map`'s domain and constraints at a point, or null when they hold
/// everywhere the index ranges reach.
llvm::Value* ConstraintsHold(ElementalEmitter& emitter, const analysis::IndexingMap& map,
                             std::span<const analysis::AffineExpr> index,
                             std::span<const analysis::AffineExpr> symbols);

/// Where update element `update_index` of `scatter` (one operand, one update) lands: the
/// operand index, and an i1 that holds when the update's whole window fits the operand.
Expected<std::pair<llvm::Value*, std::vector<analysis::AffineExpr>>> ScatterTarget(
    ElementalEmitter& emitter, const hlo::HloInstruction& scatter,
    std::span<const analysis::AffineExpr> update_index);

/// The input elements of a reduce at its range symbols' values (innermost last).
using ElementsAt = std::function<Expected<std::vector<ScalarValue>>(
    std::span<const analysis::AffineExpr> range_values)>;
/// The reducer applied to an accumulator and elements (or another accumulator).
using Combine = std::function<Expected<std::vector<ScalarValue>>(std::vector<ScalarValue>,
                                                                 std::span<const ScalarValue>)>;

/// True when a reduce's `inputs` operands are small code without loops of their own, so
/// that ReduceInterleaved may copy them once per accumulator.
bool IsSmallElementwiseClosure(const hlo::HloInstruction& reduce, int64_t inputs);

/// Reduces over `map`'s range symbols from `initial` with `accumulators` independent
/// accumulators along the innermost one (elemental_reduce_interleaved.cc).
Expected<std::vector<ScalarValue>> ReduceInterleaved(
    ElementalEmitter& emitter, const analysis::IndexingMap& map, std::vector<ScalarValue> initial,
    int accumulators, const ElementsAt& elements_at, const Combine& combine);

/// Packs values into one struct so a branch or loop can carry them as one; Unpack splits it.
llvm::Value* Pack(llvm::IRBuilderBase& builder, std::span<const ScalarValue> values);
std::vector<ScalarValue> Unpack(llvm::IRBuilderBase& builder, llvm::Value* packed,
                                std::span<const hlo::PrimitiveType> types);

/// An integer index operand as an i64, as the evaluator reads one: sign- or
/// zero-extended, a u64 above INT64_MAX saturating to INT64_MAX.
llvm::Value* IndexAsInt64(llvm::IRBuilderBase& builder, ScalarValue value);

/// `value` (i64) clamped into [lower, upper].
llvm::Value* ClampIndex(llvm::IRBuilderBase& builder, llvm::Value* value, int64_t lower,
                        int64_t upper);

}  // namespace tilesmith::codegen
