// The text form of indexing maps, XLA's: `(d0, d1)[s0] -> (d1, d0), domain: d0 in [0, 19],
// d1 in [0, 39], s0 in [0, 3], d0 + s0 in [0, 9]`.
#include <cctype>
#include <optional>
#include <unordered_map>

#include "compiler/analysis/indexing_map.h"

namespace tilesmith::analysis {
namespace {

std::string Names(std::span<const std::string> names, const char* prefix, int64_t count) {
  std::string out;
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0) out += ", ";
    out += i < static_cast<int64_t>(names.size()) ? names[i] : prefix + std::to_string(i);
  }
  return out;
}

// A recursive-descent reader of the text. Errors name the column.
class MapParser {
 public:
  explicit MapParser(std::string_view text) : text_(text) {}

  Expected<IndexingMap> Parse() {
    if (ConsumeWord("UNDEFINED")) {
      TS_RETURN_IF_ERROR(ExpectEnd());
      return IndexingMap::Undefined();
    }
    TS_ASSIGN_OR_RETURN(std::vector<std::string> dims, ParseNameList('(', ')'));
    std::vector<std::string> symbols;
    if (Peek('[')) {
      TS_ASSIGN_OR_RETURN(symbols, ParseNameList('[', ']'));
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      TS_RETURN_IF_ERROR(Declare(dims[i], AffineExpr::Dim(i)));
    }
    for (size_t j = 0; j < symbols.size(); ++j) {
      TS_RETURN_IF_ERROR(Declare(symbols[j], AffineExpr::Symbol(j)));
    }
    TS_RETURN_IF_ERROR(Expect("->"));
    TS_RETURN_IF_ERROR(Expect("("));
    std::vector<AffineExpr> results;
    if (!Peek(')')) {
      do {
        TS_ASSIGN_OR_RETURN(AffineExpr e, ParseExpr());
        results.push_back(e);
      } while (Consume(","));
    }
    TS_RETURN_IF_ERROR(Expect(")"));
    std::vector<std::optional<Interval>> dim_ranges(dims.size());
    std::vector<std::optional<SymbolVar>> symbol_vars(symbols.size());
    std::vector<Constraint> constraints;
    bool known_empty = false;
    if (Consume(",")) {
      TS_RETURN_IF_ERROR(Expect("domain"));
      TS_RETURN_IF_ERROR(Expect(":"));
      if (ConsumeWord("KNOWN")) {
        TS_RETURN_IF_ERROR(Expect("EMPTY"));
        known_empty = true;
      } else {
        do {
          TS_RETURN_IF_ERROR(ParseDomainEntry(dim_ranges, symbol_vars, constraints));
        } while (Consume(","));
      }
    }
    TS_RETURN_IF_ERROR(ExpectEnd());
    return Build(dims, symbols, std::move(dim_ranges), std::move(symbol_vars), std::move(results),
                 std::move(constraints), known_empty);
  }

