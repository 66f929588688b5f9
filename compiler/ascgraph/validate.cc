#include "compiler/ascgraph/validate.h"

#include <algorithm>
#include <functional>
#include <set>

namespace tilesmith::ascgraph {
namespace {

std::string NodeWhere(const Node& node) { return "node '" + node.name + "'"; }

std::string InputWhere(const Node& node, size_t i) {
  const InputSource& source = node.inputs[i];
  return NodeWhere(node) + ": input " + std::to_string(i) + " (from '" + source.node + "' output " +
         std::to_string(source.output_index) + ")";
}

// Per-op attributes the lowering reads; missing ones are errors here, not surprises later.
struct RequiredAttr {
  std::string_view op;
  std::string_view attr;
};
constexpr RequiredAttr kRequiredAttrs[] = {
    {"LeakyRelu", "negative_slope"},
    {"Axpy", "alpha"},
    {"Scalar", "value"},  // a string in AscIR, read as a number
};

class Validator {
 public:
  explicit Validator(const Request& request) : request_(request), graph_(request.graph) {
    bound_.graph = &graph_;
  }

  Expected<BoundGraph> Run() {
    if (graph_.nodes.empty()) return InvalidArgument("the graph has no nodes");
    for (const Node& node : graph_.nodes) all_names_.emplace(node.name, &node);
    TS_RETURN_IF_ERROR(CheckAxes());
    for (const Node& node : graph_.nodes) TS_RETURN_IF_ERROR(CheckNode(node));
    TS_RETURN_IF_ERROR(CheckIndices(OpKind::kData, "Data", bound_.inputs));
    TS_RETURN_IF_ERROR(CheckIndices(OpKind::kOutput, "Output", bound_.results));
    if (bound_.results.empty()) return InvalidArgument("the graph has no Output node");
    TS_RETURN_IF_ERROR(Order());
    for (const Node* node : bound_.order) TS_RETURN_IF_ERROR(CheckEdges(*node));
    return std::move(bound_);
  }

 private:
  Status CheckAxes() {
    for (const Axis& axis : graph_.axes) {
      std::string where = "axis '" + axis.name + "' (id " + std::to_string(axis.id) + ")";
      if (bound_.axis_sizes.contains(axis.id)) {
        return InvalidArgument(where + ": id " + std::to_string(axis.id) +
                               " is already used by axis '" + bound_.AxisName(axis.id) + "'");
      }
      auto size = axis.size.Evaluate(request_.sizes);
      if (!size) return std::unexpected(size.error().WithContext(where + " size"));
      if (*size <= 0) {
        return InvalidArgument(where + " size '" + axis.size.ToString() + "' is " +
                               std::to_string(*size) + "; sizes must be positive");
      }
      bound_.axis_sizes[axis.id] = *size;
    }
    return OkStatus();
  }

  Status CheckAxisIds(const std::vector<int64_t>& ids, const std::string& where) {
    std::set<int64_t> seen;
    for (size_t i = 0; i < ids.size(); ++i) {
      std::string field = where + "[" + std::to_string(i) + "]";
      if (!bound_.axis_sizes.contains(ids[i])) {
        return InvalidArgument(field + ": unknown axis id " + std::to_string(ids[i]));
      }
      if (!seen.insert(ids[i]).second) {
        return InvalidArgument(field + ": axis '" + bound_.AxisName(ids[i]) + "' appears twice");
      }
    }
    return OkStatus();
  }

