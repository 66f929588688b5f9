// Shape, layout and literal readers shared by the HLO parsers. Private to compiler/hlo.
#pragma once

#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"
#include "compiler/hlo/text_cursor.h"

namespace tilesmith::hlo {

/// True if the text at the cursor starts a shape (`f32[`, `token[`, or `(`).
bool NextIsShape(TextCursor& cursor);

/// Reads a shape with optional layout; arrays without a layout get the default one.
Expected<Shape> ReadShape(TextCursor& cursor, int depth = 0);

/// Reads the literal text of a `constant` of `shape` (scalar, nested braces, `{...}`,
/// tuple of literals).
Expected<Literal> ReadLiteral(TextCursor& cursor, const Shape& shape);

}  // namespace tilesmith::hlo
