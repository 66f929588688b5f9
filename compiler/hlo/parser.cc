// The HLO module parser: header, computations, instructions and their attributes. Shapes
// and literals are read by shape_reader.cc and literal_reader.cc.
#include "compiler/hlo/parser.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "compiler/hlo/parse_internal.h"
#include "compiler/hlo/shape_inference.h"

namespace tilesmith::hlo {
namespace {

struct PendingOperand {
  std::string_view name;
  size_t position;
};

// An instruction whose operands are still names; they are resolved when its computation
// closes (operands may be defined later in the text). Its operands are the range
// [first_operand, first_operand + operand_count) of the computation's operand list.
struct PendingInstruction {
  HloInstruction* instruction;
  size_t position;
  bool shape_written;
  size_t first_operand;
  size_t operand_count;
};

struct InlineOperandShape {
  const HloInstruction* instruction;
  int64_t operand_index;
  Shape shape;
  size_t position;
};

struct PendingCall {
  HloInstruction* instruction;
  std::string_view name;
  size_t position;
};

// Attributes whose value names computations; the list ones take `{a, b}`.
bool IsCallAttribute(std::string_view name, HloOpcode opcode) {
  if (name == "select" || name == "scatter") return opcode == HloOpcode::kSelectAndScatter;
  return name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
         name == "true_computation" || name == "false_computation" ||
         name == "branch_computations" || name == "called_computations";
}

// `type=` equal to the default for the operand type says nothing: drop it so that both
// spellings print (and fingerprint) the same.
void NormalizeComparisonType(HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kCompare || instruction.operand_count() == 0) return;
  ComparisonType& type = instruction.mutable_attributes().comparison_type;
  PrimitiveType operand_type = instruction.operand(0)->shape().element_type();
  ComparisonType natural = IsFloatingPoint(operand_type) || IsComplex(operand_type)
                               ? ComparisonType::kFloat
                           : IsSignedIntegral(operand_type) ? ComparisonType::kSigned
                                                            : ComparisonType::kUnsigned;
  if (type == natural) type = ComparisonType::kDefault;
}

class ModuleParser {
 public:
  ModuleParser(std::string_view text, std::string_view file_name) : cursor_(text, file_name) {}

  Expected<std::unique_ptr<HloModule>> Parse();

 private:
  Status ParseHeader();
  Expected<bool> SkipStackFrameTable();
  Status ParseComputation();
  Status ParseInstruction(HloComputation& computation, std::vector<PendingInstruction>& pending,
                          HloInstruction*& root);
  Status ParseOperands(HloInstruction& instruction, PendingInstruction& pending);
  Status ParseAttribute(HloInstruction& instruction);
  Status ParseTypedAttribute(HloInstruction& instruction, std::string_view name,
                             size_t name_position, bool& handled);
  Status ResolveOperands(HloComputation& computation, std::vector<PendingInstruction>& pending);
  Status CheckAcyclic(const HloComputation& computation);
  Status ResolveCalls();
  Status InferAndVerifyShapes();

