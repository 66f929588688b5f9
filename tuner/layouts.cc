#include "tuner/layouts.h"

#include <algorithm>
#include <numeric>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/primitive_type.h"
#include "compiler/hlo/printer.h"

namespace tilesmith::tuner {
namespace {

int64_t OutputCount(const hlo::HloComputation& fusion) {
  const hlo::Shape& shape = fusion.root()->shape();
  return shape.IsTuple() ? static_cast<int64_t>(shape.tuple_elements().size()) : 1;
}

const hlo::Shape& OutputShape(const hlo::HloComputation& fusion, int64_t output) {
  const hlo::Shape& shape = fusion.root()->shape();
  return shape.IsTuple() ? shape.tuple_elements()[output] : shape;
}

std::string MinorToMajorText(const std::vector<int64_t>& minor_to_major) {
  std::string text = "{";
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    text += (i ? "," : "") + std::to_string(minor_to_major[i]);
  }
  return text;
}

}  // namespace

Expected<std::vector<int64_t>> ParseFreeOutputs(std::string_view list,
                                                const hlo::HloComputation& fusion) {
  std::vector<int64_t> outputs;
  int64_t count = OutputCount(fusion);
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string name(list.substr(0, comma));
    list = comma == std::string_view::npos ? "" : list.substr(comma + 1);
    int64_t number = -1;
    if (name.size() > 3 && name.starts_with("out") &&
        std::all_of(name.begin() + 3, name.end(), ::isdigit)) {
      number = std::stoll(name.substr(3));
    }
    if (number < 0 || number >= count) {
      return InvalidArgument("--free-layouts: '" + name + "' is not an output (out0 … out" +
                             std::to_string(count - 1) + ")");
    }
    if (OutputShape(fusion, number).IsTuple() || OutputShape(fusion, number).rank() < 2) {
      continue;  // a scalar or vector has one layout
    }
    if (std::find(outputs.begin(), outputs.end(), number) == outputs.end()) {
      outputs.push_back(number);
    }
  }
  return outputs;
}

std::vector<std::string> LayoutMenu(const hlo::Shape& output) {
  std::vector<std::string> menu = {hlo::LayoutToString(output.layout())};
  int64_t rank = output.rank();
  if (rank > 4) return menu;
  std::vector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  do {
    std::string text = MinorToMajorText(order) + "}";
    if (std::find(menu.begin(), menu.end(), text) == menu.end()) menu.push_back(text);
  } while (std::next_permutation(order.begin(), order.end()));
  if (rank >= 2) {
    std::vector<int64_t> row_major(rank);
    std::iota(row_major.rbegin(), row_major.rend(), 0);
    std::string tiled = MinorToMajorText(row_major) + ":T(8,128)";
    menu.push_back(tiled + "}");
    if (hlo::BitWidth(output.element_type()) == 16) menu.push_back(tiled + "(2,1)}");
  }
  return menu;
}

std::vector<nlohmann::json> LayoutChoices(const hlo::HloComputation& fusion,
                                          const std::vector<int64_t>& outputs) {
  std::vector<nlohmann::json> choices = {nlohmann::json::object()};
  for (int64_t output : outputs) {
    std::vector<nlohmann::json> next;
    for (const nlohmann::json& choice : choices) {
      for (const std::string& layout : LayoutMenu(OutputShape(fusion, output))) {
        nlohmann::json extended = choice;
        extended["out" + std::to_string(output)] = layout;
        next.push_back(std::move(extended));
      }
    }
    choices = std::move(next);
  }
  return choices;
}

Expected<std::unique_ptr<hlo::HloModule>> WithOutputLayouts(const hlo::HloModule& module,
                                                            const nlohmann::json& layouts) {
  TS_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> copy,
                      hlo::ParseHloModule(hlo::PrintModule(module), module.name()));
  if (!layouts.is_object() || layouts.empty()) return copy;
  hlo::HloInstruction* root = copy->fusion()->root();
  for (const auto& [name, value] : layouts.items()) {
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> numbers, ParseFreeOutputs(name, *copy->fusion()));
    if (numbers.empty() || !value.is_string()) {
      return InvalidArgument("layout of '" + name + "' must be a layout text such as \"{1,0}\"");
    }
    int64_t output = numbers[0];
    hlo::Shape& target = root->shape().IsTuple()
                             ? root->mutable_shape().mutable_tuple_elements()[output]
                             : root->mutable_shape();
    TS_ASSIGN_OR_RETURN(hlo::Shape parsed, hlo::ParseShape(hlo::ShapeToStringNoLayout(target) +
                                                           value.get<std::string>()));
    if (std::string problem = hlo::ValidateLayout(parsed); !problem.empty()) {
      return InvalidArgument("layout of " + name + ": " + problem);
    }
    target.set_layout(parsed.layout());
    if (root->shape().IsTuple()) root->mutable_operand(output)->mutable_shape() = target;
  }
  // The caller's instruction (the entry's root `fusion`) produces what the body produces.
  hlo::HloInstruction* entry_root = copy->entry()->root();
  if (entry_root != root) entry_root->mutable_shape() = root->shape();
  // Through text again, so every shape is checked as the parser checks a request.
  return hlo::ParseHloModule(hlo::PrintModule(*copy), module.name());
}

nlohmann::json EmitterConfig(const nlohmann::json& config) {
  nlohmann::json stripped = config;
  if (stripped.is_object()) stripped.erase(kLayoutsField);
  return stripped;
}

nlohmann::json ConfigLayouts(const nlohmann::json& config) {
  return config.is_object() && config.contains(kLayoutsField) ? config[kLayoutsField]
                                                              : nlohmann::json();
}

}  // namespace tilesmith::tuner
