// The attributes of an HLO instruction (`dimensions={1}`, `to_apply=add`, `metadata={…}`):
// typed ones are read into HloAttributes, the rest kept as text.
#include "compiler/hlo/module_parser.h"
#include "compiler/hlo/parse_internal.h"

namespace tilesmith::hlo {
namespace {

// Attributes whose value names computations; the list ones take `{a, b}`.
bool IsCallAttribute(std::string_view name, HloOpcode opcode) {
  if (name == "select" || name == "scatter") return opcode == HloOpcode::kSelectAndScatter;
  return name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
         name == "true_computation" || name == "false_computation" ||
         name == "branch_computations" || name == "called_computations";
}

}  // namespace

Status ModuleParser::ParseTypedAttribute(HloInstruction& instruction, std::string_view name,
                                         bool& handled) {
  HloAttributes& attributes = instruction.mutable_attributes();
  HloOpcode opcode = instruction.opcode();
  handled = true;
  auto dot = [&]() -> DotDimensions& {
    if (!attributes.dot) attributes.dot.emplace();
    return *attributes.dot;
  };
  auto gather = [&]() -> GatherDimensions& {
    if (!attributes.gather) attributes.gather.emplace();
    return *attributes.gather;
  };
  auto scatter = [&]() -> ScatterDimensions& {
    if (!attributes.scatter) attributes.scatter.emplace();
    return *attributes.scatter;
  };
  auto ints = [&](std::vector<int64_t>& out) -> Status {
    TS_ASSIGN_OR_RETURN(out, cursor_.ParseIntList(name));
    return OkStatus();
  };
  if (name == "dimensions") return ints(attributes.dimensions);
  if (name == "dynamic_slice_sizes") return ints(attributes.dynamic_slice_sizes);
  if (name == "slice") {
    TS_RETURN_IF_ERROR(cursor_.Expect('{', "'{' to start the slice"));
    std::vector<SliceDim> dims;
    if (!cursor_.Consume('}')) {
      do {
        TS_ASSIGN_OR_RETURN(SliceDim dim, ReadSliceDim(cursor_));
        dims.push_back(dim);
      } while (cursor_.Consume(','));
      TS_RETURN_IF_ERROR(cursor_.Expect('}', "',' or '}' in the slice"));
    }
    attributes.slice = std::move(dims);
    return OkStatus();
  }
  if (name == "padding" && opcode == HloOpcode::kPad) {
    TS_ASSIGN_OR_RETURN(attributes.padding, ReadPadding(cursor_));
    return OkStatus();
  }
  if (name == "window") {
    TS_ASSIGN_OR_RETURN(attributes.window, ReadWindow(cursor_));
    return OkStatus();
  }
  if (name == "direction") {
    size_t at = (cursor_.SkipSpace(), cursor_.position());
    TS_ASSIGN_OR_RETURN(std::string_view value, cursor_.ParseName("a comparison direction"));
    attributes.direction = ParseComparisonDirection(value);
    if (!attributes.direction) {
      return cursor_.Fail(at, "unknown comparison direction '" + std::string(value) +
                                  "' (expected EQ, NE, LT, LE, GT or GE)");
    }
    return OkStatus();
  }
  if (name == "type" && opcode == HloOpcode::kCompare) {
    size_t at = (cursor_.SkipSpace(), cursor_.position());
    TS_ASSIGN_OR_RETURN(std::string_view value, cursor_.ParseName("a comparison type"));
    std::optional<ComparisonType> type = ParseComparisonType(value);
    if (!type) {
      return cursor_.Fail(at, "unknown comparison type '" + std::string(value) +
                                  "' (expected FLOAT, TOTALORDER, SIGNED or UNSIGNED)");
    }
    attributes.comparison_type = *type;
    return OkStatus();
  }
  if (name == "kind" && opcode == HloOpcode::kFusion) {
    size_t at = (cursor_.SkipSpace(), cursor_.position());
    TS_ASSIGN_OR_RETURN(std::string_view value, cursor_.ParseName("a fusion kind"));
    attributes.fusion_kind = ParseFusionKind(value);
    if (!attributes.fusion_kind) {
      return cursor_.Fail(at, "unknown fusion kind '" + std::string(value) +
                                  "' (expected kLoop, kInput, kOutput or kCustom)");
    }
    return OkStatus();
  }
  auto int_value = [&](int64_t& out) -> Status {
    TS_ASSIGN_OR_RETURN(out, cursor_.ParseInt(name));
    return OkStatus();
  };
  auto bool_value = [&](bool& out) -> Status {
    TS_ASSIGN_OR_RETURN(out, cursor_.ParseBool(name));
    return OkStatus();
  };
  if (name == "index" && opcode == HloOpcode::kGetTupleElement) {
    return int_value(attributes.tuple_index);
  }
  if (name == "iota_dimension") return int_value(attributes.iota_dimension);
  if (name == "exponent_bits") return int_value(attributes.exponent_bits);
  if (name == "mantissa_bits") return int_value(attributes.mantissa_bits);
  if (name == "is_stable") return bool_value(attributes.is_stable);
  if (name == "lhs_batch_dims") return ints(dot().lhs_batch);
  if (name == "lhs_contracting_dims") return ints(dot().lhs_contracting);
  if (name == "rhs_batch_dims") return ints(dot().rhs_batch);
  if (name == "rhs_contracting_dims") return ints(dot().rhs_contracting);
  if (opcode == HloOpcode::kGather) {
    if (name == "offset_dims") return ints(gather().offset_dims);
    if (name == "collapsed_slice_dims") return ints(gather().collapsed_slice_dims);
    if (name == "start_index_map") return ints(gather().start_index_map);
    if (name == "operand_batching_dims") return ints(gather().operand_batching_dims);
    if (name == "start_indices_batching_dims") return ints(gather().start_indices_batching_dims);
    if (name == "slice_sizes") return ints(gather().slice_sizes);
    if (name == "index_vector_dim") return int_value(gather().index_vector_dim);
    if (name == "indices_are_sorted") return bool_value(gather().indices_are_sorted);
  }
  if (opcode == HloOpcode::kScatter) {
    if (name == "update_window_dims") return ints(scatter().update_window_dims);
    if (name == "inserted_window_dims") return ints(scatter().inserted_window_dims);
    if (name == "scatter_dims_to_operand_dims") {
      return ints(scatter().scatter_dims_to_operand_dims);
    }
    if (name == "input_batching_dims") return ints(scatter().input_batching_dims);
    if (name == "scatter_indices_batching_dims") {
      return ints(scatter().scatter_indices_batching_dims);
    }
    if (name == "index_vector_dim") return int_value(scatter().index_vector_dim);
    if (name == "indices_are_sorted") return bool_value(scatter().indices_are_sorted);
    if (name == "unique_indices") return bool_value(scatter().unique_indices);
  }
  if (name == "custom_call_target") {
    TS_ASSIGN_OR_RETURN(attributes.custom_call_target, cursor_.ParseQuotedString(name));
    return OkStatus();
  }
  if (IsCallAttribute(name, opcode)) {
    auto add_call = [&]() -> Status {
      cursor_.SkipSpace();
      size_t at = cursor_.position();
      TS_ASSIGN_OR_RETURN(std::string_view callee, cursor_.ParseName("a computation name"));
      calls_.push_back({&instruction, sources_.size() - 1, callee, at});
      attributes.call_attribute_names.emplace_back(name);
      return OkStatus();
    };
    if (cursor_.Consume('{')) {
      if (!cursor_.Consume('}')) {
        do {
          TS_RETURN_IF_ERROR(add_call());
        } while (cursor_.Consume(','));
        TS_RETURN_IF_ERROR(cursor_.Expect('}', "',' or '}' in the computation list"));
      }
      return OkStatus();
    }
    return add_call();
  }
  handled = false;
  return OkStatus();
}

Status ModuleParser::ParseAttribute(HloInstruction& instruction) {
  TS_ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("an attribute name"));
  TS_RETURN_IF_ERROR(cursor_.Expect('=', "'=' after attribute '" + std::string(name) + "'"));
  bool handled = false;
  TS_RETURN_IF_ERROR(ParseTypedAttribute(instruction, name, handled));
  if (handled) return OkStatus();
  TS_ASSIGN_OR_RETURN(std::string_view value, cursor_.ParseRawValue(name));
  HloAttributes& attributes = instruction.mutable_attributes();
  if (name == "metadata") {
    attributes.metadata = value;
  } else if (name == "backend_config") {
    attributes.backend_config = value;
  } else if (name == "frontend_attributes") {
    attributes.frontend_attributes = value;
  } else if (name == "sharding") {
    attributes.sharding = value;
  } else {
    attributes.opaque.push_back({std::string(name), std::string(value)});
  }
  return OkStatus();
}

}  // namespace tilesmith::hlo
