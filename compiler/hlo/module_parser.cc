// The module parser's structure: header, computations, instructions and operand names.
// Shapes and literals are read by shape_reader.cc and literal_reader.cc, attributes by
// instruction_attributes.cc; module_verifier.cc checks calls and shapes.
#include "compiler/hlo/module_parser.h"

#include <algorithm>
#include <cctype>

#include "compiler/hlo/name_hash.h"
#include "compiler/hlo/parse_internal.h"

namespace tilesmith::hlo {

void NameTable::Clear() {
  // A table left large by a big computation is not swept for each small one after it.
  if (slots_.size() > 64 && size_ * 4 < slots_.size()) {
    slots_.assign(64, Slot{});
  } else {
    std::fill(slots_.begin(), slots_.end(), Slot{});
  }
  names_.clear();
  size_ = 0;
}

void NameTable::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
  size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.id_plus_one == 0) continue;
    size_t i = slot.hash & mask;
    while (slots_[i].id_plus_one != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

uint32_t NameTable::Hash(std::string_view name) { return static_cast<uint32_t>(HashName(name)); }

int64_t NameTable::Insert(std::string_view name, uint32_t hash, int64_t id) {
  if (static_cast<size_t>(id) >= names_.size()) names_.resize(id + 1);
  names_[id] = name;
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.id_plus_one == 0) {
      slot = {static_cast<uint32_t>(id + 1), hash};
      ++size_;
      return -1;
    }
    if (slot.hash == hash && names_[slot.id_plus_one - 1] == name) return slot.id_plus_one - 1;
  }
}

int64_t NameTable::Find(std::string_view name) const {
  if (slots_.empty()) return -1;
  uint32_t hash = Hash(name);
  size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.id_plus_one == 0) return -1;
    if (slot.hash == hash && names_[slot.id_plus_one - 1] == name) return slot.id_plus_one - 1;
  }
}

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
  size_t index = computation_positions_.size();
  if (auto [it, inserted] = computation_index_.emplace(name, index); !inserted) {
    return cursor_.Fail(name_position,
                        "computation '" + std::string(name) + "' is defined twice (first at " +
                            cursor_.LocationOf(computation_positions_[it->second]) + ")");
  }
  computation_positions_.push_back(name_position);
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
  current_source_ = &sources_.emplace_back();
  names_.Clear();
  deferring_ = false;
  deferred_.clear();
  deferred_operands_.clear();
  first_duplicate_ = SIZE_MAX;
  HloInstruction* root = nullptr;
  HloInstruction* last = nullptr;
  while (cursor_.Peek() != '}') {
    if (cursor_.AtEnd()) {
      return cursor_.Fail(name_position,
                          "computation '" + std::string(name) + "' is missing its closing '}'");
    }
    TS_RETURN_IF_ERROR(ParseInstruction(*computation, root, last));
  }
  cursor_.Consume('}');
  if (last == nullptr) {
    return cursor_.Fail(name_position, "computation '" + std::string(name) + "' is empty");
  }
  computation->set_root(root != nullptr ? root : last);
  TS_RETURN_IF_ERROR(ResolveDeferred(*computation));
  if (std::string problem = computation->IndexParameters(); !problem.empty()) {
    return cursor_.Fail(name_position, "in computation '" + std::string(name) + "': " + problem);
  }
  // Without a forward reference every operand comes before its users: no cycle.
  if (current_source_->forward_references) TS_RETURN_IF_ERROR(CheckAcyclic(*computation));
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

std::unexpected<Error> ModuleParser::InstructionLimitError(size_t position) const {
  Error error =
      cursor_.ErrorAt(position, "fusion has more than " + std::to_string(limits_.max_instructions) +
                                    " instructions (the limit; --max-instructions "
                                    "raises it)");
  error.code = ErrorCode::kResourceExhausted;
  return std::unexpected(std::move(error));
}

