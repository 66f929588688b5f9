#include "compiler/ascgraph/size_expr.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <set>

namespace tilesmith::ascgraph {

struct SizeExpr::Node {
  enum class Kind { kConstant, kVariable, kNegate, kAdd, kSub, kMul, kDiv, kCall };
  Kind kind = Kind::kConstant;
  int64_t value = 0;
  std::string name;  // variable or function name
  std::vector<std::shared_ptr<const Node>> operands;
};

namespace {

using Node = SizeExpr::Node;
using NodePtr = std::shared_ptr<const Node>;
using Kind = Node::Kind;

NodePtr MakeNode(Kind kind, std::vector<NodePtr> operands, std::string name = "",
                 int64_t value = 0) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->operands = std::move(operands);
  node->name = std::move(name);
  node->value = value;
  return node;
}

struct Function {
  std::string_view name;
  size_t arity;
};
constexpr Function kFunctions[] = {
    {"Ceiling", 1}, {"Floor", 1}, {"Max", 2}, {"Min", 2}, {"Mod", 2},
};

const Function* FindFunction(std::string_view name) {
  for (const Function& function : kFunctions) {
    if (function.name == name) return &function;
  }
  return nullptr;
}

// Recursive descent over the usual precedence levels: sums, products, unary minus, atoms.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expected<NodePtr> ParseAll() {
    TS_ASSIGN_OR_RETURN(NodePtr node, ParseSum());
    SkipSpace();
    if (pos_ < text_.size()) return Fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return node;
  }

 private:
  std::unexpected<Error> Fail(const std::string& what) const {
    return InvalidArgument("size expression '" + std::string(text_) + "': col " +
                           std::to_string(pos_ + 1) + ": " + what);
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Expected<NodePtr> ParseSum() {
    TS_ASSIGN_OR_RETURN(NodePtr left, ParseProduct());
    while (true) {
      Kind kind;
      if (Consume('+')) {
        kind = Kind::kAdd;
      } else if (Consume('-')) {
        kind = Kind::kSub;
      } else {
        return left;
      }
      TS_ASSIGN_OR_RETURN(NodePtr right, ParseProduct());
      left = MakeNode(kind, {left, right});
    }
  }

  Expected<NodePtr> ParseProduct() {
    TS_ASSIGN_OR_RETURN(NodePtr left, ParseUnary());
    while (true) {
      Kind kind;
      if (Consume('*')) {
        kind = Kind::kMul;
      } else if (Consume('/')) {
        kind = Kind::kDiv;
      } else {
        return left;
      }
      TS_ASSIGN_OR_RETURN(NodePtr right, ParseUnary());
      left = MakeNode(kind, {left, right});
    }
  }

  Expected<NodePtr> ParseUnary() {
    if (Consume('-')) {
      TS_ASSIGN_OR_RETURN(NodePtr operand, ParseUnary());
      return MakeNode(Kind::kNegate, {operand});
    }
    if (Consume('+')) return ParseUnary();
    return ParseAtom();
  }

  Expected<NodePtr> ParseAtom() {
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("expected an operand, found the end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      TS_ASSIGN_OR_RETURN(NodePtr inner, ParseSum());
      if (!Consume(')')) return Fail("expected ')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return ParseInteger();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return ParseName();
    return Fail("expected an operand, found '" + std::string(1, c) + "'");
  }

  Expected<NodePtr> ParseInteger() {
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[pos_] - '0', &value)) {
        pos_ = start;
        return Fail("integer does not fit in 64 bits");
      }
      ++pos_;
    }
    return MakeNode(Kind::kConstant, {}, "", value);
  }

  Expected<NodePtr> ParseName() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    std::string name(text_.substr(start, pos_ - start));
    if (!Consume('(')) return MakeNode(Kind::kVariable, {}, name);
    const Function* function = FindFunction(name);
    if (function == nullptr) {
      pos_ = start;
      return Fail("unknown function '" + name + "' (known: Ceiling, Floor, Max, Min, Mod)");
    }
    std::vector<NodePtr> arguments;
    do {
      TS_ASSIGN_OR_RETURN(NodePtr argument, ParseSum());
      arguments.push_back(argument);
    } while (Consume(','));
    if (!Consume(')')) return Fail("expected ',' or ')' in the arguments of '" + name + "'");
    if (arguments.size() != function->arity) {
      pos_ = start;
      return Fail("'" + name + "' takes " + std::to_string(function->arity) + " argument" +
                  (function->arity == 1 ? "" : "s") + ", got " + std::to_string(arguments.size()));
    }
    return MakeNode(Kind::kCall, std::move(arguments), name);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// An exact fraction. Inside Ceiling/Floor sizes are rationals (the graph engine's symbolic