  TextCursor cursor_;
  std::unique_ptr<HloModule> module_;
  std::vector<PendingCall> calls_;
  // Where each instruction starts and whether its shape was written, by computation and
  // instruction id.
  struct SourceInfo {
    std::vector<size_t> positions;
    std::vector<char> shape_written;
  };
  std::unordered_map<const HloComputation*, SourceInfo> sources_;
  SourceInfo* current_source_ = nullptr;
  std::unordered_map<std::string_view, size_t> computation_positions_;
  std::vector<InlineOperandShape> inline_operand_shapes_;
  std::vector<PendingOperand> operands_;  // of the computation being parsed
};

Expected<std::unique_ptr<HloModule>> ModuleParser::Parse() {
  TS_RETURN_IF_ERROR(ParseHeader());
  while (!cursor_.AtEnd()) {
    TS_ASSIGN_OR_RETURN(bool skipped, SkipStackFrameTable());
    if (!skipped) TS_RETURN_IF_ERROR(ParseComputation());
  }
  if (module_->computations().empty()) {
    return cursor_.FailHere("expected at least one computation");
  }
  if (module_->entry() == nullptr) module_->set_entry(module_->computations().back().get());
  TS_RETURN_IF_ERROR(ResolveCalls());
  TS_RETURN_IF_ERROR(InferAndVerifyShapes());
  return std::move(module_);
}

Status ModuleParser::ParseHeader() {
  if (!cursor_.ConsumeWord("HloModule")) {
    module_ = std::make_unique<HloModule>("module");
    return OkStatus();
  }
  TS_ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("the module name"));
  module_ = std::make_unique<HloModule>(std::string(name));
  while (cursor_.Consume(',')) {
    TS_ASSIGN_OR_RETURN(std::string_view key, cursor_.ParseName("a module attribute"));
    TS_RETURN_IF_ERROR(cursor_.Expect('=', "'=' after '" + std::string(key) + "'"));
    TS_ASSIGN_OR_RETURN(std::string_view value, cursor_.ParseRawValue(key));
    module_->mutable_header_attributes().push_back({std::string(key), std::string(value)});
  }
  return OkStatus();
}

// Current XLA dumps list source locations after the header, in tables of numbered entries
// (`FileNames` / `1 "model.py"`, `StackFrames` / `1 {file_location_id=1 …}`). They only
// feed metadata, which the canonical form drops, so they are read over, not kept.
Expected<bool> ModuleParser::SkipStackFrameTable() {
  bool is_table = false;
  for (std::string_view table : {"FileNames", "FunctionNames", "FileLocations", "StackFrames"}) {
    if (cursor_.ConsumeWord(table)) {
      is_table = true;
      break;
    }
  }
  if (!is_table) return false;
  while (std::isdigit(static_cast<unsigned char>(cursor_.Peek()))) {
    TS_RETURN_IF_ERROR(cursor_.ParseInt("a table entry's id"));
    TS_RETURN_IF_ERROR(cursor_.ParseRawValue("a table entry"));
  }
  return true;
}

Status ModuleParser::ParseComputation() {
  bool is_entry = cursor_.ConsumeWord("ENTRY");
  size_t name_position = (cursor_.SkipSpace(), cursor_.position());
  TS_ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("a computation name"));
  if (auto [it, inserted] = computation_positions_.emplace(name, name_position); !inserted) {
    return cursor_.Fail(name_position, "computation '" + std::string(name) +
                                           "' is defined twice (first at " +
                                           cursor_.LocationOf(it->second) + ")");
  }
  // An optional program shape `(p0: f32[], …) -> f32[]` repeats what the body says.
  if (cursor_.Peek() == '(') {
    TS_RETURN_IF_ERROR(cursor_.ParseRawValue("the computation signature"));
    if (!(cursor_.Consume('-') && cursor_.PeekRaw() == '>')) {
      return cursor_.FailHere("expected '->' and the result shape after the signature");
    }
    cursor_.set_position(cursor_.position() + 1);
    TS_RETURN_IF_ERROR(ReadShape(cursor_));
  }
  TS_RETURN_IF_ERROR(cursor_.Expect('{', "'{' to open computation '" + std::string(name) + "'"));
  auto computation = std::make_unique<HloComputation>(std::string(name));
  current_source_ = &sources_[computation.get()];
  std::vector<PendingInstruction> pending;
  HloInstruction* root = nullptr;
  while (cursor_.Peek() != '}') {
    if (cursor_.AtEnd()) {
      return cursor_.Fail(name_position,
                          "computation '" + std::string(name) + "' is missing its closing '}'");
    }
    TS_RETURN_IF_ERROR(ParseInstruction(*computation, pending, root));
  }
  cursor_.Consume('}');
  if (pending.empty()) {
    return cursor_.Fail(name_position, "computation '" + std::string(name) + "' is empty");
  }
  computation->set_root(root != nullptr ? root : pending.back().instruction);
  TS_RETURN_IF_ERROR(ResolveOperands(*computation, pending));
  operands_.clear();
  if (std::string problem = computation->IndexParameters(); !problem.empty()) {
    return cursor_.Fail(name_position, "in computation '" + std::string(name) + "': " + problem);
  }
  TS_RETURN_IF_ERROR(CheckAcyclic(*computation));
  HloComputation* added = module_->AddComputation(std::move(computation));
  if (is_entry) {
    if (module_->entry_is_explicit()) {
      return cursor_.Fail(name_position, "a module has one ENTRY computation; '" +
                                             module_->entry()->name() + "' came first");
    }
    module_->set_entry(added);
    module_->set_entry_is_explicit(true);
  }
  return OkStatus();
}

