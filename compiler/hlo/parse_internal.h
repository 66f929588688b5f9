// Shape, layout and literal readers shared by the HLO parsers. Private to compiler/hlo.
#pragma once

#include <memory>
#include <string_view>
#include <unordered_map>

#include "compiler/hlo/hlo_instruction.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"
#include "compiler/hlo/text_cursor.h"

namespace tilesmith::hlo {

/// True if the text at the cursor starts a shape (`f32[`, `token[`, or `(`).
bool NextIsShape(TextCursor& cursor);

/// Layouts already read, by their text (`{1,0:T(8,128)}`), so that the shapes of a module
/// that write the same layout share one. Must not outlive the text.
struct LayoutCache {
  static constexpr size_t kMaxEntries = 4096;
  std::unordered_map<std::string_view, std::shared_ptr<const Layout>> layouts;
};

/// Reads a shape with optional layout; arrays without a layout get the default one. With
/// `layouts`, a layout seen before is shared instead of read again.
Expected<Shape> ReadShape(TextCursor& cursor, int depth = 0, LayoutCache* layouts = nullptr);

/// Reads the literal text of a `constant` of `shape` (scalar, nested braces, `{...}`,
/// tuple of literals).
Expected<Literal> ReadLiteral(TextCursor& cursor, const Shape& shape);

/// `[start:limit]` or `[start:limit:stride]`: one dimension of `slice={…}`.
Expected<SliceDim> ReadSliceDim(TextCursor& cursor);

/// `lo_hi` or `lo_hi_interior` per dimension, separated by 'x' (`padding=0_0x1_1_2`).
Expected<std::vector<PadDim>> ReadPadding(TextCursor& cursor);

/// `{size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}`.
Expected<std::vector<WindowDim>> ReadWindow(TextCursor& cursor);

}  // namespace tilesmith::hlo