// sizes are exact there); elsewhere every value stays an integer.
struct Rational {
  __int128 num = 0;
  __int128 den = 1;
};

constexpr __int128 kLimit = static_cast<__int128>(INT64_MAX);

__int128 Abs128(__int128 v) { return v < 0 ? -v : v; }

__int128 Gcd128(__int128 a, __int128 b) {
  a = Abs128(a);
  b = Abs128(b);
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

__int128 FloorDiv128(__int128 a, __int128 b) {
  __int128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

class Evaluator {
 public:
  Evaluator(const SizeBindings& bindings, const SizeExpr& expr)
      : bindings_(bindings), expr_(expr) {}

  Expected<Rational> Eval(const Node& node, bool exact) {
    switch (node.kind) {
      case Kind::kConstant:
        return Rational{node.value, 1};
      case Kind::kVariable: {
        auto it = bindings_.find(node.name);
        if (it == bindings_.end()) {
          return InvalidArgument("size variable '" + node.name + "' is not bound (in '" + text() +
                                 "')");
        }
        return Rational{it->second, 1};
      }
      case Kind::kNegate: {
        TS_ASSIGN_OR_RETURN(Rational v, Eval(*node.operands[0], exact));
        return Normalize({-v.num, v.den});
      }
      case Kind::kAdd:
      case Kind::kSub:
      case Kind::kMul:
      case Kind::kDiv: {
        TS_ASSIGN_OR_RETURN(Rational a, Eval(*node.operands[0], exact));
        TS_ASSIGN_OR_RETURN(Rational b, Eval(*node.operands[1], exact));
        return Arithmetic(node.kind, a, b, exact);
      }
      case Kind::kCall:
        return Call(node, exact);
    }
    return MakeError(ErrorCode::kInternal, "unknown size expression node");
  }

 private:
  Expected<Rational> Normalize(Rational v) const {
    if (v.den < 0) {
      v.num = -v.num;
      v.den = -v.den;
    }
    __int128 g = Gcd128(v.num, v.den);
    if (g > 1) {
      v.num /= g;
      v.den /= g;
    }
    if (Abs128(v.num) > kLimit || v.den > kLimit) {
      return MakeError(ErrorCode::kOutOfRange, "size expression '" + text() + "' overflows int64");
    }
    return v;
  }

  Expected<Rational> Arithmetic(Kind kind, Rational a, Rational b, bool exact) const {
    switch (kind) {
      case Kind::kAdd:
        return Normalize({a.num * b.den + b.num * a.den, a.den * b.den});
      case Kind::kSub:
        return Normalize({a.num * b.den - b.num * a.den, a.den * b.den});
      case Kind::kMul:
        return Normalize({a.num * b.num, a.den * b.den});
      default:
        break;
    }
    if (b.num == 0) return InvalidArgument("division by zero in size expression '" + text() + "'");
    if (exact) return Normalize({a.num * b.den, a.den * b.num});
    // Outside Ceiling/Floor both sides are integers; C++ division truncates like the
    // graph engine's integer sizes.
    return Normalize({a.num / b.num, 1});
  }

  Expected<Rational> Call(const Node& node, bool exact) {
    if (node.name == "Ceiling" || node.name == "Floor") {
      TS_ASSIGN_OR_RETURN(Rational v, Eval(*node.operands[0], /*exact=*/true));
      __int128 q = FloorDiv128(v.num, v.den);
      if (node.name == "Ceiling" && q * v.den != v.num) ++q;
      return Normalize({q, 1});
    }
    TS_ASSIGN_OR_RETURN(Rational a, Eval(*node.operands[0], exact));
    TS_ASSIGN_OR_RETURN(Rational b, Eval(*node.operands[1], exact));
    bool a_less = a.num * b.den < b.num * a.den;
    if (node.name == "Max") return a_less ? b : a;
    if (node.name == "Min") return a_less ? a : b;
    // Mod takes the sign of the divisor (floor modulo), as sympy's and the graph engine's.
    if (b.num == 0) return InvalidArgument("Mod by zero in size expression '" + text() + "'");
    __int128 q = FloorDiv128(a.num * b.den, a.den * b.num);
    return Normalize({a.num * b.den - q * b.num * a.den, a.den * b.den});
  }

  // Only error messages need the text; most evaluations never print it.
  std::string text() const { return expr_.ToString(); }

  const SizeBindings& bindings_;
  const SizeExpr& expr_;
};

int Precedence(Kind kind) {
  switch (kind) {
    case Kind::kAdd:
    case Kind::kSub:
      return 1;
    case Kind::kMul:
    case Kind::kDiv:
      return 2;
    case Kind::kNegate:
      return 3;
    default:
      return 4;
  }
}

void Print(const Node& node, std::string& out) {
  auto operand = [&](const Node& child, bool parenthesize) {
    if (parenthesize) out += '(';
    Print(child, out);
    if (parenthesize) out += ')';
  };
  switch (node.kind) {
    case Kind::kConstant:
      out += std::to_string(node.value);
      return;
    case Kind::kVariable:
      out += node.name;
      return;
    case Kind::kNegate:
      out += '-';
      operand(*node.operands[0], Precedence(node.operands[0]->kind) < Precedence(node.kind));
      return;
    case Kind::kCall:
      out += node.name + "(";
      for (size_t i = 0; i < node.operands.size(); ++i) {
        if (i > 0) out += ", ";
        Print(*node.operands[i], out);
      }
      out += ')';
      return;
    default:
      break;
  }
  static constexpr std::string_view kSymbols[] = {"", "", "", " + ", " - ", " * ", " / "};
  int precedence = Precedence(node.kind);
  operand(*node.operands[0], Precedence(node.operands[0]->kind) < precedence);
  out += kSymbols[static_cast<int>(node.kind)];
  // A right operand of the same precedence keeps its parentheses (`a - (b - c)`,
  // `a * (b / c)`) so the text parses back to the same tree, and truncating division
  // gives the same value.
  operand(*node.operands[1], Precedence(node.operands[1]->kind) <= precedence);
}

void CollectVariables(const Node& node, std::set<std::string>& names) {
  if (node.kind == Kind::kVariable) names.insert(node.name);
  for (const NodePtr& operand : node.operands) CollectVariables(*operand, names);
}

}  // namespace

Expected<SizeExpr> SizeExpr::Parse(std::string_view text) {
  Parser parser(text);
  TS_ASSIGN_OR_RETURN(NodePtr root, parser.ParseAll());
  SizeExpr expr;
  expr.root_ = std::move(root);
  return expr;
}

SizeExpr::SizeExpr() : root_(MakeNode(Kind::kConstant, {})) {}

SizeExpr SizeExpr::Constant(int64_t value) {
  SizeExpr expr;
  // The parser reads a negative literal as a negated one; build the same tree.
  expr.root_ = value >= 0 ? MakeNode(Kind::kConstant, {}, "", value)
                          : MakeNode(Kind::kNegate, {MakeNode(Kind::kConstant, {}, "", -value)});
  return expr;
}

Expected<int64_t> SizeExpr::Evaluate(const SizeBindings& bindings) const {
  Evaluator evaluator(bindings, *this);
  TS_ASSIGN_OR_RETURN(Rational value, evaluator.Eval(*root_, /*exact=*/false));
  return static_cast<int64_t>(value.num);
}

std::vector<std::string> SizeExpr::Variables() const {
  std::set<std::string> names;
  CollectVariables(*root_, names);
  return {names.begin(), names.end()};
}

bool SizeExpr::IsConstant() const { return Variables().empty(); }

std::string SizeExpr::ToString() const {
  std::string out;
  Print(*root_, out);
  return out;
}

}  // namespace tilesmith::ascgraph