 private:
  Expected<IndexingMap> Build(const std::vector<std::string>& dims,
                              const std::vector<std::string>& symbols,
                              std::vector<std::optional<Interval>> dim_ranges,
                              std::vector<std::optional<SymbolVar>> symbol_vars,
                              std::vector<AffineExpr> results, std::vector<Constraint> constraints,
                              bool known_empty) {
    if (known_empty) {
      return IndexingMap::KnownEmpty(dims.size(), symbols.size(), results.size());
    }
    std::vector<Interval> ranges;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!dim_ranges[i]) return Fail("'" + dims[i] + "' has no range");
      ranges.push_back(*dim_ranges[i]);
    }
    std::vector<SymbolVar> vars;
    for (size_t j = 0; j < symbols.size(); ++j) {
      if (!symbol_vars[j]) return Fail("'" + symbols[j] + "' has no range");
      vars.push_back(*symbol_vars[j]);
    }
    return IndexingMap(std::move(ranges), std::move(vars), std::move(results),
                       std::move(constraints));
  }

  Status ParseDomainEntry(std::vector<std::optional<Interval>>& dim_ranges,
                          std::vector<std::optional<SymbolVar>>& symbol_vars,
                          std::vector<Constraint>& constraints) {
    TS_ASSIGN_OR_RETURN(AffineExpr expr, ParseExpr());
    TS_RETURN_IF_ERROR(Expect("in"));
    TS_RETURN_IF_ERROR(Expect("["));
    TS_ASSIGN_OR_RETURN(int64_t lower, ParseInteger());
    TS_RETURN_IF_ERROR(Expect(","));
    TS_ASSIGN_OR_RETURN(int64_t upper, ParseInteger());
    TS_RETURN_IF_ERROR(Expect("]"));
    bool runtime = ConsumeWord("runtime");
    Interval range{lower, upper};
    if (expr.IsSymbol() && !symbol_vars[expr.value()]) {
      symbol_vars[expr.value()] =
          SymbolVar{range, runtime ? SymbolKind::kRuntime : SymbolKind::kRange};
      return OkStatus();
    }
    if (runtime) return Fail("only a symbol's range can be marked runtime");
    if (expr.IsDim() && !dim_ranges[expr.value()]) {
      dim_ranges[expr.value()] = range;
      return OkStatus();
    }
    constraints.push_back({expr, range});
    return OkStatus();
  }

  // expr := term (('+' | '-') term)*
  Expected<AffineExpr> ParseExpr() {
    TS_ASSIGN_OR_RETURN(AffineExpr sum, ParseTerm());
    while (true) {
      if (Consume("+")) {
        TS_ASSIGN_OR_RETURN(AffineExpr term, ParseTerm());
        sum = sum + term;
      } else if (Consume("-")) {
        TS_ASSIGN_OR_RETURN(AffineExpr term, ParseTerm());
        sum = sum - term;
      } else {
        return sum;
      }
    }
  }

  // term := unary (('*' | 'floordiv' | 'mod') unary)*
  Expected<AffineExpr> ParseTerm() {
    TS_ASSIGN_OR_RETURN(AffineExpr product, ParseUnary());
    while (true) {
      SkipSpace();
      size_t column = pos_;
      bool multiply = Consume("*");
      bool floordiv = !multiply && ConsumeWord("floordiv");
      bool mod = !multiply && !floordiv && ConsumeWord("mod");
      if (!multiply && !floordiv && !mod) return product;
      TS_ASSIGN_OR_RETURN(AffineExpr rhs, ParseUnary());
      if (multiply) {
        if (!rhs.IsConstant() && !product.IsConstant()) {
          return ErrorAt(column, "a product needs a constant operand to be affine");
        }
        product = rhs.IsConstant() ? product * rhs.value() : rhs * product.value();
        continue;
      }
      if (!rhs.IsConstant() || rhs.value() <= 0) {
        return ErrorAt(column, std::string(floordiv ? "floordiv" : "mod") +
                                   " needs a positive constant divisor");
      }
      product = floordiv ? product.FloorDiv(rhs.value()) : product.Mod(rhs.value());
    }
  }

  // unary := '-' unary | integer | name | '(' expr ')'
  Expected<AffineExpr> ParseUnary() {
    if (Consume("-")) {
      TS_ASSIGN_OR_RETURN(AffineExpr operand, ParseUnary());
      return -operand;
    }
    if (Consume("(")) {
      TS_ASSIGN_OR_RETURN(AffineExpr inner, ParseExpr());
      TS_RETURN_IF_ERROR(Expect(")"));
      return inner;
    }
    SkipSpace();
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      TS_ASSIGN_OR_RETURN(int64_t value, ParseInteger());
      return AffineExpr::Constant(value);
    }
    size_t column = pos_;
    std::string name = ParseName();
    if (name.empty()) return ErrorAt(column, "expected an expression");
    auto it = variables_.find(name);
    if (it == variables_.end()) return ErrorAt(column, "unknown variable '" + name + "'");
    return it->second;
  }

  Expected<std::vector<std::string>> ParseNameList(char open, char close) {
    TS_RETURN_IF_ERROR(Expect(std::string(1, open)));
    std::vector<std::string> names;
    if (Consume(std::string(1, close))) return names;
    do {
      SkipSpace();
      size_t column = pos_;
      std::string name = ParseName();
      if (name.empty()) return ErrorAt(column, "expected a variable name");
      names.push_back(name);
    } while (Consume(","));
    TS_RETURN_IF_ERROR(Expect(std::string(1, close)));
    return names;
  }

  Status Declare(const std::string& name, AffineExpr variable) {
    if (!variables_.emplace(name, variable).second) {
      return Fail("variable '" + name + "' is declared twice");
    }
    return OkStatus();
  }

  Expected<int64_t> ParseInteger() {
    SkipSpace();
    size_t column = pos_;
    bool negative = Consume("-");
    SkipSpace();
    int64_t value = 0;
    size_t digits = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[pos_] - '0', &value)) {
        return ErrorAt(column, "integer out of range");
      }
      ++pos_;
      ++digits;
    }
    if (digits == 0) return ErrorAt(column, "expected an integer");
    return negative ? -value : value;
  }

  std::string ParseName() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (start < pos_ && std::isdigit(static_cast<unsigned char>(text_[start]))) {
      pos_ = start;
      return "";
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  bool Consume(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  // A keyword, not the prefix of a longer name (`mod` is not `mode`).
  bool ConsumeWord(std::string_view word) {
    SkipSpace();
    size_t end = pos_ + word.size();
    if (text_.substr(pos_, word.size()) != word) return false;
    if (end < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
      return false;
    }
    pos_ = end;
    return true;
  }

  Status Expect(std::string_view token) {
    bool is_word = std::isalpha(static_cast<unsigned char>(token[0]));
    if (is_word ? ConsumeWord(token) : Consume(token)) return OkStatus();
    return ErrorAt(pos_, "expected '" + std::string(token) + "'");
  }

  Status ExpectEnd() {
    SkipSpace();
    if (pos_ == text_.size()) return OkStatus();
    return ErrorAt(pos_, "unexpected text after the map");
  }

  std::unexpected<tilesmith::Error> ErrorAt(size_t column, const std::string& message) const {
    return InvalidArgument("indexing map, col " + std::to_string(column + 1) + ": " + message);
  }
  std::unexpected<tilesmith::Error> Fail(const std::string& message) const {
    return InvalidArgument("indexing map: " + message);
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::unordered_map<std::string, AffineExpr> variables_;
};

}  // namespace

std::string IndexingMap::ToString(std::span<const std::string> dim_names,
                                  std::span<const std::string> symbol_names) const {
  if (undefined_) return "UNDEFINED";
  std::string out = "(" + Names(dim_names, "d", dim_count()) + ")";
  if (symbol_count() > 0) out += "[" + Names(symbol_names, "s", symbol_count()) + "]";
  out += " -> (";
  for (int64_t i = 0; i < result_count(); ++i) {
    if (i > 0) out += ", ";
    out += results_[i].ToString(dim_names, symbol_names);
  }
  out += ")";
  if (known_empty_) return out + ", domain: KNOWN EMPTY";
  std::vector<std::string> entries;
  for (int64_t i = 0; i < dim_count(); ++i) {
    entries.push_back(AffineExpr::Dim(i).ToString(dim_names, {}) + " in " +
                      dim_ranges_[i].ToString());
  }
  for (int64_t j = 0; j < symbol_count(); ++j) {
    entries.push_back(AffineExpr::Symbol(j).ToString({}, symbol_names) + " in " +
                      symbols_[j].range.ToString() +
                      (symbols_[j].kind == SymbolKind::kRuntime ? " runtime" : ""));
  }
  for (const Constraint& c : constraints_) {
    entries.push_back(c.expr.ToString(dim_names, symbol_names) + " in " + c.range.ToString());
  }
  for (size_t i = 0; i < entries.size(); ++i) out += (i == 0 ? ", domain: " : ", ") + entries[i];
  return out;
}

Expected<IndexingMap> IndexingMap::Parse(std::string_view text) { return MapParser(text).Parse(); }

}  // namespace tilesmith::analysis
