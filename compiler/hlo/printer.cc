#include "compiler/hlo/printer.h"

#include <algorithm>

namespace tilesmith::hlo {
namespace {

void AppendInts(std::string& out, std::span<const int64_t> values) {
  out += '{';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  out += '}';
}

void AppendAttribute(std::string& out, std::string_view name, std::string_view value) {
  out += ", ";
  out += name;
  out += '=';
  out += value;
}

void AppendIntsAttribute(std::string& out, std::string_view name, std::span<const int64_t> values) {
  out += ", ";
  out += name;
  out += '=';
  AppendInts(out, values);
}

std::string Quote(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    if (c == '\n') {
      quoted += "\\n";
      continue;
    }
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

// `a x b x c` with a per-dimension formatter.
template <typename Fn>
std::string JoinX(size_t count, Fn&& format) {
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) text += 'x';
    text += format(i);
  }
  return text;
}

std::string WindowText(const std::vector<WindowDim>& window) {
  auto all = [&](auto predicate) { return std::all_of(window.begin(), window.end(), predicate); };
  std::string text =
      "{size=" + JoinX(window.size(), [&](size_t i) { return std::to_string(window[i].size); });
  if (!all([](const WindowDim& w) { return w.stride == 1; })) {
    text += " stride=" +
            JoinX(window.size(), [&](size_t i) { return std::to_string(window[i].stride); });
  }
  if (!all([](const WindowDim& w) { return w.padding_low == 0 && w.padding_high == 0; })) {
    text += " pad=" + JoinX(window.size(), [&](size_t i) {
              return std::to_string(window[i].padding_low) + "_" +
                     std::to_string(window[i].padding_high);
            });
  }
  if (!all([](const WindowDim& w) { return w.base_dilation == 1; })) {
    text += " lhs_dilate=" +
            JoinX(window.size(), [&](size_t i) { return std::to_string(window[i].base_dilation); });
  }
  if (!all([](const WindowDim& w) { return w.window_dilation == 1; })) {
    text += " rhs_dilate=" + JoinX(window.size(), [&](size_t i) {
              return std::to_string(window[i].window_dilation);
            });
  }
  if (!all([](const WindowDim& w) { return !w.reversal; })) {
    text += " rhs_reversal=" + JoinX(window.size(), [&](size_t i) {
              return std::string(window[i].reversal ? "1" : "0");
            });
  }
  text += '}';
  return text;
}

bool AlwaysPrintsDimensions(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReduce:
    case HloOpcode::kReverse:
    case HloOpcode::kConcatenate:
    case HloOpcode::kSort:
    case HloOpcode::kMap:
      return true;
    default:
      return false;
  }
}

// Call attributes that take a list of computations even when there is one.
bool IsListCallAttribute(std::string_view name) {
  return name == "branch_computations" || name == "called_computations";
}

