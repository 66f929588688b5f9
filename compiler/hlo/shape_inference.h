// What shape an instruction must have, given its operands, attributes and callees. The
// parser uses it to reject inconsistent HLO and to fill in shapes the text leaves out; the
// evaluator and emitters rely on every accepted instruction being consistent.
#pragma once

#include "compiler/hlo/hlo_instruction.h"
#include "support/status.h"

namespace tilesmith::hlo {

/// The result shape of `instruction` (layouts left default), checking operand count, operand
/// shapes, attribute ranges and called computations on the way. `declared` is the shape the
/// text gave, or null; ops whose result type or dims come only from the declaration
/// (parameter, constant, convert, reshape, iota, …) need it. Errors say what is wrong
/// without a location; the caller adds it.
Expected<Shape> InferShape(const HloInstruction& instruction, const Shape* declared);

/// True when `InferShape(instruction, &declared)` would succeed with a shape equal to
/// `declared` ignoring layout, for the common elementwise ops, decided without building a
/// shape. False means "not decided here": call InferShape.
bool ElementwiseShapeHolds(const HloInstruction& instruction, const Shape& declared);

/// True for ops whose result shape we do not derive (collectives, custom-call, rng, …):
/// their declared shape is taken as given.
bool IsShapeOpaque(HloOpcode opcode);

}  // namespace tilesmith::hlo
