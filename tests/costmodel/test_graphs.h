// HintGraphs built in code for the Ascend cost-model tests, written the way the graph engine
// writes them: Data -> Load -> ops -> Store -> Output, contiguous tensors, every node looping
// over every axis.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ascgraph/graph.h"
#include "compiler/ascgraph/validate.h"

namespace tilesmith::costmodel::ascend::testing {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "graph") { request_.graph.name = std::move(name); }

  /// Adds axis z<i> of size s<i>, with s<i> bound to `size`; returns its id.
  int64_t Axis(int64_t size) {
    int64_t id = static_cast<int64_t>(request_.graph.axes.size());
    std::string var = "s" + std::to_string(id);
    ascgraph::Axis axis;
    axis.id = id;
    axis.name = "z" + std::to_string(id);
    axis.size = *ascgraph::SizeExpr::Parse(var);
    request_.graph.axes.push_back(axis);
    request_.graph.size_vars.push_back(var);
    request_.sizes[var] = size;
    return id;
  }

  /// A contiguous tensor over `axes` (outer to inner); axes listed in `ones` have repeat 1
  /// and stride 0 (broadcast inputs, reduced outputs).
  ascgraph::TensorAttr Tensor(hlo::PrimitiveType dtype, const std::vector<int64_t>& axes,
                              const std::vector<int64_t>& ones = {}) const {
    ascgraph::TensorAttr tensor;
    tensor.dtype = dtype;
    tensor.axis_ids = axes;
    int64_t stride = 1;
    std::vector<int64_t> strides(axes.size());
    std::vector<int64_t> repeats(axes.size());
    for (size_t i = axes.size(); i-- > 0;) {
      bool one = std::find(ones.begin(), ones.end(), axes[i]) != ones.end();
      repeats[i] = one ? 1 : request_.sizes.at("s" + std::to_string(axes[i]));
      strides[i] = one ? 0 : stride;
      stride *= repeats[i];
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      tensor.repeats.push_back(ascgraph::SizeExpr::Constant(repeats[i]));
      tensor.strides.push_back(ascgraph::SizeExpr::Constant(strides[i]));
    }
    return tensor;
  }

  /// Every axis, in creation order.
  std::vector<int64_t> AllAxes() const {
    std::vector<int64_t> ids;
    for (const ascgraph::Axis& axis : request_.graph.axes) ids.push_back(axis.id);
    return ids;
  }

  /// Appends a node reading `inputs` (node names, output 0) with one output; returns its name.
  std::string Node(const std::string& type, const std::vector<std::string>& inputs,
                   const ascgraph::TensorAttr& output) {
    ascgraph::Node node;
    node.name = type + "_" + std::to_string(request_.graph.nodes.size());
    node.type = type;
    for (const std::string& input : inputs) node.inputs.push_back({input, 0});
    node.outputs.push_back(output);
    node.sched_axis = AllAxes();
    if (type == "Data") node.ir_attrs["index"] = int64_t{inputs_++};
    if (type == "Output") node.ir_attrs["index"] = int64_t{outputs_++};
    request_.graph.nodes.push_back(node);
    return node.name;
  }

  /// Data + Load of `tensor`; returns the Load.
  std::string Input(const ascgraph::TensorAttr& tensor) {
    return Node("Load", {Node("Data", {}, tensor)}, tensor);
  }

  /// Store + Output of `from`'s output.
  void Result(const std::string& from) {
    const ascgraph::TensorAttr& tensor = request_.graph.FindNode(from)->outputs[0];
    Node("Output", {Node("Store", {from}, tensor)}, tensor);
  }

  /// The output tensor of node `name`.
  const ascgraph::TensorAttr& Out(const std::string& name) const {
    return request_.graph.FindNode(name)->outputs[0];
  }

  ascgraph::Request& request() { return request_; }

 private:
  ascgraph::Request request_;
  int64_t inputs_ = 0;
  int64_t outputs_ = 0;
};

/// Element type names for messages.
inline std::string TypeName(hlo::PrimitiveType type) {
  return std::string(hlo::PrimitiveTypeName(type));
}

}  // namespace tilesmith::costmodel::ascend::testing
