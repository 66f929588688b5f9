// Private to compiler/ascgraph: what real AscGraphDef files write that the schema alone
// does not read. Each fix is small and targeted so that everything else still goes
// through protobuf's own parsers.
//
// - `AxisDef.align` is a string in the current schema, but real text files write a bare
//   integer (`align: 1`) and older binaries a varint. Changing the field to an integer
//   would break files written with the current schema (binary wire types differ), so the
//   field stays a string and integers are turned into strings before protobuf sees them.
// - `dtype` is GE's number; requests may also name it (`dtype: FLOAT16`, `"dtype":
//   "FLOAT16"`), which protobuf cannot map to an int64 field.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ascgraph/ascgraph.pb.h"
#include "support/status.h"

namespace tilesmith::ascgraph::internal {

/// Where a text fix moved the columns of a line, to report protobuf's positions in the
/// text the user wrote.
struct ColumnShift {
  int line = 0;    // 0-based, as protobuf reports
  int column = 0;  // 0-based column in the fixed text where the shift starts
  int delta = 0;   // characters added there
};

/// Rewrites bare integers after `align:` as strings and dtype names after `dtype:` as
/// GE numbers, outside strings and comments. Errors (an unknown dtype name) read
/// `line:col: error: …` (1-based).
Expected<std::string> FixTextFormat(std::string_view text, std::vector<ColumnShift>& shifts);

/// Maps a 0-based (line, column) in the fixed text back to the text before the fix.
int OriginalColumn(const std::vector<ColumnShift>& shifts, int line, int column);

/// The same fixes on an AscGraphDef in proto3 JSON (both field spellings). `where` names
/// the JSON value in errors.
Status FixJson(nlohmann::json& graph, std::string_view where);

/// Moves a varint `align` (kept by the binary parser as an unknown field) into the field.
void FixBinary(proto::AscGraphDef& graph);

}  // namespace tilesmith::ascgraph::internal