void AppendTypedAttributes(std::string& out, const HloInstruction& instruction,
                           const PrintOptions& options) {
  const HloAttributes& a = instruction.attributes();
  if (a.fusion_kind) AppendAttribute(out, "kind", FusionKindName(*a.fusion_kind));
  if (a.slice) {
    out += ", slice={";
    for (size_t i = 0; i < a.slice->size(); ++i) {
      const SliceDim& s = (*a.slice)[i];
      if (i > 0) out += ", ";
      out += '[' + std::to_string(s.start) + ':' + std::to_string(s.limit);
      if (s.stride != 1) out += ':' + std::to_string(s.stride);
      out += ']';
    }
    out += '}';
  }
  if (a.padding) {
    AppendAttribute(out, "padding", JoinX(a.padding->size(), [&](size_t i) {
                      const PadDim& p = (*a.padding)[i];
                      std::string text = std::to_string(p.low) + "_" + std::to_string(p.high);
                      if (p.interior != 0) text += "_" + std::to_string(p.interior);
                      return text;
                    }));
  }
  if (a.window) AppendAttribute(out, "window", WindowText(*a.window));
  if (!a.dimensions.empty() || AlwaysPrintsDimensions(instruction.opcode())) {
    AppendIntsAttribute(out, "dimensions", a.dimensions);
  }
  if (!a.dynamic_slice_sizes.empty() || instruction.opcode() == HloOpcode::kDynamicSlice) {
    AppendIntsAttribute(out, "dynamic_slice_sizes", a.dynamic_slice_sizes);
  }
  if (a.direction) AppendAttribute(out, "direction", ComparisonDirectionName(*a.direction));
  if (a.comparison_type != ComparisonType::kDefault) {
    AppendAttribute(out, "type", ComparisonTypeName(a.comparison_type));
  }
  if (a.tuple_index >= 0) AppendAttribute(out, "index", std::to_string(a.tuple_index));
  if (a.iota_dimension >= 0) {
    AppendAttribute(out, "iota_dimension", std::to_string(a.iota_dimension));
  }
  if (a.exponent_bits >= 0) AppendAttribute(out, "exponent_bits", std::to_string(a.exponent_bits));
  if (a.mantissa_bits >= 0) AppendAttribute(out, "mantissa_bits", std::to_string(a.mantissa_bits));
  if (a.dot) {
    if (!a.dot->lhs_batch.empty()) AppendIntsAttribute(out, "lhs_batch_dims", a.dot->lhs_batch);
    AppendIntsAttribute(out, "lhs_contracting_dims", a.dot->lhs_contracting);
    if (!a.dot->rhs_batch.empty()) AppendIntsAttribute(out, "rhs_batch_dims", a.dot->rhs_batch);
    AppendIntsAttribute(out, "rhs_contracting_dims", a.dot->rhs_contracting);
  }
  if (a.gather) {
    const GatherDimensions& g = *a.gather;
    AppendIntsAttribute(out, "offset_dims", g.offset_dims);
    AppendIntsAttribute(out, "collapsed_slice_dims", g.collapsed_slice_dims);
    AppendIntsAttribute(out, "start_index_map", g.start_index_map);
    if (!g.operand_batching_dims.empty()) {
      AppendIntsAttribute(out, "operand_batching_dims", g.operand_batching_dims);
    }
    if (!g.start_indices_batching_dims.empty()) {
      AppendIntsAttribute(out, "start_indices_batching_dims", g.start_indices_batching_dims);
    }
    AppendAttribute(out, "index_vector_dim", std::to_string(g.index_vector_dim));
    AppendIntsAttribute(out, "slice_sizes", g.slice_sizes);
    if (g.indices_are_sorted) AppendAttribute(out, "indices_are_sorted", "true");
  }
  if (a.scatter) {
    const ScatterDimensions& s = *a.scatter;
    AppendIntsAttribute(out, "update_window_dims", s.update_window_dims);
    AppendIntsAttribute(out, "inserted_window_dims", s.inserted_window_dims);
    AppendIntsAttribute(out, "scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims);
    if (!s.input_batching_dims.empty()) {
      AppendIntsAttribute(out, "input_batching_dims", s.input_batching_dims);
    }
    if (!s.scatter_indices_batching_dims.empty()) {
      AppendIntsAttribute(out, "scatter_indices_batching_dims", s.scatter_indices_batching_dims);
    }
    AppendAttribute(out, "index_vector_dim", std::to_string(s.index_vector_dim));
    if (s.indices_are_sorted) AppendAttribute(out, "indices_are_sorted", "true");
    if (s.unique_indices) AppendAttribute(out, "unique_indices", "true");
  }
  if (a.is_stable) AppendAttribute(out, "is_stable", "true");
  if (!a.custom_call_target.empty()) {
    AppendAttribute(out, "custom_call_target", Quote(a.custom_call_target));
  }
  // Called computations, grouped by attribute.
  auto callees = instruction.called_computations();
  for (size_t i = 0; i < callees.size();) {
    const std::string& name = a.call_attribute_names[i];
    size_t end = i;
    while (end < callees.size() && a.call_attribute_names[end] == name) ++end;
    bool list = IsListCallAttribute(name) || end - i > 1;
    std::string value = list ? "{" : "";
    for (size_t k = i; k < end; ++k) {
      if (k > i) value += ", ";
      value +=
          options.computation_name ? options.computation_name(*callees[k]) : callees[k]->name();
    }
    if (list) value += '}';
    AppendAttribute(out, name, value);
    i = end;
  }
  for (const OpaqueAttribute& attribute : a.opaque) {
    AppendAttribute(out, attribute.name, attribute.value);
  }
  if (options.print_non_semantic_attributes) {
    if (!a.sharding.empty()) AppendAttribute(out, "sharding", a.sharding);
    if (!a.frontend_attributes.empty()) {
      AppendAttribute(out, "frontend_attributes", a.frontend_attributes);
    }
    if (!a.metadata.empty()) AppendAttribute(out, "metadata", a.metadata);
    if (!a.backend_config.empty()) AppendAttribute(out, "backend_config", a.backend_config);
  }
}

std::string NameOf(const HloInstruction& instruction, const PrintOptions& options) {
  return options.instruction_name ? options.instruction_name(instruction) : instruction.name();
}

}  // namespace

std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options) {
  std::string out = NameOf(instruction, options);
  out += " = ";
  out += ShapeToString(instruction.shape());
  out += ' ';
  out += HloOpcodeName(instruction.opcode());
  out += '(';
  if (instruction.opcode() == HloOpcode::kParameter) {
    out += std::to_string(instruction.parameter_number());
  } else if (instruction.opcode() == HloOpcode::kConstant && instruction.literal() != nullptr) {
    out += instruction.literal()->ToString();
  } else {
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      if (i > 0) out += ", ";
      out += NameOf(*instruction.operand(i), options);
    }
  }
  out += ')';
  AppendTypedAttributes(out, instruction, options);
  return out;
}

std::string PrintComputation(const HloComputation& computation, const PrintOptions& options,
                             std::span<const HloInstruction* const> order) {
  std::string out =
      options.computation_name ? options.computation_name(computation) : computation.name();
  out += " {\n";
  auto print_line = [&](const HloInstruction& instruction) {
    out += "  ";
    if (&instruction == computation.root()) out += "ROOT ";
    out += PrintInstruction(instruction, options);
    out += '\n';
  };
  if (order.empty()) {
    for (const auto& instruction : computation.instructions()) print_line(*instruction);
  } else {
    for (const HloInstruction* instruction : order) print_line(*instruction);
  }
  out += "}\n";
  return out;
}

std::string PrintModule(const HloModule& module, const PrintOptions& options) {
  std::string out = "HloModule " + module.name();
  for (const OpaqueAttribute& attribute : module.header_attributes()) {
    AppendAttribute(out, attribute.name, attribute.value);
  }
  out += '\n';
  for (const auto& computation : module.computations()) {
    out += '\n';
    if (computation.get() == module.entry() && module.entry_is_explicit()) out += "ENTRY ";
    out += PrintComputation(*computation, options);
  }
  return out;
}

}  // namespace tilesmith::hlo
