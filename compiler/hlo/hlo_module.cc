#include "compiler/hlo/hlo_module.h"

#include <algorithm>
#include <unordered_set>

namespace tilesmith::hlo {

void HloInstruction::AddOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  // An instruction's operands are added together, so a repeated operand finds this
  // instruction at the back of its users: the check stays O(1) for heavily used values.
  if (operand->users_.empty() || operand->users_.back() != this) operand->users_.push_back(this);
}

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  instruction->set_id(static_cast<int64_t>(instructions_.size()));
  if (instruction->opcode() == HloOpcode::kParameter) {
    parameter_instructions_.push_back(instruction.get());
  }
  instructions_.push_back(std::move(instruction));
  return instructions_.back().get();
}

std::string HloComputation::IndexParameters() {
  // Only the parameters are visited (recorded as they were added, in order): no pass over
  // every instruction.
  parameters_.clear();
  int64_t count = static_cast<int64_t>(parameter_instructions_.size());
  for (HloInstruction* instruction : parameter_instructions_) {
    int64_t number = instruction->parameter_number();
    if (number < 0) return "parameter '" + instruction->name() + "' has no number";
    if (number >= count) {
      return "parameter '" + instruction->name() + "' is number " + std::to_string(number) +
             " but the computation has " + std::to_string(count) + " parameters (0.." +
             std::to_string(count - 1) + ")";
    }
    if (number >= static_cast<int64_t>(parameters_.size())) {
      parameters_.resize(number + 1, nullptr);
    }
    if (parameters_[number] != nullptr) {
      return "parameter number " + std::to_string(number) + " is used by both '" +
             parameters_[number]->name() + "' and '" + instruction->name() + "'";
    }
    parameters_[number] = instruction;
  }
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (parameters_[i] == nullptr) {
      return "parameter numbers must be 0.." + std::to_string(parameters_.size() - 1) +
             " without gaps; " + std::to_string(i) + " is missing";
    }
  }
  return "";
}

std::vector<const HloInstruction*> HloComputation::PostOrder() const {
  std::vector<const HloInstruction*> order;
  order.reserve(instructions_.size());
  std::vector<char> visited(instructions_.size(), 0);
  auto first_visit = [&](const HloInstruction* instruction) {
    char& seen = visited[instruction->id()];
    return seen ? false : (seen = 1, true);
  };
  // Iterative DFS: the stack holds (instruction, next operand to visit).
  std::vector<std::pair<const HloInstruction*, int64_t>> stack;
  auto visit_from = [&](const HloInstruction* start) {
    if (!first_visit(start)) return;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operand_count()) {
        const HloInstruction* operand = node->operand(next++);
        if (first_visit(operand)) stack.emplace_back(operand, 0);
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  };
  if (root_ != nullptr) visit_from(root_);
  for (const auto& instruction : instructions_) visit_from(instruction.get());
  return order;
}

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> computation) {
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

HloComputation* HloModule::FindComputation(std::string_view name) const {
  for (const auto& computation : computations_) {
    if (computation->name() == name) return computation.get();
  }
  return nullptr;
}

const HloComputation* HloModule::fusion() const {
  if (entry_ == nullptr) return nullptr;
  const HloInstruction* root = entry_->root();
  if (root != nullptr && root->opcode() == HloOpcode::kFusion &&
      !root->called_computations().empty()) {
    return root->called_computation(0);
  }
  return entry_;
}

std::vector<const HloComputation*> HloModule::CalleesPostOrder(const HloComputation* root) {
  // Iterative DFS so that long call chains cannot exhaust the stack.
  std::vector<const HloComputation*> order;
  std::unordered_set<const HloComputation*> visited{root};
  std::vector<std::pair<const HloComputation*, std::vector<const HloComputation*>>> stack;
  auto callees_of = [](const HloComputation* computation) {
    std::vector<const HloComputation*> callees;
    for (const auto& instruction : computation->instructions()) {
      for (const HloComputation* callee : instruction->called_computations()) {
        callees.push_back(callee);
      }
    }
    std::reverse(callees.begin(), callees.end());  // popped from the back in call order
    return callees;
  };
  stack.emplace_back(root, callees_of(root));
  while (!stack.empty()) {
    auto& [computation, pending] = stack.back();
    if (pending.empty()) {
      order.push_back(computation);
      stack.pop_back();
      continue;
    }
    const HloComputation* next = pending.back();
    pending.pop_back();
    if (visited.insert(next).second) stack.emplace_back(next, callees_of(next));
  }
  return order;
}

}  // namespace tilesmith::hlo
