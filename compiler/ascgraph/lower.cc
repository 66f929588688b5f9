#include "compiler/ascgraph/lower.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <sstream>

#include "compiler/ascgraph/lower_internal.h"
#include "compiler/ascgraph/memory_view.h"
#include "compiler/ascgraph/validate.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::ascgraph {
namespace {

using hlo::PrimitiveType;
using internal::HloValue;

// A node's value: its HLO value and the axis of each of its dims. Dims of size 1 hold no
// data, so a value may leave out some of its tensor's size-1 axes (a reduction's result
// before anything needs the kept dims); Relayout adds them where a consumer needs them.
struct Value {
  HloValue hlo;
  std::vector<int64_t> axes;
};

int64_t Product(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

class Lowering {
 public:
  Lowering(const Request& request, const BoundGraph& bound) : request_(request), bound_(bound) {}

  Expected<std::string> Run() {
    for (const Node* node : bound_.order) {
      builder_.SetNode(node->name);
      auto value = LowerNode(*node, *bound_.ops.at(node->name));
      if (!value) return std::unexpected(value.error());
      values_[node->name] = std::move(*value);
    }
    std::vector<HloValue> roots;
    for (const Node* result : bound_.results) roots.push_back(values_.at(result->name).hlo);
    const std::string& name = request_.graph.name.empty() ? "ascgraph" : request_.graph.name;
    return builder_.Finish(name, name, roots);
  }

 private:
  Expected<Value> LowerNode(const Node& node, const OpInfo& op) {
    switch (op.kind) {
      case OpKind::kData:
        return LowerData(node);
      case OpKind::kScalar: {
        // A constant over the dims of more than one element (usually none); consumers
        // broadcast it further.
        const ConcreteTensor& out = bound_.Output(node);
        Value value;
        for (size_t i = 0; i < out.repeats.size(); ++i) {
          if (out.repeats[i] == 1) continue;
          value.axes.push_back(out.axis_ids[i]);
          value.hlo.dims.push_back(out.repeats[i]);
        }
        value.hlo = builder_.Splat(out.dtype, value.hlo.dims,
                                   internal::ScalarLiteral(out.dtype, *node.FloatAttr("value")));
        return value;
      }
      case OpKind::kOutput:
        return LowerOutput(node);
      case OpKind::kMove:
        TS_RETURN_IF_ERROR(CheckOffset(node));
        [[fallthrough]];
      case OpKind::kBroadcast:
      case OpKind::kTranspose: {
        const ConcreteTensor& out = bound_.Output(node);
        return Relayout(Input(node, 0), out.axis_ids, out.repeats);
      }
      case OpKind::kElementwise: {
        const ConcreteTensor& out = bound_.Output(node);
        std::vector<HloValue> inputs;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          inputs.push_back(Relayout(Input(node, i), out.axis_ids, out.repeats).hlo);
        }
        TS_ASSIGN_OR_RETURN(HloValue value,
                            internal::EmitElementwise(builder_, op, node, inputs, out.dtype));
        return Value{value, out.axis_ids};
      }
      case OpKind::kReduce:
        return LowerReduce(node, op);
      case OpKind::kConcat:
        return LowerConcat(node);
    }
    return MakeError(ErrorCode::kInternal, "node '" + node.name + "': unknown op kind");
  }

  const Value& Input(const Node& node, size_t i) const { return values_.at(node.inputs[i].node); }

  // Re-indexes `value` as a tensor over `axes` with `dims`: drops and adds dims of size 1,
  // transposes, and broadcasts along axes the value does not have. Validation made sure
  // every axis of more than one element keeps its size.
  Value Relayout(const Value& value, const std::vector<int64_t>& axes,
                 const std::vector<int64_t>& dims) {
    if (value.axes == axes && value.hlo.dims == dims) return value;
    std::vector<int64_t> kept_dims;
    std::vector<int64_t> positions;  // in `axes`, of each kept dim
    for (size_t i = 0; i < value.axes.size(); ++i) {
      if (value.hlo.dims[i] == 1) continue;
      kept_dims.push_back(value.hlo.dims[i]);
      positions.push_back(std::ranges::find(axes, value.axes[i]) - axes.begin());
    }
    bool reorder = !std::ranges::is_sorted(positions);
    bool broadcast = Product(dims) != Product(kept_dims);
    HloValue current = value.hlo;
    if (!reorder && !broadcast) return {Reshape(current, dims), axes};
    current = Reshape(current, kept_dims);
    if (reorder) {
      std::vector<int64_t> permutation(positions.size());
      std::iota(permutation.begin(), permutation.end(), 0);
      std::ranges::sort(permutation, {}, [&](int64_t i) { return positions[i]; });
      std::vector<int64_t> permuted;
      for (int64_t i : permutation) permuted.push_back(kept_dims[i]);
      current = builder_.Add(current.type, permuted, "transpose", {current},
                             "dimensions=" + internal::ListText(permutation));
      std::ranges::sort(positions);
    }
    if (!broadcast) return {Reshape(current, dims), axes};
    current = builder_.Add(current.type, dims, "broadcast", {current},
                           "dimensions=" + internal::ListText(positions));
    return {current, axes};
  }

  HloValue Reshape(const HloValue& value, const std::vector<int64_t>& dims) {
    if (value.dims == dims) return value;
    return builder_.Add(value.type, dims, "reshape", {value});
  }

  // Graph inputs are read through the buffer their strides describe (memory_view.h):
  // padding and skipped elements are sliced off, stride-0 dims broadcast.
  Expected<Value> LowerData(const Node& node) {
    const ConcreteTensor& out = bound_.Output(node);
    auto view = AnalyzeStrides(out.repeats, out.strides);
    if (!view)
      return std::unexpected(view.error().WithContext("node '" + node.name + "': output 0"));
    std::vector<int64_t> layout =
        view->HasDefaultLayout() ? std::vector<int64_t>{} : view->minor_to_major;
    HloValue buffer =
        builder_.Parameter(*node.IntAttr("index"), out.dtype, view->buffer_dims, layout);
    std::vector<int64_t> axes;
    std::vector<int64_t> dims;
    for (size_t i = 0; i < out.axis_ids.size(); ++i) {
      if (view->broadcast[i]) continue;
      axes.push_back(out.axis_ids[i]);
      dims.push_back(out.repeats[i]);
    }
    std::vector<int64_t> sliced = dims;
    if (view->element_dim) sliced.push_back(1);
    if (sliced != view->buffer_dims) {
      std::string bounds = "slice={";
      for (size_t i = 0; i < sliced.size(); ++i) {
        bounds += (i ? ", [0:" : "[0:") + std::to_string(sliced[i]) + "]";
      }
      buffer = builder_.Add(out.dtype, sliced, "slice", {buffer}, bounds + "}");
    }
    // Broadcast dims are added by the consumers' Relayout.
    return Value{Reshape(buffer, dims), axes};
  }

  // Graph outputs are written as the tensor they store says: dense, in the layout of its
  // strides.
  Expected<Value> LowerOutput(const Node& node) {
    const ConcreteTensor& stored = bound_.Input(node, 0);
    Value value = Relayout(Input(node, 0), stored.axis_ids, stored.repeats);
    std::string where = "node '" + node.inputs[0].node + "': output " +
                        std::to_string(node.inputs[0].output_index) + " (stored by '" + node.name +
                        "')";
    auto view = AnalyzeStrides(stored.repeats, stored.strides);
    if (!view) return std::unexpected(view.error().WithContext(where));
    if (!view->IsDense(stored.repeats)) {
      return Unimplemented(where + ": strides " + FormatList(stored.strides) + " of repeats " +
                           FormatList(stored.repeats) +
                           " leave gaps or repeat elements; graph outputs must be dense");
    }
    if (view->HasDefaultLayout()) return value;
    HloValue copy =
        builder_.Add(value.hlo.type, value.hlo.dims, "copy", {value.hlo}, "", view->minor_to_major);
    return Value{copy, value.axes};
  }

  // Load/Store read and write at `offset` elements into the buffer; only 0 is expressible.
  Status CheckOffset(const Node& node) {
    auto it = node.ir_attrs.find("offset");
    if (it == node.ir_attrs.end()) return OkStatus();
    std::string text;
    if (const int64_t* number = std::get_if<int64_t>(&it->second)) {
      text = std::to_string(*number);
    } else if (const std::string* expression = std::get_if<std::string>(&it->second)) {
      text = *expression;
    }
    int64_t offset = text.empty() ? 0 : -1;
    if (auto expr = SizeExpr::Parse(text); expr && !text.empty()) {
      offset = expr->Evaluate(request_.sizes).value_or(-1);
    }
    if (offset == 0) return OkStatus();
    return Unimplemented("node '" + node.name + "': ir_attr 'offset' (" +
                         (text.empty() ? "not an expression" : "'" + text + "'") +
                         ") is not 0; reading or writing at an offset is not supported");
  }

  Expected<Value> LowerReduce(const Node& node, const OpInfo& op) {
    const Value& in = Input(node, 0);
    const ConcreteTensor& out = bound_.Output(node);
    std::vector<int64_t> reduced;
    Value kept;
    for (size_t i = 0; i < in.axes.size(); ++i) {
      auto it = std::ranges::find(out.axis_ids, in.axes[i]);
      bool dropped = it == out.axis_ids.end() || out.repeats[it - out.axis_ids.begin()] == 1;
      if (in.hlo.dims[i] > 1 && dropped) {
        reduced.push_back(static_cast<int64_t>(i));
      } else {
        kept.axes.push_back(in.axes[i]);
        kept.hlo.dims.push_back(in.hlo.dims[i]);
      }
    }
    if (reduced.empty()) return Relayout(in, out.axis_ids, out.repeats);
    HloValue operand = in.hlo;
    PrimitiveType type = out.dtype;
    bool logical = op.recipe == Recipe::kLogical;
    if (logical) {
      operand = internal::ToPred(builder_, operand);
      type = PrimitiveType::kPred;
    }
    std::string init_literal = op.hlo == "maximum"    ? internal::LowestLiteral(type)
                               : op.hlo == "minimum"  ? internal::HighestLiteral(type)
                               : op.hlo == "multiply" ? internal::ScalarLiteral(type, 1)
                               : op.hlo == "and"      ? "true"
                                                      : internal::ScalarLiteral(type, 0);
    HloValue init = builder_.Splat(type, {}, init_literal);
    HloValue result = builder_.Add(type, kept.hlo.dims, "reduce", {operand, init},
                                   "dimensions=" + internal::ListText(reduced) +
                                       ", to_apply=" + builder_.Reducer(type, op.hlo));
    if (logical) result = internal::Convert(builder_, result, out.dtype);
    if (op.recipe == Recipe::kMean) {
      int64_t count = 1;
      for (int64_t i : reduced) count *= in.hlo.dims[i];
      HloValue divisor = builder_.Splat(type, result.dims, internal::ScalarLiteral(type, count));
      result = builder_.Add(type, result.dims, "divide", {result, divisor});
    }
    // The kept (size-1) dims are added where a consumer needs them, so a reduction
    // followed by a Broadcast is reduce + broadcast, not reduce + reshape + reshape.
    kept.hlo = result;
    return kept;
  }

  // Inputs line up with the output by position (validate.cc); they may run on axes of their
  // own, so each is taken over the output's axes.
  Expected<Value> LowerConcat(const Node& node) {
    const ConcreteTensor& out = bound_.Output(node);
    std::vector<HloValue> inputs;
    std::optional<int64_t> dimension;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ConcreteTensor& tensor = bound_.Input(node, i);
      inputs.push_back(Relayout(Input(node, i), tensor.axis_ids, tensor.repeats).hlo);
      for (size_t d = 0; d < out.repeats.size(); ++d) {
        if (tensor.repeats[d] != out.repeats[d]) dimension = static_cast<int64_t>(d);
      }
    }
    if (!dimension) return Value{inputs[0], out.axis_ids};  // one input: a copy
    HloValue value = builder_.Add(out.dtype, out.repeats, "concatenate", inputs,
                                  "dimensions={" + std::to_string(*dimension) + "}");
    return Value{value, out.axis_ids};
  }

