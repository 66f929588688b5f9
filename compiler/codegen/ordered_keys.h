// Float max and min reductions folded over ordered integer keys. A float's bits, with the
// magnitude bits flipped when its sign is set, order as signed integers exactly as the
// floats do, -0 below +0; NaN is mapped to the key that wins (the largest for max, the
// smallest for min). So max(a, b) = Decode(smax(Key(a), Key(b))) bit for bit, NaN
// propagating and +0 above -0 as the evaluator has it, and the accumulator's chain is one
// integer max per element. Decoding the winning NaN key gives a NaN (its payload is not
// kept: NaN payloads are never compared).
#pragma once

#include <optional>

#include "compiler/codegen/elemental.h"
#include "compiler/hlo/hlo_instruction.h"

namespace tilesmith::codegen {

/// How a reduce's reducer folds as ordered keys.
struct OrderedKeys {
  bool is_max = true;
  hlo::PrimitiveType float_type = hlo::PrimitiveType::kF32;
  hlo::PrimitiveType key_type = hlo::PrimitiveType::kS32;
};

/// The keys of `reduce` (a reduce or reduce-window of one f32 or f64 input) when its
/// reducer is exactly maximum or minimum of its two parameters; none otherwise.
std::optional<OrderedKeys> OrderedKeysOf(const hlo::HloInstruction& reduce);

/// A float as its key, and a key back as the float.
ScalarValue EncodeKey(llvm::IRBuilderBase& b, const OrderedKeys& keys, const ScalarValue& value);
ScalarValue DecodeKey(llvm::IRBuilderBase& b, const OrderedKeys& keys, const ScalarValue& key);
/// The reducer over keys: their signed max (or min).
ScalarValue CombineKeys(llvm::IRBuilderBase& b, const OrderedKeys& keys, const ScalarValue& lhs,
                        const ScalarValue& rhs);

}  // namespace tilesmith::codegen