Status ModuleParser::ParseInstruction(HloComputation& computation,
                                      std::vector<PendingInstruction>& pending,
                                      HloInstruction*& root) {
  cursor_.SkipSpace();
  size_t position = cursor_.position();
  bool is_root = cursor_.ConsumeWord("ROOT");
  TS_ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("an instruction name"));
  TS_RETURN_IF_ERROR(cursor_.Expect('=', "'=' after instruction name '" + std::string(name) + "'"));
  std::optional<Shape> shape;
  if (NextIsShape(cursor_)) {
    TS_ASSIGN_OR_RETURN(shape, ReadShape(cursor_));
  }
  size_t opcode_position = (cursor_.SkipSpace(), cursor_.position());
  TS_ASSIGN_OR_RETURN(std::string_view opcode_name, cursor_.ParseName("an opcode"));
  std::optional<HloOpcode> opcode = ParseHloOpcode(opcode_name);
  if (!opcode) {
    return cursor_.Fail(opcode_position, "unknown opcode '" + std::string(opcode_name) + "'");
  }
  bool shape_written = shape.has_value();
  auto instruction = std::make_unique<HloInstruction>(*opcode, std::string(name),
                                                      shape_written ? std::move(*shape) : Shape());
  HloInstruction* added = computation.AddInstruction(std::move(instruction));
  current_source_->positions.push_back(position);
  current_source_->shape_written.push_back(shape_written);
  PendingInstruction record{added, position, shape_written, operands_.size(), 0};
  if (is_root) {
    if (root != nullptr) {
      return cursor_.Fail(position, "computation '" + computation.name() +
                                        "' has a second ROOT ('" + std::string(name) + "' after '" +
                                        root->name() + "')");
    }
    root = added;
  }
  TS_RETURN_IF_ERROR(ParseOperands(*added, record));
  while (cursor_.Consume(',')) TS_RETURN_IF_ERROR(ParseAttribute(*added));
  pending.push_back(std::move(record));
  return OkStatus();
}

Status ModuleParser::ParseOperands(HloInstruction& instruction, PendingInstruction& pending) {
  TS_RETURN_IF_ERROR(cursor_.Expect('(', "'(' after the opcode"));
  switch (instruction.opcode()) {
    case HloOpcode::kParameter: {
      size_t at = cursor_.position();
      TS_ASSIGN_OR_RETURN(int64_t number, cursor_.ParseInt("the parameter number"));
      if (number < 0) return cursor_.Fail(at, "parameter numbers must be >= 0");
      instruction.mutable_attributes().parameter_number = number;
      return cursor_.Expect(')', "')' after the parameter number");
    }
    case HloOpcode::kConstant: {
      if (!pending.shape_written) {
        return cursor_.Fail(pending.position, "constant '" + instruction.name() +
                                                  "' needs its shape written before 'constant'");
      }
      TS_ASSIGN_OR_RETURN(Literal literal, ReadLiteral(cursor_, instruction.shape()));
      instruction.set_literal(std::make_unique<Literal>(std::move(literal)));
      return cursor_.Expect(')', "')' after the constant's value");
    }
    default:
      break;
  }
  if (cursor_.Consume(')')) return OkStatus();
  do {
    if (NextIsShape(cursor_)) {
      size_t shape_position = cursor_.position();
      TS_ASSIGN_OR_RETURN(Shape shape, ReadShape(cursor_));
      inline_operand_shapes_.push_back({&instruction, static_cast<int64_t>(pending.operand_count),
                                        std::move(shape), shape_position});
    }
    PendingOperand operand;
    cursor_.SkipSpace();
    operand.position = cursor_.position();
    TS_ASSIGN_OR_RETURN(operand.name, cursor_.ParseName("an operand name"));
    operands_.push_back(operand);
    ++pending.operand_count;
  } while (cursor_.Consume(','));
  return cursor_.Expect(')', "',' or ')' in the operand list");
}

