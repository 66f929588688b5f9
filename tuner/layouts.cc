#include "tuner/layouts.h"

#include <algorithm>
#include <cctype>
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

// The number after `prefix` in `name` ("p12" with prefix "p": 12), or -1 (more than 9
// digits is no fusion's parameter or output, and would overflow).
int64_t NumberAfter(const std::string& name, std::string_view prefix) {
  if (name.size() <= prefix.size() || !name.starts_with(prefix) ||
      name.size() > prefix.size() + 9 ||
      !std::all_of(name.begin() + prefix.size(), name.end(),
                   [](unsigned char c) { return std::isdigit(c); })) {
    return -1;
  }
  return std::stoll(name.substr(prefix.size()));
}

std::string Range(std::string_view prefix, int64_t count) {
  if (count == 0) return "it has none";
  return std::string(prefix) + "0 … " + std::string(prefix) + std::to_string(count - 1);
}

// Why parameter `number`'s layout cannot be free, or "".
std::string ParameterProblem(const hlo::HloComputation& fusion, int64_t number) {
  const hlo::HloInstruction& parameter = *fusion.parameter(number);
  std::string name = "p" + std::to_string(number);
  if (parameter.shape().IsTuple()) {
    return name + " is a tuple; only an array parameter's layout can be free";
  }
  for (const hlo::HloInstruction* user : parameter.users()) {
    // A bitcast reinterprets memory: another layout of its operand changes its result, so
    // the kernel would no longer compute the fusion the request gave.
    if (user->opcode() == hlo::HloOpcode::kBitcast) {
      return name + " is read by bitcast '" + user->name() + "', whose result depends on " + name +
             "'s layout; its layout cannot be free";
    }
  }
  return "";
}

// Why output `number`'s layout cannot be free, or "".
std::string OutputProblem(const hlo::HloComputation& fusion, int64_t number) {
  const hlo::HloInstruction* root = fusion.root();
  if (root->opcode() == hlo::HloOpcode::kTuple) root = root->operand(number);
  // As for a parameter: a bitcast's result is its operand's bytes reinterpreted, so another
  // result layout would be another result.
  if (root->opcode() == hlo::HloOpcode::kBitcast) {
    return "out" + std::to_string(number) + " is bitcast '" + root->name() +
           "', whose result depends on its layout; its layout cannot be free";
  }
  return "";
}

// Adds the parameter or output `name` to `free`, once; a scalar or vector (one layout) is
// left out. A name the fusion does not have, or one that cannot be free, is an error.
Status AddFreeName(const std::string& name, const hlo::HloComputation& fusion, FreeLayouts& free) {
  int64_t parameters = fusion.parameter_count();
  int64_t outputs = OutputCount(fusion);
  std::string prefix = "--free-layouts: ";
  if (int64_t number = NumberAfter(name, "p"); name.starts_with("p")) {
    if (number < 0 || number >= parameters) {
      return InvalidArgument(prefix + "'" + name + "' is not a parameter (" +
                             Range("p", parameters) + ")");
    }
    if (std::string problem = ParameterProblem(fusion, number); !problem.empty()) {
      return InvalidArgument(prefix + problem);
    }
    if (fusion.parameter(number)->shape().rank() < 2) return OkStatus();
    if (std::find(free.parameters.begin(), free.parameters.end(), number) ==
        free.parameters.end()) {
      free.parameters.push_back(number);
    }
    return OkStatus();
  }
  if (int64_t number = NumberAfter(name, "out"); name.starts_with("out")) {
    if (number < 0 || number >= outputs) {
      return InvalidArgument(prefix + "'" + name + "' is not an output (" + Range("out", outputs) +
                             ")");
    }
    const hlo::Shape& shape = OutputShape(fusion, number);
    if (shape.IsTuple() || shape.rank() < 2) return OkStatus();
    if (std::string problem = OutputProblem(fusion, number); !problem.empty()) {
      return InvalidArgument(prefix + problem);
    }
    if (std::find(free.outputs.begin(), free.outputs.end(), number) == free.outputs.end()) {
      free.outputs.push_back(number);
    }
    return OkStatus();
  }
  return InvalidArgument(prefix + "'" + name + "' names neither a parameter (" +
                         Range("p", parameters) + ") nor an output (" + Range("out", outputs) +
                         ")");
}