  Status CheckNode(const Node& node) {
    std::string where = NodeWhere(node);
    if (!nodes_.emplace(node.name, &node).second) {
      return InvalidArgument(where + ": the name is used by another node too");
    }
    auto op = LookupOp(node.type, node.inputs.size());
    if (!op) return std::unexpected(op.error().WithContext(where));
    bound_.ops[node.name] = *op;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto found = all_names_.find(node.inputs[i].node);
      const Node* source = found == all_names_.end() ? nullptr : found->second;
      if (source == nullptr) {
        return InvalidArgument(InputWhere(node, i) + ": no node is named '" + node.inputs[i].node +
                               "'");
      }
      int32_t index = node.inputs[i].output_index;
      if (index < 0 || index >= static_cast<int32_t>(source->outputs.size())) {
        return InvalidArgument(InputWhere(node, i) + ": '" + source->name + "' has " +
                               std::to_string(source->outputs.size()) + " output(s)");
      }
    }
    TS_RETURN_IF_ERROR(CheckAxisIds(node.sched_axis, where + ": sched.axis"));
    bool is_output = (*op)->kind == OpKind::kOutput;
    if (node.outputs.size() != 1 && !(is_output && node.outputs.empty())) {
      return InvalidArgument(where + ": has " + std::to_string(node.outputs.size()) +
                             " outputs; a " + node.type + " node has one");
    }
    std::vector<ConcreteTensor>& outputs = bound_.outputs[node.name];
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      TS_ASSIGN_OR_RETURN(ConcreteTensor tensor,
                          CheckTensor(node.outputs[o], where + ": output " + std::to_string(o)));
      outputs.push_back(std::move(tensor));
    }
    if ((is_output || (*op)->kind == OpKind::kData) && !node.IntAttr("index")) {
      return InvalidArgument(where + ": ir_attr 'index' is missing or not an integer");
    }
    for (const RequiredAttr& required : kRequiredAttrs) {
      if (node.type == required.op && !node.FloatAttr(required.attr)) {
        return InvalidArgument(where + ": ir_attr '" + std::string(required.attr) +
                               "' is missing or not a number");
      }
    }
    return OkStatus();
  }

  Expected<ConcreteTensor> CheckTensor(const TensorAttr& tensor, const std::string& where) {
    TS_RETURN_IF_ERROR(CheckAxisIds(tensor.axis_ids, where + " axis_ids"));
    for (auto [field, count] : {std::pair{"repeats", tensor.repeats.size()},
                                std::pair{"strides", tensor.strides.size()}}) {
      if (count != tensor.axis_ids.size()) {
        return InvalidArgument(where + " " + field + ": " + std::to_string(count) + " values for " +
                               std::to_string(tensor.axis_ids.size()) + " axis_ids");
      }
    }
    auto concrete = EvaluateTensor(tensor, request_.sizes);
    if (!concrete) return std::unexpected(concrete.error().WithContext(where));
    for (size_t i = 0; i < concrete->repeats.size(); ++i) {
      if (concrete->repeats[i] < 1 || concrete->strides[i] < 0) {
        bool repeat = concrete->repeats[i] < 1;
        return InvalidArgument(
            where + " " + (repeat ? "repeats[" : "strides[") + std::to_string(i) + "] is " +
            std::to_string(repeat ? concrete->repeats[i] : concrete->strides[i]) +
            (repeat ? "; repeats must be at least 1" : "; strides must be >= 0"));
      }
    }
    return std::move(*concrete);
  }

  Status CheckIndices(OpKind kind, std::string_view type, std::vector<const Node*>& slots) {
    std::vector<const Node*> nodes;
    for (const Node& node : graph_.nodes) {
      if (bound_.ops.at(node.name)->kind == kind) nodes.push_back(&node);
    }
    slots.assign(nodes.size(), nullptr);
    for (const Node* node : nodes) {
      int64_t index = *node->IntAttr("index");
      if (index < 0 || index >= static_cast<int64_t>(nodes.size())) {
        return InvalidArgument(NodeWhere(*node) + ": ir_attr 'index' " + std::to_string(index) +
                               " is out of range: the graph has " + std::to_string(nodes.size()) +
                               " " + std::string(type) + " node(s), indexed from 0");
      }
      if (slots[index] != nullptr) {
        return InvalidArgument(NodeWhere(*node) + ": ir_attr 'index' " + std::to_string(index) +
                               " is also the index of " + NodeWhere(*slots[index]));
      }
      slots[index] = node;
    }
    return OkStatus();
  }

