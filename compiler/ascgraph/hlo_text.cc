#include "compiler/ascgraph/hlo_text.h"

#include <charconv>
#include <cmath>

namespace tilesmith::ascgraph::internal {
namespace {

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; }

// AscGraph node names ("graph/Abs_0") as HLO names ("Abs_0"): the last path component,
// other characters replaced.
std::string HloName(std::string_view node_name) {
  if (size_t slash = node_name.rfind('/'); slash != std::string_view::npos) {
    node_name.remove_prefix(slash + 1);
  }
  std::string name;
  for (char c : node_name) name += IsNameChar(c) ? c : '_';
  if (name.empty() || !IsNameStart(name[0])) name.insert(0, "n");
  return name;
}

// Escapes a string for an HLO metadata string literal.
std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string ListText(const std::vector<int64_t>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text + "}";
}

std::string ShapeText(const HloValue& value) {
  std::string text = std::string(hlo::PrimitiveTypeName(value.type)) + "[";
  for (size_t i = 0; i < value.dims.size(); ++i) {
    text += (i ? "," : "") + std::to_string(value.dims[i]);
  }
  text += "]";
  if (!value.minor_to_major.empty()) text += ListText(value.minor_to_major);
  return text;
}

std::string NumberText(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  (void)error;  // 64 characters always hold a double
  return std::string(buffer, end);
}

void HloTextBuilder::SetNode(std::string_view node_name) {
  node_name_ = node_name;
  name_hint_ = HloName(node_name);
}

std::string HloTextBuilder::UniqueName(std::string_view hint) {
  std::string name(hint);
  for (int suffix = 1; names_.contains(name); ++suffix) {
    name = std::string(hint) + "." + std::to_string(suffix);
  }
  names_.insert(name);
  return name;
}

HloValue HloTextBuilder::Add(hlo::PrimitiveType type, const std::vector<int64_t>& dims,
                             std::string_view opcode, const std::vector<HloValue>& operands,
                             std::string_view attributes,
                             const std::vector<int64_t>& minor_to_major) {
  HloValue value{UniqueName(name_hint_), type, dims, minor_to_major};
  std::string text = ShapeText(value) + " " + std::string(opcode) + "(";
  for (size_t i = 0; i < operands.size(); ++i) text += (i ? ", " : "") + operands[i].name;
  text += ")";
  if (!attributes.empty()) text += ", " + std::string(attributes);
  if (!node_name_.empty()) text += ", metadata={op_name=" + Quoted(node_name_) + "}";
  lines_.emplace_back(value.name, std::move(text));
  return value;
}

HloValue HloTextBuilder::Parameter(int64_t number, hlo::PrimitiveType type,
                                   const std::vector<int64_t>& dims,
                                   const std::vector<int64_t>& minor_to_major) {
  HloValue value = Add(type, dims, "parameter", {}, "", minor_to_major);
  // `parameter(N)` carries its number inside the parentheses.
  std::string& text = lines_.back().second;
  text.replace(text.find("parameter()"), 11, "parameter(" + std::to_string(number) + ")");
  if (parameter_shapes_.size() <= static_cast<size_t>(number)) parameter_shapes_.resize(number + 1);
  parameter_shapes_[number] = ShapeText(value);
  return value;
}

HloValue HloTextBuilder::Splat(hlo::PrimitiveType type, const std::vector<int64_t>& dims,
                               std::string literal) {
  HloValue scalar = Add(type, {}, "constant", {});
  std::string& text = lines_.back().second;
  text.replace(text.find("constant()"), 10, "constant(" + literal + ")");
  if (dims.empty()) return scalar;
  return Add(type, dims, "broadcast", {scalar}, "dimensions={}");
}

std::string HloTextBuilder::Reducer(hlo::PrimitiveType type, std::string_view opcode) {
  std::string type_name(hlo::PrimitiveTypeName(type));
  std::string key = type_name + " " + std::string(opcode);
  if (auto it = reducers_.find(key); it != reducers_.end()) return it->second;
  std::string name = UniqueName(std::string(opcode) + "_" + type_name);
  reducers_[key] = name;
  reducer_texts_.push_back(name + " {\n  a = " + type_name + "[] parameter(0)\n  b = " + type_name +
                           "[] parameter(1)\n  ROOT r = " + type_name + "[] " +
                           std::string(opcode) + "(a, b)\n}\n\n");
  return name;
}

std::string HloTextBuilder::Finish(std::string_view module_name, std::string_view fusion_name,
                                   const std::vector<HloValue>& roots) {
  std::string root_name = roots[0].name;
  std::string root_shape = ShapeText(roots[0]);
  if (roots.size() > 1) {
    root_shape = "(";
    for (size_t i = 0; i < roots.size(); ++i) root_shape += (i ? ", " : "") + ShapeText(roots[i]);
    root_shape += ")";
    root_name = UniqueName("results");
    std::string operands;
    for (size_t i = 0; i < roots.size(); ++i) operands += (i ? ", " : "") + roots[i].name;
    lines_.emplace_back(root_name, root_shape + " tuple(" + operands + ")");
  }
  std::string text = "HloModule " + HloName(module_name) + "\n\n";
  for (const std::string& reducer : reducer_texts_) text += reducer;
  std::string fusion = HloName(fusion_name);
  text += fusion + " {\n";
  for (const auto& [name, line] : lines_) {
    text += std::string(name == root_name ? "  ROOT " : "  ") + name + " = " + line + "\n";
  }
  text += "}\n\nENTRY main {\n";
  std::string arguments;
  for (size_t i = 0; i < parameter_shapes_.size(); ++i) {
    text += "  p" + std::to_string(i) + " = " + parameter_shapes_[i] + " parameter(" +
            std::to_string(i) + ")\n";
    arguments += (i ? ", " : "") + std::string("p") + std::to_string(i);
  }
  text += "  ROOT fusion = " + root_shape + " fusion(" + arguments +
          "), kind=kLoop, calls=" + fusion + "\n}\n";
  return text;
}

}  // namespace tilesmith::ascgraph::internal
