// Raw device-style buffers of array values: the bytes an array occupies in memory under its
// layout (dimension order, tiles, tail padding, `E(n)` element size, sub-byte packing).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"
#include "support/status.h"

namespace tilesmith::hlo {

/// The bytes of an array literal laid out as its shape's layout says (`PhysicalLayout`):
/// `byte_size()` bytes, padding slots zero. Each element occupies `element_bits()` bits at
/// bit offset slot * bits, counting from the least significant bit of byte 0, so packed
/// sub-byte elements put the first element in the low bits (`s4[4]{0:E(4)}` {1,-2,3,-4}
/// -> 0xE1 0xC3). A slot wider than the type holds the type's bits in its low bits and
/// zeros above (no sign extension). Multi-byte values are little-endian. Fails for
/// tuples, tokens, elided constants, unbounded or sparse shapes.
Expected<std::vector<uint8_t>> ToPhysicalBuffer(const Literal& literal);

/// The bytes of an array of `shape` whose every element is `value` (rounded to the type).
Expected<std::vector<uint8_t>> FilledPhysicalBuffer(const Shape& shape, double value);

/// The inverse of `ToPhysicalBuffer`: reads the array of `shape` from `bytes`, which must
/// be exactly the layout's byte size. Padding is ignored, narrow signed integers are
/// sign-extended into the literal's unpacked storage, and any set bit makes a pred true.
Expected<Literal> FromPhysicalBuffer(const Shape& shape, std::span<const uint8_t> bytes);

}  // namespace tilesmith::hlo
