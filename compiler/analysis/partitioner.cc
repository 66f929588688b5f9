#include "compiler/analysis/partitioner.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/analysis/op_indexing.h"

namespace tilesmith::analysis {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// A subgraph grows no larger than this; beyond, compile time outweighs the saving.
constexpr int64_t kMaxInstructionsPerSubgraph = 2000;

// An operand some user reads at two different indices by itself (a concatenate of the same
// value twice) must be its own function even with a single user.
bool IsReadTwiceByOneUser(const HloInstruction& instruction) {
  for (const HloInstruction* user : instruction.users()) {
    int64_t uses = 0;
    for (const HloInstruction* operand : user->operands()) uses += operand == &instruction;
    if (uses > 1 && user->opcode() == HloOpcode::kConcatenate) return true;
  }
  return false;
}

}  // namespace

int64_t PartitionedComputation::SubgraphOf(const HloInstruction& instruction) const {
  return subgraph_of_[instruction.id()];
}

const IndexingMap& PartitionedComputation::IndexingInSubgraph(
    const HloInstruction& instruction) const {
  return indexing_[instruction.id()];
}

std::string PartitionedComputation::ToString() const {
  std::string text;
  for (const Subgraph& subgraph : subgraphs_) {
    text += "subgraph @" + subgraph.name + " roots(";
    for (size_t i = 0; i < subgraph.roots.size(); ++i) {
      text += (i ? ", " : "") + subgraph.roots[i]->name();
    }
    text += "):";
    for (const HloInstruction* instruction : subgraph.instructions)
      text += " " + instruction->name();
    text += "\n";
  }
  return text;
}

PartitionedComputation PartitionComputation(
    const hlo::HloComputation& computation,
    const std::function<bool(const HloInstruction&)>& is_subgraph_root) {
  PartitionedComputation result;
  result.computation_ = &computation;
  size_t size = static_cast<size_t>(computation.instruction_count());
  result.subgraph_of_.assign(size, -1);
  result.indexing_.assign(size, IndexingMap::Undefined());
  std::vector<int64_t> subgraph_sizes;

  std::vector<const HloInstruction*> roots = FusionRoots(computation);
  auto is_output = [&](const HloInstruction* instruction) {
    return std::find(roots.begin(), roots.end(), instruction) != roots.end();
  };
  const HloInstruction* root_tuple =
      computation.root()->opcode() == HloOpcode::kTuple ? computation.root() : nullptr;

  auto new_subgraph = [&](const HloInstruction* instruction) {
    result.subgraphs_.push_back({instruction->name(), {instruction}, {}});
    subgraph_sizes.push_back(0);
    return static_cast<int64_t>(result.subgraphs_.size()) - 1;
  };
  auto identity = [](const HloInstruction* instruction) {
    const hlo::Shape& shape = instruction->shape().IsTuple() ? instruction->shape().tuple_element(0)
                                                             : instruction->shape();
    return IndexingMap::Identity(shape.IsArray() ? shape.dims() : std::span<const int64_t>());
  };

  // Users come before their operands in reverse post-order.
  std::vector<const HloInstruction*> order = computation.PostOrder();
  std::reverse(order.begin(), order.end());
  for (const HloInstruction* instruction : order) {
    // Parameters are read where they are used; one that is itself an output is stored by
    // a function of its own.
    if (instruction == root_tuple ||
        (instruction->opcode() == HloOpcode::kParameter && !is_output(instruction))) {
      continue;
    }
    int64_t id = instruction->id();
    bool must_root = is_output(instruction) || instruction->users().empty() ||
                     (is_subgraph_root && is_subgraph_root(*instruction)) ||
                     IsReadTwiceByOneUser(*instruction);
    std::vector<IndexingMap> reads;  // from the users' subgraph root to this instruction
    int64_t subgraph = -1;
    if (!must_root) {
      for (const HloInstruction* user : instruction->users()) {
        int64_t user_subgraph = result.subgraph_of_[user->id()];
        if (user_subgraph < 0 || (subgraph >= 0 && user_subgraph != subgraph)) {
          subgraph = -2;  // users in different functions (or the root tuple)
          break;
        }
        subgraph = user_subgraph;
        // Which output (of a tuple-shaped user) reads us does not matter here: every output
        // of a variadic op reads every operand at the same positions.
        std::vector<IndexingMap> maps = OutputToInputIndexing(*user);
        for (int64_t k = 0; k < user->operand_count(); ++k) {
          if (user->operand(k) != instruction) continue;
          const IndexingMap& from_root = result.indexing_[user->id()];
          reads.push_back(from_root.IsUndefined() || maps[k].IsUndefined()
                              ? IndexingMap::Undefined()
                              : Compose(from_root, maps[k]));
        }
      }
    }
    bool one_index = !reads.empty();
    if (reads.size() > 1) {
      for (const IndexingMap& read : reads) {
        if (read.IsUndefined() || !(read == reads[0])) one_index = false;
      }
    }
    if (!must_root && subgraph >= 0 && one_index &&
        subgraph_sizes[subgraph] < kMaxInstructionsPerSubgraph) {
      result.subgraph_of_[id] = subgraph;
      result.indexing_[id] = reads[0];
      ++subgraph_sizes[subgraph];
      continue;
    }
    // A root of its own. Fusion outputs with the same dims share one subgraph.
    int64_t own = -1;
    if (is_output(instruction)) {
      for (size_t s = 0; s < result.subgraphs_.size(); ++s) {
        const HloInstruction* first = result.subgraphs_[s].roots[0];
        if (is_output(first) && first->shape().IsArray() && instruction->shape().IsArray() &&
            std::equal(first->shape().dims().begin(), first->shape().dims().end(),
                       instruction->shape().dims().begin(), instruction->shape().dims().end())) {
          own = static_cast<int64_t>(s);
          result.subgraphs_[s].roots.push_back(instruction);
          break;
        }
      }
    }
    if (own < 0) own = new_subgraph(instruction);
    result.subgraph_of_[id] = own;
    result.indexing_[id] = identity(instruction);
    ++subgraph_sizes[own];
  }
  // Members in post-order, roots included.
  for (const HloInstruction* instruction : computation.PostOrder()) {
    int64_t subgraph = result.subgraph_of_[instruction->id()];
    if (subgraph >= 0) result.subgraphs_[subgraph].instructions.push_back(instruction);
  }
  // Unique, readable names.
  std::unordered_set<std::string> names;
  for (Subgraph& subgraph : result.subgraphs_) {
    std::string name = computation.name() + "_" + subgraph.roots[0]->name();
    std::string unique = name;
    for (int k = 1; !names.insert(unique).second; ++k) unique = name + "_" + std::to_string(k);
    subgraph.name = unique;
  }
  return result;
}

}  // namespace tilesmith::analysis
