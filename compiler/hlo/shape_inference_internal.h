// Helpers shared by the shape inference files. Private to compiler/hlo.
#pragma once

#include <span>
#include <string>

#include "compiler/hlo/hlo_instruction.h"
#include "support/status.h"

namespace tilesmith::hlo::shape_check {

inline std::unexpected<Error> Fail(std::string message) {
  return InvalidArgument(std::move(message));
}

std::string TypeName(PrimitiveType type);
std::string DimsText(std::span<const int64_t> dims);
Status ExpectOperandCount(const HloInstruction& instruction, int64_t count);
/// Fails unless `shape` is an array; `what` names it ("operand 0").
Status ExpectArray(const Shape& shape, std::string_view what);
/// Every entry in [0, rank) and no repeats; `what` names the attribute.
Status ExpectUniqueDims(std::span<const int64_t> dims, int64_t rank, std::string_view what);

std::vector<int64_t> DimsOf(const Shape& shape);
/// Fails unless `shape` is an integer scalar (start index `i`).
Status ExpectScalarIndex(const Shape& shape, int64_t i);
/// Checks the reducer of reduce / reduce-window / scatter: 2N scalar parameters (N
/// accumulators, N values), returning the accumulator types (a tuple when N > 1).
Status CheckReducer(const HloInstruction& instruction, std::span<const PrimitiveType> accumulators,
                    std::span<const PrimitiveType> values);
/// The single shape, or a tuple of several.
Shape MaybeTuple(std::vector<Shape> shapes);

Expected<Shape> InferGather(const HloInstruction& instruction);
Expected<Shape> InferScatter(const HloInstruction& instruction);

/// Ops whose shape only the declaration gives.
Expected<Shape> InferOpaque(const Shape* declared);
/// convert and bitcast-convert: dims from the operand, type from the declaration.
Expected<Shape> InferConvert(const HloInstruction& instruction, const Shape* declared);
/// Data-movement and reduction ops: iota, broadcast, reshape, bitcast, transpose, slice,
/// dynamic-slice, dynamic-update-slice, pad, concatenate, reverse, reduce, reduce-window,
/// map, sort, dot, gather, scatter.
Expected<Shape> InferStructural(const HloInstruction& instruction, const Shape* declared);

}  // namespace tilesmith::hlo::shape_check
