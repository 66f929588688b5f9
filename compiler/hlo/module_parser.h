// The HLO module parser: one pass over the text that builds the module, resolves operand
// names as it goes (forward references wait until their computation closes) and checks each
// instruction's shape while it is still in cache. Its parts live in module_parser.cc
// (structure and names), instruction_attributes.cc (attributes) and module_verifier.cc
// (called computations and shapes). Private to compiler/hlo.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/hlo/hlo_module.h"
#include "compiler/hlo/parse_internal.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/text_cursor.h"

namespace tilesmith::hlo {

/// The instruction names of one computation defined so far, mapped to their ids: open
/// addressing over views of the text, a few bytes per name.
class NameTable {
 public:
  /// Empties the table, keeping its memory.
  void Clear();
  static uint32_t Hash(std::string_view name);
  /// Starts loading the slot of `hash` into cache, ahead of an `Insert` of its name (the
  /// table outgrows the cache for large computations).
  void Prefetch(uint32_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
  }
  /// Maps `name` (whose hash is `hash`) to `id` unless it is already there; returns the id
  /// it had, or -1.
  int64_t Insert(std::string_view name, uint32_t hash, int64_t id);
  /// The id of `name`, or -1.
  int64_t Find(std::string_view name) const;

 private:
  struct Slot {
    uint32_t id_plus_one = 0;  // 0: empty
    uint32_t hash = 0;
  };
  void Grow();

  std::vector<Slot> slots_;              // a power of two long, at most half full
  std::vector<std::string_view> names_;  // by id
  size_t size_ = 0;
};

class ModuleParser {
 public:
  ModuleParser(std::string_view text, std::string_view file_name, const ParseLimits& limits)
      : cursor_(text, file_name), limits_(limits) {}

  Expected<std::unique_ptr<HloModule>> Parse();

 private:
  struct PendingOperand {
    std::string_view name;
    size_t position;
  };
  // An instruction whose operands are resolved when its computation closes: it or an
  // instruction before it uses a name defined later. Its operands are the range
  // [first_operand, first_operand + operand_count) of `deferred_operands_`.
  struct DeferredInstruction {
    HloInstruction* instruction;
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
    size_t caller;  // index of the calling computation
    std::string_view name;
    size_t position;
  };
  // What the text said about each instruction of one computation, by instruction id.
  struct SourceInfo {
    std::vector<size_t> positions;
    std::vector<char> shape_written;
    std::vector<char> verified;  // its shape was inferred and checked
    int64_t unverified = 0;
    bool forward_references = false;
    std::vector<size_t> callees;  // computation indices, in call order
  };

  // module_parser.cc
  Status ParseHeader();
  Expected<bool> SkipStackFrameTable();
  Status ParseComputation();
  Status ParseInstruction(HloComputation& computation, HloInstruction*& root,
                          HloInstruction*& last);
  Status ParseOperands(HloInstruction& instruction, bool shape_written, size_t position);
  void ResolveOrDefer(HloComputation& computation, HloInstruction& instruction);
  Status ResolveDeferred(HloComputation& computation);
  Status CheckAcyclic(const HloComputation& computation);
  std::unexpected<Error> InstructionLimitError(size_t position) const;

  // instruction_attributes.cc
  Status ParseAttribute(HloInstruction& instruction);
  Status ParseTypedAttribute(HloInstruction& instruction, std::string_view name, bool& handled);

  // module_verifier.cc
  void VerifyWhileParsing(HloInstruction& instruction);
  Status ResolveCalls();
  std::vector<size_t> CalleesFirstOrder() const;
  Status InferAndVerifyShapes();

  TextCursor cursor_;
  ParseLimits limits_;
  int64_t instruction_count_ = 0;
  std::unique_ptr<HloModule> module_;
  std::vector<PendingCall> calls_;
  std::vector<SourceInfo> sources_;  // by computation index
  SourceInfo* current_source_ = nullptr;
  std::unordered_map<std::string_view, size_t> computation_index_;
  std::vector<size_t> computation_positions_;  // by computation index
  std::vector<InlineOperandShape> inline_operand_shapes_;
  int64_t unverified_ = 0;
  LayoutCache layouts_;

  // Of the computation being parsed.
  NameTable names_;
  std::vector<PendingOperand> operands_;  // of the instruction being parsed
  std::vector<int64_t> operand_ids_;      // of the instruction being parsed
  bool deferring_ = false;
  std::vector<DeferredInstruction> deferred_;
  std::vector<PendingOperand> deferred_operands_;
  size_t first_duplicate_ = SIZE_MAX;  // id of the first instruction whose name was taken
};

}  // namespace tilesmith::hlo
