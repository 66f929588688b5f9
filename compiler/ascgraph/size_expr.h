// Symbolic sizes of AscGraphs: integers, size variables (`s0`), `+ - * /`, `Ceiling(x)`,
// `Floor(x)`, `Max(a, b)`, `Min(a, b)`, `Mod(a, b)`, parentheses.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace tilesmith::ascgraph {

/// Values of the size variables, by name ("s0" -> 2048).
using SizeBindings = std::map<std::string, int64_t, std::less<>>;

/// A parsed size expression. Value type; cheap to copy (shares its immutable tree).
class SizeExpr {
 public:
  /// The constant 0.
  SizeExpr();
  /// Parses `text`; errors say where and what was expected.
  static Expected<SizeExpr> Parse(std::string_view text);
  /// The constant `value`.
  static SizeExpr Constant(int64_t value);

  /// Evaluates with `bindings`. `/` is exact rational division inside Ceiling/Floor and
  /// truncating integer division elsewhere, as in the graph engine's symbolic sizes; a
  /// division by zero or an unbound variable is an error naming it.
  Expected<int64_t> Evaluate(const SizeBindings& bindings) const;
  /// Names of the variables it uses, sorted, without duplicates.
  std::vector<std::string> Variables() const;
  /// True if it has no variables.
  bool IsConstant() const;
  /// Canonical text (`Ceiling((s0 / 16))` style is normalised to `Ceiling(s0 / 16)`).
  std::string ToString() const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
};

}  // namespace tilesmith::ascgraph