  const Request& request_;
  const BoundGraph& bound_;
  internal::HloTextBuilder builder_;
  std::map<std::string, Value, std::less<>> values_;
};

}  // namespace

Expected<std::string> LowerToHloText(const Request& request) {
  TS_ASSIGN_OR_RETURN(BoundGraph bound, BindAndValidate(request));
  return Lowering(request, bound).Run();
}

Expected<std::unique_ptr<hlo::HloModule>> LowerToHlo(const Request& request) {
  TS_ASSIGN_OR_RETURN(std::string text, LowerToHloText(request));
  const std::string label = "<lowered>";
  auto module = hlo::ParseHloModule(text, label);
  if (module) return module;
  // The recipes only combine operands in the dtypes validation allowed; what the HLO checker
  // still rejects is an op given a dtype it does not take (Exp of int32). The failing line's
  // metadata names the node.
  std::string node;
  const std::string& message = module.error().message;
  if (message.starts_with(label + ":")) {
    int line = std::atoi(message.c_str() + label.size() + 1);
    std::istringstream lines(text);
    std::string content;
    for (int i = 0; i < line && std::getline(lines, content); ++i) {
    }
    if (size_t at = content.find("op_name=\""); at != std::string::npos) {
      size_t start = at + 9;
      node = "node '" + content.substr(start, content.find('"', start) - start) + "': ";
    }
  }
  return InvalidArgument(node + "the lowered HLO does not type-check: " + message);
}

}  // namespace tilesmith::ascgraph
