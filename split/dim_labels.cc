#include "split/dim_labels.h"

#include <map>
#include <numeric>

#include "compiler/analysis/op_indexing.h"

namespace tilesmith::split {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// Ops whose output->operand maps tell the whole story: an operand dim read as exactly `d_k`
// over the full range holds the same elements as output dim k, so both may be split alike.
// Other ops (gather, scatter, sort, dynamic slices, custom calls, …) pin every dim.
bool MapsTellTheStory(HloOpcode opcode) {
  if (hlo::IsElementwise(opcode)) return true;
  switch (opcode) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReshape:
    case HloOpcode::kReduce:
    case HloOpcode::kDot:
    case HloOpcode::kSlice:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
      return true;
    default:
      return false;
  }
}

// Partial sums of a reduce add up to its result only for a single add reduction whose init
// is 0 (every device adds the init once; psum would count it n times otherwise).
Contraction ContractionAt(const HloInstruction& instruction) {
  Contraction contraction{&instruction, false, ""};
  if (instruction.opcode() == HloOpcode::kDot) {
    contraction.psum_ok = true;
    return contraction;
  }
  if (instruction.operand_count() != 2) {
    contraction.why_not = "a variadic reduce";
    return contraction;
  }
  const HloInstruction* init = instruction.operand(1);
  if (init->opcode() != HloOpcode::kConstant || init->literal() == nullptr ||
      init->literal()->element_count() != 1 || init->literal()->GetDouble(0) != 0) {
    contraction.why_not = "the reduction's init value is not the constant 0";
    return contraction;
  }
  const hlo::HloComputation* reducer = instruction.called_computation(0);
  const HloInstruction* root = reducer ? reducer->root() : nullptr;
  if (root == nullptr || root->opcode() != HloOpcode::kAdd || root->operand_count() != 2 ||
      root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter) {
    contraction.why_not = "the reducer is not an add (only sums become psum)";
    return contraction;
  }
  contraction.psum_ok = true;
  return contraction;
}

class Labeler {
 public:
  explicit Labeler(const hlo::HloComputation& fusion) : fusion_(fusion) {
    for (const auto& instruction : fusion.instructions()) {
      base_.push_back(static_cast<int>(slot_size_.size()));
      if (instruction->shape().IsArray()) {
        for (int64_t d = 0; d < instruction->shape().rank(); ++d) {
          slot_size_.push_back(instruction->shape().dim(d));
        }
      }
    }
    parent_.resize(slot_size_.size());
    std::iota(parent_.begin(), parent_.end(), 0);
  }

  Expected<DimLabels> Run() {
    for (const auto& owned : fusion_.instructions()) Visit(*owned);
    return Finish();
  }

 private:
  int Slot(const HloInstruction& instruction, int64_t d) const {
    return base_[instruction.id()] + static_cast<int>(d);
  }
  int NewSlot(int64_t size) {
    slot_size_.push_back(size);
    parent_.push_back(static_cast<int>(parent_.size()));
    return static_cast<int>(parent_.size()) - 1;
  }
  int Find(int slot) {
    while (parent_[slot] != slot) slot = parent_[slot] = parent_[parent_[slot]];
    return slot;
  }
  void Unify(int a, int b) { parent_[Find(a)] = Find(b); }
  void Pin(int slot, std::string reason) { pins_.emplace_back(slot, std::move(reason)); }
  void PinAll(const HloInstruction& instruction, const std::string& reason) {
    if (!instruction.shape().IsArray()) return;
    for (int64_t d = 0; d < instruction.shape().rank(); ++d) Pin(Slot(instruction, d), reason);
  }

