// Readers for the structured attribute values of HLO text (slices, padding, windows).
#include "compiler/hlo/parse_internal.h"

namespace tilesmith::hlo {

// `[0:10:2]` one dimension of a slice.
Expected<SliceDim> ReadSliceDim(TextCursor& cursor) {
  TS_RETURN_IF_ERROR(cursor.Expect('[', "'[' to start a slice dimension"));
  SliceDim dim;
  TS_ASSIGN_OR_RETURN(dim.start, cursor.ParseInt("the slice start"));
  TS_RETURN_IF_ERROR(cursor.Expect(':', "':' in the slice"));
  TS_ASSIGN_OR_RETURN(dim.limit, cursor.ParseInt("the slice limit"));
  if (cursor.Consume(':')) {
    TS_ASSIGN_OR_RETURN(dim.stride, cursor.ParseInt("the slice stride"));
  }
  TS_RETURN_IF_ERROR(cursor.Expect(']', "']' to end a slice dimension"));
  return dim;
}

// `lo_hi` or `lo_hi_interior` per dimension, separated by 'x'.
Expected<std::vector<PadDim>> ReadPadding(TextCursor& cursor) {
  std::vector<PadDim> dims;
  cursor.SkipSpace();
  do {
    PadDim dim;
    TS_ASSIGN_OR_RETURN(dim.low, cursor.ParseInt("the low padding"));
    if (cursor.PeekRaw() != '_') return cursor.FailHere("expected '_' in the padding");
    cursor.set_position(cursor.position() + 1);
    TS_ASSIGN_OR_RETURN(dim.high, cursor.ParseInt("the high padding"));
    if (cursor.PeekRaw() == '_') {
      cursor.set_position(cursor.position() + 1);
      TS_ASSIGN_OR_RETURN(dim.interior, cursor.ParseInt("the interior padding"));
    }
    dims.push_back(dim);
    if (cursor.PeekRaw() != 'x') break;
    cursor.set_position(cursor.position() + 1);
  } while (true);
  return dims;
}

// `{size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}`.
Expected<std::vector<WindowDim>> ReadWindow(TextCursor& cursor) {
  TS_RETURN_IF_ERROR(cursor.Expect('{', "'{' to start the window"));
  std::vector<WindowDim> dims;
  auto resize = [&](size_t rank) -> Status {
    if (dims.empty()) dims.resize(rank);
    if (dims.size() != rank) return cursor.FailHere("window fields disagree on the rank");
    return OkStatus();
  };
  while (!cursor.Consume('}')) {
    size_t at = cursor.position();
    TS_ASSIGN_OR_RETURN(std::string_view field, cursor.ParseName("a window field"));
    TS_RETURN_IF_ERROR(cursor.Expect('=', "'=' in the window"));
    if (field == "pad") {
      TS_ASSIGN_OR_RETURN(std::vector<PadDim> pads, ReadPadding(cursor));
      TS_RETURN_IF_ERROR(resize(pads.size()));
      for (size_t i = 0; i < pads.size(); ++i) {
        dims[i].padding_low = pads[i].low;
        dims[i].padding_high = pads[i].high;
      }
      continue;
    }
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> values, cursor.ParseIntsSeparatedByX(field));
    TS_RETURN_IF_ERROR(resize(values.size()));
    for (size_t i = 0; i < values.size(); ++i) {
      if (field == "size")
        dims[i].size = values[i];
      else if (field == "stride")
        dims[i].stride = values[i];
      else if (field == "lhs_dilate")
        dims[i].base_dilation = values[i];
      else if (field == "rhs_dilate")
        dims[i].window_dilation = values[i];
      else if (field == "rhs_reversal")
        dims[i].reversal = values[i] != 0;
      else
        return cursor.Fail(at, "unknown window field '" + std::string(field) + "'");
    }
  }
  return dims;
}

}  // namespace tilesmith::hlo
