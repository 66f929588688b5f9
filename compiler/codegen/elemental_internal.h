// Pieces of the elemental emitter shared between its files. Private to compiler/codegen.
#pragma once

#include "compiler/codegen/elemental.h"

namespace tilesmith::codegen {

/// The element of a `constant` at `index` (scalars fold to LLVM constants; arrays are
/// module globals in their compute representation).
Expected<ScalarValue> EmitConstantElement(ElementalEmitter& emitter,
                                          const hlo::HloInstruction& constant,
                                          std::span<const analysis::AffineExpr> index);

/// The element of an `iota` at `index`.
Expected<ScalarValue> EmitIotaElement(ElementalEmitter& emitter, const hlo::HloInstruction& iota,
                                      std::span<const analysis::AffineExpr> index);

/// Ops that move indices or reduce: broadcast, transpose, reshape, bitcast, slice,
/// dynamic-slice, dynamic-update-slice, pad, concatenate, reverse, reduce, reduce-window,
/// dot, gather, scatter, map.
Expected<ScalarValue> EmitStructuralElement(ElementalEmitter& emitter,
                                            const hlo::HloInstruction& instruction,
                                            std::span<const analysis::AffineExpr> index,
                                            int64_t tuple_index);

/// `value` (float) rounded to the narrow float `type`, as a float: the rounding after
/// every narrow-float op.
llvm::Value* RoundToNarrowFloat(llvm::IRBuilderBase& builder, llvm::Value* value,
                                hlo::PrimitiveType type);

/// The bits of a narrow float value that is exactly representable in `type` (i8 or i16),
/// and back.
llvm::Value* EncodeNarrowFloatBits(llvm::IRBuilderBase& builder, llvm::Value* value,
                                   hlo::PrimitiveType type);
llvm::Value* DecodeNarrowFloatBits(llvm::IRBuilderBase& builder, llvm::Value* bits,
                                   hlo::PrimitiveType type);

/// The compute value of a stored scalar literal element.
llvm::Constant* ConstantScalar(llvm::LLVMContext& context, const hlo::Literal& literal,
                               int64_t i);

/// `value` converted to `to` with hlo::Evaluate's convert semantics (float -> int saturates,
/// NaN -> 0; narrow floats round to nearest even).
Expected<ScalarValue> EmitConvert(ElementalEmitter& emitter, ScalarValue value,
                                  hlo::PrimitiveType to);

/// A typed scalar constant: `value` converted to the compute representation of `type`.
ScalarValue ConstantOfType(llvm::IRBuilderBase& builder, hlo::PrimitiveType type, double value);

}  // namespace tilesmith::codegen
