// Reading HLO text: modules, computations, instructions, shapes. Every error names the
// file, line and column and what was expected.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "compiler/hlo/hlo_module.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"
#include "support/status.h"

namespace tilesmith::hlo {

/// Bounds on what one parse may take, so that a service can refuse oversized input early.
struct ParseLimits {
  /// Most instructions a module may have, over all its computations. Parsing stops at the
  /// first one past it with `ErrorCode::kResourceExhausted`, before reading the rest.
  int64_t max_instructions = std::numeric_limits<int64_t>::max();
};

/// Parses a whole module (`HloModule` header optional; computations, `ENTRY` optional,
/// `ROOT` optional: the last instruction is the root). Operands may be referenced before
/// they are defined. Every instruction's shape is checked against its operands; a shape
/// left out is inferred. `file_name` only labels error messages.
Expected<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view file_name = "<text>");

/// As above, within `limits` (the overload above has none).
Expected<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view file_name,
                                                    const ParseLimits& limits);

/// Reads and parses a file; errors are prefixed with its path.
Expected<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path);

/// As above, within `limits`.
Expected<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path,
                                                        const ParseLimits& limits);

/// Parses a shape such as `f32[3,5]{1,0:T(2,2)}` or `(s32[], bf16[8]{0})`.
Expected<Shape> ParseShape(std::string_view text);

/// Parses literal text (`{1, 2}`, `(1, 0)`, `-inf`, `{...}`) as a value of `shape`.
Expected<Literal> ParseLiteral(std::string_view text, const Shape& shape);

}  // namespace tilesmith::hlo
