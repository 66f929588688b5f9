// NumPy `.npy` files for array literals, so inputs and reference outputs can move between
// tilesmith and Python (NumPy, JAX) without a custom format.
//
// Element types map to NumPy dtypes as follows (all little-endian, C order on write):
//
//   pred <-> '|b1'       s8 s16 s32 s64 <-> '|i1' '<i2' '<i4' '<i8'
//   f16 f32 f64 <-> '<f2' '<f4' '<f8'   u8 u16 u32 u64 <-> '|u1' '<u2' '<u4' '<u8'
//   c64 c128 <-> '<c8' '<c16'
//
// Types NumPy lacks are written as integers that NumPy can hold, one element per item:
//
//   bf16 -> '<u2' (the 16 bits)          f8* and f4e2m1fn -> '|u1' (the bits, low bits)
//   s4 s2 s1 -> '|i1' (the value)        u4 u2 u1 -> '|u1' (the value)
//
// Such a file does not say which HLO type it holds, so readers pass the expected shape.
// With one, a file may use the type's natural dtype above or the unsigned integer of the
// same width holding the raw bits (e.g. '<u4' for f32, '|u1' for s4 or pred); sub-byte
// values must fit their type. Without one, the dtype's natural type is used (bool, intN,
// uintN, floatN, complexN) with the default layout.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"
#include "support/status.h"

namespace tilesmith::hlo {

/// The dtype string tilesmith writes for `type` ('<f4', '|u1' for f8e4m3fn, ...), or ""
/// for a type with no array representation (token, tuple).
std::string NpyDtypeFor(PrimitiveType type);

/// Decodes an in-memory `.npy` file (format 1.0, 2.0 or 3.0). With `expected`, the dtype
/// must be that type's natural dtype or raw-bits carrier and the dims must match; the
/// literal then gets `expected` (its layout included). Fortran-order data is transposed
/// into logical order. Malformed input gives an error, never a crash.
Expected<Literal> ParseNpy(std::span<const uint8_t> bytes,
                           std::optional<Shape> expected = std::nullopt);

/// Reads the `.npy` file at `path` as `ParseNpy` does; errors start with the path.
Expected<Literal> ReadNpy(const std::string& path, std::optional<Shape> expected = std::nullopt);

/// Encodes an array literal as `.npy` bytes, header identical to `numpy.save`'s (format
/// 1.0, or 2.0 when the header does not fit in 1.0). The layout is not recorded: data
/// is written in C (logical row-major) order. Fails for tuples, tokens, elided values.
Expected<std::vector<uint8_t>> SerializeNpy(const Literal& literal);

/// Writes `SerializeNpy(literal)` to `path` through a temporary file and a rename, so a
/// failed write never leaves a truncated file at `path`.
Status WriteNpy(const std::string& path, const Literal& literal);

}  // namespace tilesmith::hlo