// `target`'s shape with the layout `text`, checked as the parser checks a request.
Status SetLayout(hlo::Shape& target, const std::string& name, const std::string& text) {
  TS_ASSIGN_OR_RETURN(hlo::Shape parsed,
                      hlo::ParseShape(hlo::ShapeToStringNoLayout(target) + text));
  if (std::string problem = hlo::ValidateLayout(parsed); !problem.empty()) {
    return InvalidArgument("layout of " + name + ": " + problem);
  }
  target.set_layout(parsed.layout());
  return OkStatus();
}

}  // namespace

Expected<FreeLayouts> ParseFreeLayouts(std::string_view list, const hlo::HloComputation& fusion) {
  FreeLayouts free;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string name(list.substr(0, comma));
    list = comma == std::string_view::npos ? "" : list.substr(comma + 1);
    TS_RETURN_IF_ERROR(AddFreeName(name, fusion, free));
  }
  return free;
}

Expected<FreeLayouts> ParseFreeLayouts(std::span<const std::string> names,
                                       const hlo::HloComputation& fusion) {
  FreeLayouts free;
  for (const std::string& name : names) TS_RETURN_IF_ERROR(AddFreeName(name, fusion, free));
  return free;
}

std::vector<std::string> LayoutMenu(const hlo::Shape& array) {
  std::vector<std::string> menu = {hlo::LayoutToString(array.layout())};
  int64_t rank = array.rank();
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
    if (hlo::BitWidth(array.element_type()) == 16) menu.push_back(tiled + "(2,1)}");
  }
  return menu;
}

std::vector<nlohmann::json> LayoutChoices(const hlo::HloComputation& fusion,
                                          const FreeLayouts& free) {
  std::vector<std::pair<std::string, const hlo::Shape*>> arrays;
  for (int64_t parameter : free.parameters) {
    arrays.push_back({"p" + std::to_string(parameter), &fusion.parameter(parameter)->shape()});
  }
  for (int64_t output : free.outputs) {
    arrays.push_back({"out" + std::to_string(output), &OutputShape(fusion, output)});
  }
  std::vector<nlohmann::json> choices = {nlohmann::json::object()};
  for (const auto& [name, shape] : arrays) {
    std::vector<nlohmann::json> next;
    for (const nlohmann::json& choice : choices) {
      for (const std::string& layout : LayoutMenu(*shape)) {
        nlohmann::json extended = choice;
        extended[name] = layout;
        next.push_back(std::move(extended));
      }
    }
    choices = std::move(next);
  }
  return choices;
}

Expected<std::unique_ptr<hlo::HloModule>> WithLayouts(const hlo::HloModule& module,
                                                      const nlohmann::json& layouts) {
  TS_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> copy,
                      hlo::ParseHloModule(hlo::PrintModule(module), module.name()));
  if (!layouts.is_object() || layouts.empty()) return copy;
  const hlo::HloComputation& fusion = *copy->fusion();
  hlo::HloInstruction* root = fusion.root();
  hlo::HloInstruction* entry_root = copy->entry()->root();
  // When the entry calls the fusion, its operands are what the fusion's parameters get.
  bool entry_calls_fusion = entry_root != root && entry_root->opcode() == hlo::HloOpcode::kFusion;
  for (const auto& [name, value] : layouts.items()) {
    TS_ASSIGN_OR_RETURN(FreeLayouts named, ParseFreeLayouts(name, fusion));
    if (named.empty() || !value.is_string()) {
      return InvalidArgument("layout of '" + name + "' must be a layout text such as \"{1,0}\"");
    }
    const std::string& text = value.get_ref<const std::string&>();
    if (!named.parameters.empty()) {
      int64_t number = named.parameters[0];
      hlo::HloInstruction* parameter = fusion.parameters()[number];
      TS_RETURN_IF_ERROR(SetLayout(parameter->mutable_shape(), name, text));
      if (entry_calls_fusion) {
        hlo::HloInstruction* argument = entry_root->mutable_operand(number);
        // Another producer keeps its layout: the caller would copy into the chosen one.
        if (argument->opcode() == hlo::HloOpcode::kParameter) {
          argument->mutable_shape() = parameter->shape();
        }
      }
      continue;
    }
    int64_t output = named.outputs[0];
    hlo::Shape& target = root->shape().IsTuple()
                             ? root->mutable_shape().mutable_tuple_elements()[output]
                             : root->mutable_shape();
    TS_RETURN_IF_ERROR(SetLayout(target, name, text));
    if (root->shape().IsTuple()) root->mutable_operand(output)->mutable_shape() = target;
  }
  // The caller's instruction (the entry's root `fusion`) produces what the body produces.
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