  // Depth-first with an explicit stack (graphs may be long chains), so that a cycle is
  // reported as the path that closes it.
  Status Order() {
    enum class Mark { kNone, kActive, kDone };
    std::map<const Node*, Mark> marks;
    std::vector<std::pair<const Node*, size_t>> stack;  // node, next input to visit
    for (const Node& root : graph_.nodes) {
      if (marks[&root] == Mark::kDone) continue;
      marks[&root] = Mark::kActive;
      stack.push_back({&root, 0});
      while (!stack.empty()) {
        auto [node, next] = stack.back();
        if (next == node->inputs.size()) {
          marks[node] = Mark::kDone;
          bound_.order.push_back(node);
          stack.pop_back();
          continue;
        }
        ++stack.back().second;
        const Node* input = nodes_.at(node->inputs[next].node);
        Mark& mark = marks[input];
        if (mark == Mark::kDone) continue;
        if (mark == Mark::kActive) {
          std::string cycle;
          auto start = std::ranges::find(stack, input, [](const auto& e) { return e.first; });
          for (auto it = start; it != stack.end(); ++it) cycle += "'" + it->first->name + "' -> ";
          return InvalidArgument(NodeWhere(*input) + ": is on a cycle: " + cycle + "'" +
                                 input->name + "'");
        }
        mark = Mark::kActive;
        stack.push_back({input, 0});
      }
    }
    return OkStatus();
  }

