// The module parser's checks: called computations exist and form no cycle, and every
// instruction's shape agrees with its operands (a shape left out is inferred). Most
// instructions are checked while they are parsed; the rest (those that call computations,
// use later names or failed) are checked at the end, in the order that decides which error
// a bad module reports: callees first, each computation in post-order.
#include <string>

#include "compiler/hlo/module_parser.h"
#include "compiler/hlo/shape_inference.h"

namespace tilesmith::hlo {
namespace {

// `type=` equal to the default for the operand type says nothing: drop it so that both
// spellings print (and fingerprint) the same.
void NormalizeComparisonType(HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kCompare || instruction.operand_count() == 0) return;
  ComparisonType type = instruction.attributes().comparison_type;
  PrimitiveType operand_type = instruction.operand(0)->shape().element_type();
  ComparisonType natural = IsFloatingPoint(operand_type) || IsComplex(operand_type)
                               ? ComparisonType::kFloat
                           : IsSignedIntegral(operand_type) ? ComparisonType::kSigned
                                                            : ComparisonType::kUnsigned;
  if (type == natural) instruction.mutable_attributes().comparison_type = ComparisonType::kDefault;
}

// Infers the shape of `instruction` from its operands and checks it against the written
// one, or stores it when none was written. The message has no location.
Status VerifyShape(HloInstruction& instruction, bool written) {
  NormalizeComparisonType(instruction);
  if (written && ElementwiseShapeHolds(instruction, instruction.shape())) return OkStatus();
  Expected<Shape> inferred = InferShape(instruction, written ? &instruction.shape() : nullptr);
  if (!inferred) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "'" + instruction.name() + "' (" +
                         std::string(HloOpcodeName(instruction.opcode())) +
                         "): " + inferred.error().message);
  }
  if (!written) {
    instruction.mutable_shape() = std::move(*inferred);
    return OkStatus();
  }
  if (!instruction.shape().EqualsIgnoringLayout(*inferred)) {
    return MakeError(ErrorCode::kInvalidArgument, "'" + instruction.name() + "' is declared as " +
                                                      ShapeToStringNoLayout(instruction.shape()) +
                                                      " but its operands give " +
                                                      ShapeToStringNoLayout(*inferred));
  }
  return OkStatus();
}

}  // namespace

// Checked now only if its operands are linked and checked: then the result is the one the
// final pass would get. A failure is not reported here; the final pass finds it again and
// reports the error the module's check order puts first.
void ModuleParser::VerifyWhileParsing(HloInstruction& instruction) {
  SourceInfo& source = *current_source_;
  if (instruction.operand_count() != static_cast<int64_t>(operands_.size())) return;
  for (const HloInstruction* operand : instruction.operands()) {
    if (!source.verified[operand->id()]) return;
  }
  int64_t id = instruction.id();
  if (VerifyShape(instruction, source.shape_written[id])) source.verified[id] = 1;
}

Status ModuleParser::ResolveCalls() {
  for (const PendingCall& call : calls_) {
    auto it = computation_index_.find(call.name);
    if (it == computation_index_.end()) {
      return cursor_.Fail(call.position, "unknown computation '" + std::string(call.name) + "'");
    }
    call.instruction->AddCalledComputation(module_->computations()[it->second].get());
    sources_[call.caller].callees.push_back(it->second);
  }
  // Computations may not call themselves, directly or through others: an iterative
  // three-colour DFS over the call graph, callees taken last first.
  enum class Mark : uint8_t { kWhite, kGrey, kBlack };
  std::vector<Mark> marks(sources_.size(), Mark::kWhite);
  struct Frame {
    size_t computation;
    size_t remaining;  // callees not yet taken, from the back
  };
  std::vector<Frame> stack;
  for (size_t start = 0; start < sources_.size(); ++start) {
    if (marks[start] != Mark::kWhite) continue;
    marks[start] = Mark::kGrey;
    stack.push_back({start, sources_[start].callees.size()});
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.remaining == 0) {
        marks[frame.computation] = Mark::kBlack;
        stack.pop_back();
        continue;
      }
      size_t next = sources_[frame.computation].callees[--frame.remaining];
      Mark& mark = marks[next];
      if (mark == Mark::kGrey) {
        return cursor_.Fail(
            computation_positions_[next],
            "computation '" + module_->computations()[next]->name() + "' calls itself");
      }
      if (mark == Mark::kWhite) {
        mark = Mark::kGrey;
        stack.push_back({next, sources_[next].callees.size()});
      }
    }
  }
  return OkStatus();
}

// Every computation once, each after the computations it calls: the order of
// `HloModule::CalleesPostOrder` applied to each computation in text order.
std::vector<size_t> ModuleParser::CalleesFirstOrder() const {
  std::vector<size_t> order;
  order.reserve(sources_.size());
  std::vector<char> visited(sources_.size(), 0);
  struct Frame {
    size_t computation;
    size_t next;  // next callee to visit
  };
  std::vector<Frame> stack;
  for (size_t top = 0; top < sources_.size(); ++top) {
    if (visited[top]) continue;
    visited[top] = 1;
    stack.push_back({top, 0});
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const std::vector<size_t>& callees = sources_[frame.computation].callees;
      if (frame.next == callees.size()) {
        order.push_back(frame.computation);
        stack.pop_back();
        continue;
      }
      size_t callee = callees[frame.next++];
      if (!visited[callee]) {
        visited[callee] = 1;
        stack.push_back({callee, 0});
      }
    }
  }
  return order;
}

Status ModuleParser::InferAndVerifyShapes() {
  if (unverified_ > 0) {
    for (size_t index : CalleesFirstOrder()) {
      SourceInfo& source = sources_[index];
      if (source.unverified == 0) continue;
      HloComputation& computation = *module_->computations()[index];
      auto instruction = [&](int64_t id) { return computation.instructions()[id].get(); };
      // Text order is a valid order when no name is used before its definition; the
      // post-order below decides which error comes first, if there is one.
      if (!source.forward_references) {
        bool failed = false;
        for (int64_t id = 0; id < computation.instruction_count() && !failed; ++id) {
          if (source.verified[id]) continue;
          failed = !VerifyShape(*instruction(id), source.shape_written[id]);
          if (!failed) source.verified[id] = 1;
        }
        if (!failed) continue;
      }
      for (const HloInstruction* node : computation.PostOrder()) {
        int64_t id = node->id();
        if (source.verified[id]) continue;
        Status status = VerifyShape(*instruction(id), source.shape_written[id]);
        if (!status) return cursor_.Fail(source.positions[id], status.error().message);
        source.verified[id] = 1;
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

}  // namespace tilesmith::hlo
