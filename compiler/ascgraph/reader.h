// Reading AscGraph requests: an `AscGraphDef` in protobuf text format (`*.ascgraph.txt`),
// binary (`*.pb`) or proto3 JSON (`*.ascgraph.json`), optionally wrapped in a JSON request
// with size bindings and the Ascend platform:
//
//   {"graph": <AscGraphDef as JSON, or its text format as a string>,
//    "sizes": {"s0": 2048, "s1": 64},
//    "platform": {"name": "910b1", "vector_cores": 48, "ub_bytes": 196352}}
//
// Reading checks the encoding and converts to the model of graph.h; validate.h checks
// what the graph means.
#pragma once

#include <string>
#include <string_view>

#include "compiler/ascgraph/graph.h"
#include "support/status.h"

namespace tilesmith::ascgraph {

/// How the bytes of a request are encoded.
enum class RequestFormat {
  kAuto,    ///< from the file name, else from the contents
  kText,    ///< protobuf text format of AscGraphDef
  kBinary,  ///< protobuf binary AscGraphDef
  kJson,    ///< proto3 JSON: a bare AscGraphDef or a request object
};

struct ReadOptions {
  RequestFormat format = RequestFormat::kAuto;
  /// Bindings that override (or add to) the request's own `sizes`, e.g. from `--sizes`.
  SizeBindings sizes = {};
  /// Fields the schema does not know are skipped with a warning (newer graph engines add
  /// fields); false makes them errors.
  bool allow_unknown_fields = true;
};

/// True for the file names tilesmith reads as AscGraph requests: `*.ascgraph.txt`,
/// `*.ascgraph.json`, `*.pb`.
bool IsAscGraphPath(std::string_view path);

/// Reads the request in the file at `path`. Errors start with the path; text-format errors
/// name `path:line:col` as protobuf reports them.
Expected<Request> ReadRequestFile(const std::string& path, const ReadOptions& options = {});

/// Reads a request from `bytes`; `file_name` labels errors and picks the format for kAuto.
Expected<Request> ReadRequest(std::string_view bytes, std::string_view file_name,
                              const ReadOptions& options = {});

/// Parses `s0=2048,s1=64` (the `--sizes` syntax).
Expected<SizeBindings> ParseSizeBindings(std::string_view text);

}  // namespace tilesmith::ascgraph
