// Writing HLO text. `PrintModule(parse(text))` is a fixed point: printing what it prints
// and parsing again gives the same text.
#pragma once

#include <functional>
#include <string>

#include "compiler/hlo/hlo_module.h"

namespace tilesmith::hlo {

/// How names are spelled and which attributes appear.
struct PrintOptions {
  /// Drop metadata, backend_config, frontend_attributes and sharding: the attributes that
  /// never change what a kernel computes.
  bool print_non_semantic_attributes = true;
  /// Instruction name to print; defaults to the instruction's own name.
  std::function<std::string(const HloInstruction&)> instruction_name;
  /// Computation name to print; defaults to the computation's own name.
  std::function<std::string(const HloComputation&)> computation_name;
};

/// The whole module: header, every computation in order, `ENTRY` where the text had it.
std::string PrintModule(const HloModule& module, const PrintOptions& options = {});

/// One computation, `name {` … `}`, instructions in `order` (its own order if empty).
std::string PrintComputation(const HloComputation& computation, const PrintOptions& options = {},
                             std::span<const HloInstruction* const> order = {});

/// One instruction line without indentation or `ROOT`.
std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options = {});

}  // namespace tilesmith::hlo
