// The AscGraph model: what an `AscGraphDef` says, read into plain structs, with the size
// variables bound by the request. Built by reader.h, checked by validate.h, lowered to an
// HLO fusion by lower.h and scheduled for Ascend targets by costmodel/ascend.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "compiler/ascgraph/size_expr.h"
#include "compiler/hlo/primitive_type.h"
#include "support/status.h"

namespace tilesmith::ascgraph {

/// Axis kinds of the public format (AxisDef.axis_type).
enum class AxisType {
  kOriginal = 0,
  kBlockOut = 1,
  kBlockIn = 2,
  kTileOut = 3,
  kTileIn = 4,
  kMerged = 5
};

/// A graph-level loop/data dimension, referenced by id from tensors and nodes.
struct Axis {
  int64_t id = 0;
  std::string name;  // "z0"
  AxisType type = AxisType::kOriginal;
  SizeExpr size = SizeExpr::Constant(1);
  int64_t align = 1;
  bool allow_unaligned_tail = false;
};

/// What a node's output (and, on the other end of the edge, its consumer's input) holds:
/// element type and, per axis, its size (repeats) and index stride.
struct TensorAttr {
  hlo::PrimitiveType dtype = hlo::PrimitiveType::kF32;
  std::vector<int64_t> axis_ids;
  std::vector<SizeExpr> repeats;
  std::vector<SizeExpr> strides;
};

/// A tensor's attributes with its sizes evaluated under a request's bindings.
struct ConcreteTensor {
  hlo::PrimitiveType dtype = hlo::PrimitiveType::kF32;
  std::vector<int64_t> axis_ids;
  std::vector<int64_t> repeats;
  std::vector<int64_t> strides;
};

/// `[4, 1, 6]`: sizes, strides or ids as error messages print them.
std::string FormatList(std::span<const int64_t> values);

/// Evaluates `tensor`'s repeats and strides with `sizes`. Errors say which expression
/// failed (`repeats[1] 's1 / 0': division by zero …`); callers add the node.
Expected<ConcreteTensor> EvaluateTensor(const TensorAttr& tensor, const SizeBindings& sizes);

/// An input edge: the producing node and which of its outputs.
struct InputSource {
  std::string node;
  int32_t output_index = 0;
};

/// A value of the IR attribute map (`ir_attr_def`).
using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>>;

/// One node: an instance of an AscIR op ("Data", "Load", "Abs", "Sum", "Output", …).
struct Node {
  std::string name;
  std::string type;  // attr.type, or ir_def.type when that is empty
  std::vector<InputSource> inputs;
  std::vector<TensorAttr> outputs;
  std::vector<int64_t> sched_axis;  // the loop nest, outer to inner
  std::map<std::string, AttrValue> ir_attrs;

  /// An integer IR attribute (`index`), or nullopt when absent or not an integer.
  std::optional<int64_t> IntAttr(std::string_view key) const;
  /// A float IR attribute (`negative_slope`, `alpha`); integers and numeric strings (the
  /// `value` of Scalar) are accepted too.
  std::optional<double> FloatAttr(std::string_view key) const;
};

/// The graph as written (sizes still symbolic).
struct Graph {
  std::string name;
  int64_t type = 0;  // 0 HintGraph, 1 ImplGraph
  std::vector<std::string> size_vars;
  std::vector<Axis> axes;
  std::vector<Node> nodes;  // in the order written

  /// The node named `name`, or null.
  const Node* FindNode(std::string_view name) const;
  /// The axis with id `id`, or null.
  const Axis* FindAxis(int64_t id) const;
};

/// The Ascend platform a schedule is computed for.
struct Platform {
  std::string name;           // "910b1", or "custom"
  int64_t vector_cores = 48;  // cores a kernel may use (block_dim limit)
  int64_t ub_bytes = 196352;  // usable unified buffer per core
};

/// A request: the graph, the size bindings, and (for Ascend targets) the platform.
struct Request {
  Graph graph;
  SizeBindings sizes;
  std::optional<Platform> platform;
};

}  // namespace tilesmith::ascgraph