  Status CheckEdges(const Node& node) {
    const OpInfo& op = *bound_.ops.at(node.name);
    TS_RETURN_IF_ERROR(CheckSched(node, op));
    TS_RETURN_IF_ERROR(CheckTypes(node, op));
    switch (op.kind) {
      case OpKind::kData:
      case OpKind::kScalar:
        return OkStatus();
      case OpKind::kOutput:
        return CheckOutputEnds(node);
      case OpKind::kConcat:
        return CheckConcat(node);
      case OpKind::kMove:
      case OpKind::kBroadcast:
      case OpKind::kElementwise:
      case OpKind::kReduce:
      case OpKind::kTranspose:
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          TS_RETURN_IF_ERROR(CheckMapping(node, i, op.kind));
        }
        return OkStatus();
    }
    return OkStatus();
  }

  // The loop nest must cover every axis a node reads or writes with more than one element.
  Status CheckSched(const Node& node, const OpInfo& op) {
    if (node.sched_axis.empty()) return OkStatus();
    auto covered = [&](const ConcreteTensor& tensor, const std::string& what) -> Status {
      for (size_t i = 0; i < tensor.axis_ids.size(); ++i) {
        if (tensor.repeats[i] == 1 || std::ranges::count(node.sched_axis, tensor.axis_ids[i])) {
          continue;
        }
        return InvalidArgument(
            what + " is indexed by axis '" + bound_.AxisName(tensor.axis_ids[i]) +
            "', which is not in the node's sched.axis " + AxisNames(node.sched_axis));
      }
      return OkStatus();
    };
    // Concat inputs may run on their own (split) axes.
    if (op.kind != OpKind::kConcat) {
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        TS_RETURN_IF_ERROR(covered(bound_.Input(node, i), InputWhere(node, i)));
      }
    }
    for (size_t o = 0; o < bound_.outputs.at(node.name).size(); ++o) {
      TS_RETURN_IF_ERROR(covered(bound_.outputs.at(node.name)[o],
                                 NodeWhere(node) + ": output " + std::to_string(o)));
    }
    return OkStatus();
  }

  Status CheckTypes(const Node& node, const OpInfo& op) {
    if (op.kind == OpKind::kOutput || node.inputs.empty()) return OkStatus();
    hlo::PrimitiveType output = bound_.Output(node).dtype;
    auto mismatch = [&](size_t i, hlo::PrimitiveType expected, std::string_view what) {
      return InvalidArgument(InputWhere(node, i) + ": dtype " +
                             std::string(hlo::PrimitiveTypeName(bound_.Input(node, i).dtype)) +
                             " differs from " + std::string(what) + " " +
                             std::string(hlo::PrimitiveTypeName(expected)));
    };
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      hlo::PrimitiveType type = bound_.Input(node, i).dtype;
      switch (op.types) {
        case TypeRule::kAny:
          break;
        case TypeRule::kSame:
          if (type != output) return mismatch(i, output, "the output's dtype");
          break;
        case TypeRule::kInputsAgree:
          if (type != bound_.Input(node, 0).dtype) {
            return mismatch(i, bound_.Input(node, 0).dtype, "input 0's dtype");
          }
          break;
        case TypeRule::kFirstIsControl:
        case TypeRule::kSecondIsControl: {
          size_t control = op.types == TypeRule::kFirstIsControl ? 0 : 1;
          if (i != control && type != output) return mismatch(i, output, "the output's dtype");
          break;
        }
      }
    }
    return OkStatus();
  }

  // An Output node may repeat its input's attributes on its own output; both ends of the
  // edge must then agree.
  Status CheckOutputEnds(const Node& node) {
    const std::vector<ConcreteTensor>& own = bound_.outputs.at(node.name);
    if (own.empty() || own[0].axis_ids.empty()) return OkStatus();
    const ConcreteTensor& in = bound_.Input(node, 0);
    const ConcreteTensor& out = own[0];
    std::string what;
    if (in.dtype != out.dtype) {
      what = "dtype: " + std::string(hlo::PrimitiveTypeName(in.dtype)) + " vs " +
             std::string(hlo::PrimitiveTypeName(out.dtype));
    } else if (in.axis_ids != out.axis_ids) {
      what = "axis_ids: " + AxisNames(in.axis_ids) + " vs " + AxisNames(out.axis_ids);
    } else if (in.repeats != out.repeats) {
      what = "repeats: " + FormatList(in.repeats) + " vs " + FormatList(out.repeats);
    } else if (in.strides != out.strides) {
      what = "strides: " + FormatList(in.strides) + " vs " + FormatList(out.strides);
    }
    if (what.empty()) return OkStatus();
    return InvalidArgument(NodeWhere(node) + ": output 0 disagrees with input 0 (from '" +
                           node.inputs[0].node + "') on " + what);
  }

  // Whether input `i` can be read as the node's output: the same axes of more than one
  // element, with the same repeats and (except for Transpose) in the same order. The output
  // may add axes (a broadcast); a reduction may drop them (or keep them with repeats 1).
  Status CheckMapping(const Node& node, size_t i, OpKind kind) {
    const ConcreteTensor& in = bound_.Input(node, i);
    const ConcreteTensor& out = bound_.Output(node);
    std::string where = InputWhere(node, i);
    std::vector<size_t> positions;  // in the output, of the input's kept axes
    for (size_t a = 0; a < in.axis_ids.size(); ++a) {
      if (in.repeats[a] == 1) continue;
      auto it = std::ranges::find(out.axis_ids, in.axis_ids[a]);
      size_t position = it - out.axis_ids.begin();
      bool reduced = it == out.axis_ids.end() || out.repeats[position] == 1;
      if (kind == OpKind::kReduce && reduced) continue;
      std::string axis = "axis '" + bound_.AxisName(in.axis_ids[a]) + "'";
      if (it == out.axis_ids.end()) {
        return InvalidArgument(where + ": " + axis + " (repeats " + std::to_string(in.repeats[a]) +
                               ") is not among the output's axes " + AxisNames(out.axis_ids));
      }
      if (out.repeats[position] != in.repeats[a]) {
        return InvalidArgument(where + ": repeats " + std::to_string(in.repeats[a]) + " on " +
                               axis + " where the output has " +
                               std::to_string(out.repeats[position]));
      }
      positions.push_back(position);
    }
    if (kind != OpKind::kTranspose && !std::ranges::is_sorted(positions)) {
      return InvalidArgument(where + ": axes " + AxisNames(in.axis_ids) +
                             " come in another order than the output's " + AxisNames(out.axis_ids) +
                             "; only Transpose reorders axes");
    }
    if (kind != OpKind::kReduce && kind != OpKind::kTranspose) return OkStatus();
    // Neither a reduction nor a transpose creates elements: every output axis of more than
    // one element comes from the input.
    for (size_t a = 0; a < out.axis_ids.size(); ++a) {
      if (out.repeats[a] == 1 || std::ranges::count(positions, a)) continue;
      return InvalidArgument(NodeWhere(node) + ": output 0 has repeats " +
                             std::to_string(out.repeats[a]) + " on axis '" +
                             bound_.AxisName(out.axis_ids[a]) + "' that input 0 does not have; a " +
                             node.type + " cannot broadcast");
    }
    return OkStatus();
  }

  // Concat inputs line up with the output by position: all dims equal but one, whose
  // repeats add up to the output's.
  Status CheckConcat(const Node& node) {
    const ConcreteTensor& out = bound_.Output(node);
    std::optional<size_t> dim;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ConcreteTensor& in = bound_.Input(node, i);
      if (in.repeats.size() != out.repeats.size()) {
        return InvalidArgument(InputWhere(node, i) + ": has " + std::to_string(in.repeats.size()) +
                               " axes, the output " + std::to_string(out.repeats.size()));
      }
      for (size_t d = 0; d < out.repeats.size(); ++d) {
        if (in.repeats[d] == out.repeats[d] || (dim && *dim == d)) continue;
        if (dim) {
          return InvalidArgument(InputWhere(node, i) + ": repeats " + FormatList(in.repeats) +
                                 " differ from the output's " + FormatList(out.repeats) +
                                 " on more than one axis");
        }
        dim = d;
      }
    }
    if (!dim) {
      if (node.inputs.size() == 1) return OkStatus();
      return InvalidArgument(NodeWhere(node) + ": no axis where the inputs' repeats add up to " +
                             "the output's " + FormatList(out.repeats));
    }
    int64_t total = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) total += bound_.Input(node, i).repeats[*dim];
    if (total != out.repeats[*dim]) {
      return InvalidArgument(NodeWhere(node) + ": the inputs' repeats on axis '" +
                             bound_.AxisName(out.axis_ids[*dim]) + "' add up to " +
                             std::to_string(total) + ", the output has " +
                             std::to_string(out.repeats[*dim]));
    }
    return OkStatus();
  }

  std::string AxisNames(const std::vector<int64_t>& ids) const {
    std::string text = "[";
    for (size_t i = 0; i < ids.size(); ++i) text += (i ? ", " : "") + bound_.AxisName(ids[i]);
    return text + "]";
  }

  const Request& request_;
  const Graph& graph_;
  BoundGraph bound_;
  std::map<std::string, const Node*, std::less<>> all_names_;  // first node of each name
  std::map<std::string, const Node*, std::less<>> nodes_;      // checked so far
};

}  // namespace

const ConcreteTensor& BoundGraph::Input(const Node& node, size_t i) const {
  const InputSource& source = node.inputs[i];
  return outputs.at(source.node)[source.output_index];
}

const ConcreteTensor& BoundGraph::Output(const Node& node) const {
  return outputs.at(node.name).front();
}

std::string BoundGraph::AxisName(int64_t id) const {
  if (const Axis* axis = graph->FindAxis(id)) return axis->name;
  return "#" + std::to_string(id);
}

Expected<BoundGraph> BindAndValidate(const Request& request) { return Validator(request).Run(); }

Status ValidateRequest(const Request& request) {
  TS_RETURN_IF_ERROR(BindAndValidate(request));
  return OkStatus();
}

}  // namespace tilesmith::ascgraph
