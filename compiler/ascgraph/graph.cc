#include "compiler/ascgraph/graph.h"

#include <cstdlib>

namespace tilesmith::ascgraph {

std::optional<int64_t> Node::IntAttr(std::string_view key) const {
  auto it = ir_attrs.find(std::string(key));
  if (it == ir_attrs.end()) return std::nullopt;
  if (const int64_t* value = std::get_if<int64_t>(&it->second)) return *value;
  return std::nullopt;
}

std::optional<double> Node::FloatAttr(std::string_view key) const {
  auto it = ir_attrs.find(std::string(key));
  if (it == ir_attrs.end()) return std::nullopt;
  if (const double* value = std::get_if<double>(&it->second)) return *value;
  if (const int64_t* value = std::get_if<int64_t>(&it->second)) return static_cast<double>(*value);
  if (const std::string* text = std::get_if<std::string>(&it->second); text && !text->empty()) {
    char* end = nullptr;
    double value = std::strtod(text->c_str(), &end);
    if (end == text->c_str() + text->size()) return value;
  }
  return std::nullopt;
}

const Node* Graph::FindNode(std::string_view name) const {
  for (const Node& node : nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

const Axis* Graph::FindAxis(int64_t id) const {
  for (const Axis& axis : axes) {
    if (axis.id == id) return &axis;
  }
  return nullptr;
}

std::string FormatList(std::span<const int64_t> values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

Expected<ConcreteTensor> EvaluateTensor(const TensorAttr& tensor, const SizeBindings& sizes) {
  ConcreteTensor result;
  result.dtype = tensor.dtype;
  result.axis_ids = tensor.axis_ids;
  auto evaluate_all = [&](const std::vector<SizeExpr>& exprs, std::string_view field,
                          std::vector<int64_t>& out) -> Status {
    for (size_t i = 0; i < exprs.size(); ++i) {
      auto value = exprs[i].Evaluate(sizes);
      if (!value) {
        return std::unexpected(
            value.error().WithContext(std::string(field) + "[" + std::to_string(i) + "]"));
      }
      out.push_back(*value);
    }
    return OkStatus();
  };
  TS_RETURN_IF_ERROR(evaluate_all(tensor.repeats, "repeats", result.repeats));
  TS_RETURN_IF_ERROR(evaluate_all(tensor.strides, "strides", result.strides));
  return result;
}

}  // namespace tilesmith::ascgraph
