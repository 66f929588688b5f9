// HLO computations and modules, and how tilesmith finds "the fusion" in a module.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/hlo_instruction.h"

namespace tilesmith::hlo {

/// A named list of instructions with one root. Owns its instructions; instruction order
/// is the order they were added (the text order when parsed).
class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  /// Takes ownership and returns the borrowed pointer.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);
  std::span<const std::unique_ptr<HloInstruction>> instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }

  HloInstruction* root() const { return root_; }
  void set_root(HloInstruction* root) { root_ = root; }

  /// Parameters indexed by parameter number (filled by `IndexParameters`).
  std::span<HloInstruction* const> parameters() const { return parameters_; }
  const HloInstruction* parameter(int64_t i) const { return parameters_[i]; }
  int64_t parameter_count() const { return static_cast<int64_t>(parameters_.size()); }
  /// Rebuilds the parameter index; fails if numbers are not exactly 0..n-1.
  std::string IndexParameters();

  /// Instructions in an order where every operand comes before its users: a depth-first
  /// post-order from the root (operands in order), then unreachable instructions in
  /// their original order. Deterministic for a given graph, whatever the text order.
  std::vector<const HloInstruction*> PostOrder() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  std::vector<HloInstruction*> parameters_;
  std::vector<HloInstruction*> parameter_instructions_;  // in the order added
  HloInstruction* root_ = nullptr;
};

/// A module: computations in text order and the entry computation.
class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  /// Header attributes after the name (`HloModule m, is_scheduled=true, …`), kept as text.
  const std::vector<OpaqueAttribute>& header_attributes() const { return header_attributes_; }
  std::vector<OpaqueAttribute>& mutable_header_attributes() { return header_attributes_; }

  HloComputation* AddComputation(std::unique_ptr<HloComputation> computation);
  std::span<const std::unique_ptr<HloComputation>> computations() const { return computations_; }
  HloComputation* FindComputation(std::string_view name) const;

  /// The `ENTRY` computation, or the last one when the text marks none (as XLA does).
  HloComputation* entry() const { return entry_; }
  void set_entry(HloComputation* entry) { entry_ = entry; }
  /// True when the text said `ENTRY`; printing keeps the distinction.
  bool entry_is_explicit() const { return entry_is_explicit_; }
  void set_entry_is_explicit(bool value) { entry_is_explicit_ = value; }

  /// The fused computation tilesmith works on: when the entry's root is a `fusion`, the
  /// computation it calls; otherwise the entry itself (a bare fusion body, or a module
  /// of unfused ops).
  const HloComputation* fusion() const;

  /// Computations reachable from `root` through called computations, callees first,
  /// `root` last.
  static std::vector<const HloComputation*> CalleesPostOrder(const HloComputation* root);

 private:
  std::string name_;
  std::vector<OpaqueAttribute> header_attributes_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  bool entry_is_explicit_ = false;
};

}  // namespace tilesmith::hlo