Status ModuleParser::ParseTypedAttribute(HloInstruction& instruction, std::string_view name,
                                         size_t name_position, bool& handled) {
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
      calls_.push_back({&instruction, callee, at});
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
  (void)name_position;
  handled = false;
  return OkStatus();
}

Status ModuleParser::ParseAttribute(HloInstruction& instruction) {
  cursor_.SkipSpace();
  size_t name_position = cursor_.position();
  TS_ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("an attribute name"));
  TS_RETURN_IF_ERROR(cursor_.Expect('=', "'=' after attribute '" + std::string(name) + "'"));
  bool handled = false;
  TS_RETURN_IF_ERROR(ParseTypedAttribute(instruction, name, name_position, handled));
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

Status ModuleParser::ResolveOperands(HloComputation& computation,
                                     std::vector<PendingInstruction>& pending) {
  std::unordered_map<std::string_view, HloInstruction*> by_name;
  by_name.reserve(pending.size() * 2);
  for (const PendingInstruction& record : pending) {
    auto [it, inserted] = by_name.emplace(record.instruction->name(), record.instruction);
    if (!inserted) {
      return cursor_.Fail(record.position, "instruction '" + record.instruction->name() +
                                               "' is defined twice in '" + computation.name() +
                                               "'");
    }
  }
  for (PendingInstruction& record : pending) {
    for (size_t i = 0; i < record.operand_count; ++i) {
      const PendingOperand& operand = operands_[record.first_operand + i];
      auto it = by_name.find(operand.name);
      if (it == by_name.end()) {
        return cursor_.Fail(operand.position, "unknown operand '" + std::string(operand.name) +
                                                  "' in computation '" + computation.name() + "'");
      }
      if (it->second == record.instruction) {
        return cursor_.Fail(operand.position,
                            "instruction '" + record.instruction->name() + "' uses itself");
      }
      record.instruction->AddOperand(it->second);
    }
  }
  return OkStatus();
}

Status ModuleParser::CheckAcyclic(const HloComputation& computation) {
  // Iterative three-colour DFS; a grey node reached again closes a cycle.
  enum class Mark : uint8_t { kWhite, kGrey, kBlack };
  std::vector<Mark> marks(computation.instructions().size(), Mark::kWhite);
  for (const auto& start : computation.instructions()) {
    if (marks[start->id()] != Mark::kWhite) continue;
    std::vector<std::pair<const HloInstruction*, int64_t>> stack{{start.get(), 0}};
    marks[start->id()] = Mark::kGrey;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operand_count()) {
        const HloInstruction* operand = node->operand(next++);
        Mark& mark = marks[operand->id()];
        if (mark == Mark::kGrey) {
          return cursor_.Fail(current_source_->positions[operand->id()],
                              "instruction '" + operand->name() + "' depends on itself through '" +
                                  node->name() + "' (a cycle)");
        }
        if (mark == Mark::kWhite) {
          mark = Mark::kGrey;
          stack.emplace_back(operand, 0);
        }
        continue;
      }
      marks[node->id()] = Mark::kBlack;
      stack.pop_back();
    }
  }
  return OkStatus();
}