Status ModuleParser::ParseInstruction(HloComputation& computation, HloInstruction*& root,
                                      HloInstruction*& last) {
  cursor_.SkipSpace();
  size_t position = cursor_.position();
  if (instruction_count_ >= limits_.max_instructions) return InstructionLimitError(position);
  ++instruction_count_;
  bool is_root = cursor_.ConsumeWord("ROOT");
  TS_ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("an instruction name"));
  uint32_t name_hash = NameTable::Hash(name);
  names_.Prefetch(name_hash);
  TS_RETURN_IF_ERROR(cursor_.Expect('=', "'=' after instruction name '" + std::string(name) + "'"));
  std::optional<Shape> shape;
  if (NextIsShape(cursor_)) {
    TS_ASSIGN_OR_RETURN(shape, ReadShape(cursor_, 0, &layouts_));
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
  last = added;
  current_source_->positions.push_back(position);
  current_source_->shape_written.push_back(shape_written);
  current_source_->verified.push_back(0);
  if (is_root) {
    if (root != nullptr) {
      return cursor_.Fail(position, "computation '" + computation.name() +
                                        "' has a second ROOT ('" + std::string(name) + "' after '" +
                                        root->name() + "')");
    }
    root = added;
  }
  TS_RETURN_IF_ERROR(ParseOperands(*added, shape_written, position));
  size_t calls_before = calls_.size();
  while (cursor_.Consume(',')) TS_RETURN_IF_ERROR(ParseAttribute(*added));
  ResolveOrDefer(computation, *added);
  if (names_.Insert(name, name_hash, added->id()) >= 0 && first_duplicate_ == SIZE_MAX) {
    first_duplicate_ = static_cast<size_t>(added->id());
  }
  // Called computations are known only at the end; those instructions are checked then.
  if (calls_.size() == calls_before) VerifyWhileParsing(*added);
  if (!current_source_->verified.back()) {
    ++current_source_->unverified;
    ++unverified_;
  }
  return OkStatus();
}

Status ModuleParser::ParseOperands(HloInstruction& instruction, bool shape_written,
                                   size_t position) {
  operands_.clear();
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
      if (!shape_written) {
        return cursor_.Fail(position, "constant '" + instruction.name() +
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
      TS_ASSIGN_OR_RETURN(Shape shape, ReadShape(cursor_, 0, &layouts_));
      inline_operand_shapes_.push_back(
          {&instruction, static_cast<int64_t>(operands_.size()), std::move(shape), shape_position});
    }
    PendingOperand operand;
    cursor_.SkipSpace();
    operand.position = cursor_.position();
    TS_ASSIGN_OR_RETURN(operand.name, cursor_.ParseName("an operand name"));
    operands_.push_back(operand);
  } while (cursor_.Consume(','));
  return cursor_.Expect(')', "',' or ')' in the operand list");
}

// Operands defined earlier are linked now, while their instructions are in cache. From the
// first instruction that names a later one (or itself) on, every instruction waits for the
// computation's end, so that each value's users stay in text order.
void ModuleParser::ResolveOrDefer(HloComputation& computation, HloInstruction& instruction) {
  if (!deferring_) {
    operand_ids_.clear();
    for (const PendingOperand& operand : operands_) {
      int64_t id = names_.Find(operand.name);
      if (id < 0) break;
      operand_ids_.push_back(id);
    }
    if (operand_ids_.size() == operands_.size()) {
      for (int64_t id : operand_ids_) {
        instruction.AddOperand(computation.instructions()[id].get());
      }
      return;
    }
    deferring_ = true;
    current_source_->forward_references = true;
  }
  deferred_.push_back({&instruction, deferred_operands_.size(), operands_.size()});
  deferred_operands_.insert(deferred_operands_.end(), operands_.begin(), operands_.end());
}

Status ModuleParser::ResolveDeferred(HloComputation& computation) {
  if (first_duplicate_ != SIZE_MAX) {
    const HloInstruction& duplicate = *computation.instructions()[first_duplicate_];
    return cursor_.Fail(
        current_source_->positions[first_duplicate_],
        "instruction '" + duplicate.name() + "' is defined twice in '" + computation.name() + "'");
  }
  for (const DeferredInstruction& record : deferred_) {
    for (size_t i = 0; i < record.operand_count; ++i) {
      const PendingOperand& operand = deferred_operands_[record.first_operand + i];
      int64_t id = names_.Find(operand.name);
      if (id < 0) {
        return cursor_.Fail(operand.position, "unknown operand '" + std::string(operand.name) +
                                                  "' in computation '" + computation.name() + "'");
      }
      HloInstruction* resolved = computation.instructions()[id].get();
      if (resolved == record.instruction) {
        return cursor_.Fail(operand.position,
                            "instruction '" + record.instruction->name() + "' uses itself");
      }
      record.instruction->AddOperand(resolved);
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

}  // namespace tilesmith::hlo