  void Visit(const HloInstruction& instruction) {
    const std::string name(hlo::HloOpcodeName(instruction.opcode()));
    switch (instruction.opcode()) {
      case HloOpcode::kParameter:
        return;
      case HloOpcode::kTuple:
        if (&instruction == fusion_.root()) return;  // the outputs; labelled by themselves
        for (const HloInstruction* operand : instruction.operands()) {
          PinAll(*operand, "a tuple inside the fusion");
        }
        return;
      case HloOpcode::kConstant:
        // Every device would hold the whole constant, not its block.
        PinAll(instruction, "a non-scalar constant");
        return;
      case HloOpcode::kIota:
        // Each block would count from 0 instead of from its offset.
        Pin(Slot(instruction, instruction.attributes().iota_dimension), "an iota's dim");
        return;
      case HloOpcode::kBitcastConvert:
        // A narrowing bitcast-convert adds a minor dim holding each element's pieces: a
        // block of it is no element at all.
        if (instruction.shape().IsArray() && instruction.operand(0)->shape().IsArray() &&
            instruction.shape().rank() > instruction.operand(0)->shape().rank()) {
          Pin(Slot(instruction, instruction.shape().rank() - 1),
              "the pieces of a narrowing bitcast-convert");
        }
        break;
      default:
        break;
    }
    if (!instruction.shape().IsArray() || !MapsTellTheStory(instruction.opcode())) {
      PinAll(instruction, "'" + name + "'");
      for (const HloInstruction* operand : instruction.operands()) {
        PinAll(*operand, "an operand of '" + name + "'");
      }
      return;
    }
    std::vector<analysis::IndexingMap> maps = analysis::OutputToInputIndexing(instruction);
    const bool contracts =
        instruction.opcode() == HloOpcode::kReduce || instruction.opcode() == HloOpcode::kDot;
    std::map<int64_t, int> symbol_slots;
    for (int64_t o = 0; o < instruction.operand_count(); ++o) {
      const HloInstruction& operand = *instruction.operand(o);
      if (!operand.shape().IsArray() || operand.shape().rank() == 0) continue;
      const analysis::IndexingMap* map = o < static_cast<int64_t>(maps.size()) ? &maps[o] : nullptr;
      if (map == nullptr || map->IsUndefined() || map->IsKnownEmpty() ||
          map->result_count() != operand.shape().rank()) {
        PinAll(operand, "an operand of '" + name + "' read in no affine way");
        PinAll(instruction, "'" + name + "' reading an operand in no affine way");
        continue;
      }
      for (const analysis::Constraint& constraint : map->constraints()) {
        for (int64_t k = 0; k < instruction.shape().rank(); ++k) {
          if (constraint.expr.UsesDim(k))
            Pin(Slot(instruction, k), "a constrained dim of '" + name + "'");
        }
      }
      for (int64_t j = 0; j < operand.shape().rank(); ++j) {
        const analysis::AffineExpr& expr = map->result(j);
        const int64_t size = operand.shape().dim(j);
        if (expr.IsDim()) {
          const int64_t k = expr.value();
          if (instruction.shape().dim(k) == size &&
              map->dim_range(k) == analysis::Interval::ForSize(size)) {
            Unify(Slot(operand, j), Slot(instruction, k));
            continue;
          }
        } else if (expr.IsSymbol() && contracts) {
          const int64_t s = expr.value();
          const analysis::SymbolVar& symbol = map->symbol(s);
          if (symbol.kind == analysis::SymbolKind::kRange &&
              symbol.range == analysis::Interval::ForSize(size)) {
            auto [it, fresh] = symbol_slots.try_emplace(s, -1);
            if (fresh) {
              it->second = NewSlot(size);
              contraction_slots_.emplace_back(it->second, ContractionAt(instruction));
            }
            if (slot_size_[it->second] == size) {
              Unify(Slot(operand, j), it->second);
              continue;
            }
          }
        }
        Pin(Slot(operand, j), "a dim '" + name + "' reads by offset or regrouped");
        for (int64_t k = 0; k < instruction.shape().rank(); ++k) {
          if (expr.UsesDim(k)) Pin(Slot(instruction, k), "a dim of '" + name + "' not read 1:1");
        }
      }
    }
  }

  Expected<DimLabels> Finish() {
    DimLabels labels;
    std::map<int, int> label_of_root;
    auto label_of = [&](int slot) {
      int root = Find(slot);
      auto [it, fresh] = label_of_root.try_emplace(root, labels.count());
      if (fresh) {
        labels.size.push_back(slot_size_[slot]);
        labels.pinned.push_back(false);
        labels.pin_reason.emplace_back();
        labels.contractions.emplace_back();
      } else if (labels.size[it->second] != slot_size_[slot]) {
        labels.pinned[it->second] = true;  // should not happen: only equal sizes unify
        labels.pin_reason[it->second] = "dims of different sizes";
      }
      return it->second;
    };
    for (const auto& instruction : fusion_.instructions()) {
      std::vector<int> dims;
      if (instruction->shape().IsArray()) {
        for (int64_t d = 0; d < instruction->shape().rank(); ++d) {
          dims.push_back(label_of(Slot(*instruction, d)));
        }
      }
      labels.of.push_back(std::move(dims));
    }
    for (auto& [slot, contraction] : contraction_slots_) {
      labels.contractions[label_of(slot)].push_back(contraction);
    }
    for (auto& [slot, reason] : pins_) {
      int label = label_of(slot);
      if (!labels.pinned[label]) labels.pin_reason[label] = reason;
      labels.pinned[label] = true;
    }
    const HloInstruction* root = fusion_.root();
    if (root == nullptr) return InvalidArgument("the fusion has no root");
    if (root->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* operand : root->operands()) {
        if (!operand->shape().IsArray()) {
          return Unimplemented("split: a fusion output that is not an array");
        }
        labels.outputs.push_back(operand);
      }
    } else if (root->shape().IsArray()) {
      labels.outputs.push_back(root);
    } else {
      return Unimplemented("split: a fusion whose root is not an array or a tuple of arrays");
    }
    return labels;
  }

  const hlo::HloComputation& fusion_;
  std::vector<int> base_;
  std::vector<int64_t> slot_size_;
  std::vector<int> parent_;
  std::vector<std::pair<int, std::string>> pins_;
  std::vector<std::pair<int, Contraction>> contraction_slots_;
};

}  // namespace

Expected<DimLabels> LabelDims(const hlo::HloComputation& fusion) {
  for (int64_t i = 0; i < fusion.instruction_count(); ++i) {
    if (fusion.instructions()[i]->id() != i) {
      return MakeError(ErrorCode::kInternal, "split: instruction ids are not positions");
    }
  }
  return Labeler(fusion).Run();
}

}  // namespace tilesmith::split