Status ModuleParser::ResolveCalls() {
  std::unordered_map<std::string_view, HloComputation*> by_name;
  for (const auto& computation : module_->computations()) {
    by_name.emplace(computation->name(), computation.get());
  }
  for (const PendingCall& call : calls_) {
    auto it = by_name.find(call.name);
    if (it == by_name.end()) {
      return cursor_.Fail(call.position, "unknown computation '" + std::string(call.name) + "'");
    }
    call.instruction->AddCalledComputation(it->second);
  }
  // Computations may not call themselves, directly or through others: an iterative
  // three-colour DFS over the call graph.
  enum class Mark : uint8_t { kWhite, kGrey, kBlack };
  std::unordered_map<const HloComputation*, Mark> marks;
  auto callees_of = [](const HloComputation* computation) {
    std::vector<const HloComputation*> callees;
    for (const auto& instruction : computation->instructions()) {
      for (const HloComputation* callee : instruction->called_computations()) {
        callees.push_back(callee);
      }
    }
    return callees;
  };
  for (const auto& start : module_->computations()) {
    if (marks[start.get()] != Mark::kWhite) continue;
    std::vector<std::pair<const HloComputation*, std::vector<const HloComputation*>>> stack;
    marks[start.get()] = Mark::kGrey;
    stack.emplace_back(start.get(), callees_of(start.get()));
    while (!stack.empty()) {
      auto& [computation, pending] = stack.back();
      if (pending.empty()) {
        marks[computation] = Mark::kBlack;
        stack.pop_back();
        continue;
      }
      const HloComputation* next = pending.back();
      pending.pop_back();
      Mark& mark = marks[next];
      if (mark == Mark::kGrey) {
        return cursor_.Fail(computation_positions_[next->name()],
                            "computation '" + next->name() + "' calls itself");
      }
      if (mark == Mark::kWhite) {
        mark = Mark::kGrey;
        stack.emplace_back(next, callees_of(next));
      }
    }
  }
  return OkStatus();
}

Status ModuleParser::InferAndVerifyShapes() {
  std::unordered_set<const HloComputation*> done;
  for (const auto& top : module_->computations()) {
    for (const HloComputation* computation : HloModule::CalleesPostOrder(top.get())) {
      if (!done.insert(computation).second) continue;
      const SourceInfo& source = sources_.at(computation);
      for (const HloInstruction* node : computation->PostOrder()) {
        auto* instruction = const_cast<HloInstruction*>(node);
        bool written = source.shape_written[instruction->id()];
        size_t position = source.positions[instruction->id()];
        NormalizeComparisonType(*instruction);
        Expected<Shape> inferred =
            InferShape(*instruction, written ? &instruction->shape() : nullptr);
        if (!inferred) {
          return cursor_.Fail(position, "'" + instruction->name() + "' (" +
                                            std::string(HloOpcodeName(instruction->opcode())) +
                                            "): " + inferred.error().message);
        }
        if (!written) {
          instruction->mutable_shape() = std::move(*inferred);
          continue;
        }
        if (!instruction->shape().EqualsIgnoringLayout(*inferred)) {
          return cursor_.Fail(position, "'" + instruction->name() + "' is declared as " +
                                            ShapeToStringNoLayout(instruction->shape()) +
                                            " but its operands give " +
                                            ShapeToStringNoLayout(*inferred));
        }
      }
    }
  }
  for (const InlineOperandShape& written : inline_operand_shapes_) {
    const Shape& actual = written.instruction->operand(written.operand_index)->shape();
    if (!written.shape.EqualsIgnoringLayout(actual)) {
      return cursor_.Fail(written.position,
                          "operand written as " + ShapeToStringNoLayout(written.shape) + " but '" +
                              written.instruction->operand(written.operand_index)->name() +
                              "' is " + ShapeToStringNoLayout(actual));
    }
  }
  return OkStatus();
}

}  // namespace

Expected<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view file_name) {
  ModuleParser parser(text, file_name);
  return parser.Parse();
}

Expected<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return MakeError(ErrorCode::kIo, "cannot open '" + path + "'");
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return MakeError(ErrorCode::kIo, "cannot read '" + path + "'");
  return ParseHloModule(contents.str(), path);
}

}  // namespace tilesmith::hlo
