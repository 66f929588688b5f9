// The elementwise recipes of ops.cc as HLO. Every function here receives operands that
// already have the output's dims; broadcasting and re-indexing happened in lower.cc.
#include <cmath>
#include <numbers>

#include "compiler/ascgraph/lower_internal.h"

namespace tilesmith::ascgraph::internal {
namespace {

using hlo::PrimitiveType;

// Small helpers so the recipes below read like the formulas they implement.
class Emitter {
 public:
  Emitter(HloTextBuilder& builder, PrimitiveType type, std::vector<int64_t> dims)
      : builder_(builder), type_(type), dims_(std::move(dims)) {}

  HloValue Op(std::string_view opcode, const std::vector<HloValue>& operands) {
    return builder_.Add(operands[0].type, dims_, opcode, operands);
  }
  HloValue Constant(double value) { return Constant(type_, value); }
  HloValue Constant(PrimitiveType type, double value) {
    return builder_.Splat(type, dims_, ScalarLiteral(type, value));
  }
  HloValue Compare(const HloValue& a, const HloValue& b, std::string_view direction) {
    return builder_.Add(PrimitiveType::kPred, dims_, "compare", {a, b},
                        "direction=" + std::string(direction));
  }
  HloValue Select(const HloValue& condition, const HloValue& a, const HloValue& b) {
    return builder_.Add(a.type, dims_, "select", {condition, a, b});
  }

 private:
  HloTextBuilder& builder_;
  PrimitiveType type_;
  std::vector<int64_t> dims_;
};

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): the tanh form Ascend's Gelu computes.
HloValue Gelu(Emitter& e, const HloValue& x) {
  HloValue cube = e.Op("multiply", {e.Op("multiply", {x, x}), x});
  HloValue inner = e.Op("add", {x, e.Op("multiply", {e.Constant(0.044715), cube})});
  HloValue scaled = e.Op("multiply", {e.Constant(std::sqrt(2.0 / std::numbers::pi)), inner});
  HloValue one_plus = e.Op("add", {e.Constant(1.0), e.Op("tanh", {scaled})});
  return e.Op("multiply", {e.Op("multiply", {e.Constant(0.5), x}), one_plus});
}

// x1 - floor(x1 / x2) * x2 without the rounding of the quotient: the truncated remainder,
// moved into the divisor's sign when the signs differ.
HloValue FloorRemainder(Emitter& e, const HloValue& x, const HloValue& y) {
  HloValue r = e.Op("remainder", {x, y});
  HloValue zero = e.Constant(0.0);
  HloValue nonzero = e.Compare(r, zero, "NE");
  HloValue signs_differ = e.Compare(e.Compare(r, zero, "LT"), e.Compare(y, zero, "LT"), "NE");
  return e.Select(e.Op("and", {nonzero, signs_differ}), e.Op("add", {r, y}), r);
}

}  // namespace

std::string ScalarLiteral(PrimitiveType type, double value) {
  if (type == PrimitiveType::kPred) return value != 0 ? "true" : "false";
  if (hlo::IsIntegral(type)) return std::to_string(static_cast<int64_t>(value));
  return NumberText(value);
}

std::string LowestLiteral(PrimitiveType type) {
  if (type == PrimitiveType::kPred) return "false";
  if (hlo::IsUnsignedIntegral(type)) return "0";
  if (hlo::IsSignedIntegral(type)) {
    int bits = hlo::BitWidth(type);
    return bits == 64 ? std::to_string(INT64_MIN) : std::to_string(-(int64_t{1} << (bits - 1)));
  }
  return "-inf";
}

std::string HighestLiteral(PrimitiveType type) {
  if (type == PrimitiveType::kPred) return "true";
  int bits = hlo::BitWidth(type);
  if (hlo::IsUnsignedIntegral(type)) {
    return bits == 64 ? std::to_string(UINT64_MAX) : std::to_string((uint64_t{1} << bits) - 1);
  }
  if (hlo::IsSignedIntegral(type)) {
    return bits == 64 ? std::to_string(INT64_MAX) : std::to_string((int64_t{1} << (bits - 1)) - 1);
  }
  return "inf";
}

HloValue ToPred(HloTextBuilder& builder, const HloValue& value) {
  if (value.type == PrimitiveType::kPred) return value;
  HloValue zero = builder.Splat(value.type, value.dims, ScalarLiteral(value.type, 0));
  return builder.Add(PrimitiveType::kPred, value.dims, "compare", {value, zero}, "direction=NE");
}

HloValue Convert(HloTextBuilder& builder, const HloValue& value, PrimitiveType type) {
  if (value.type == type) return value;
  return builder.Add(type, value.dims, "convert", {value});
}

Expected<HloValue> EmitElementwise(HloTextBuilder& builder, const OpInfo& op, const Node& node,
                                   const std::vector<HloValue>& in, PrimitiveType output_type) {
  const std::vector<int64_t>& dims = in[0].dims;
  Emitter e(builder, output_type, dims);
  switch (op.recipe) {
    case Recipe::kHlo:
      return builder.Add(output_type, dims, op.hlo, in);
    case Recipe::kCast:
      return Convert(builder, in[0], output_type);
    case Recipe::kCompare:
      return Convert(builder, e.Compare(in[0], in[1], op.hlo), output_type);
    case Recipe::kLogical: {
      std::vector<HloValue> predicates;
      for (const HloValue& value : in) predicates.push_back(ToPred(builder, value));
      return Convert(builder, e.Op(op.hlo, predicates), output_type);
    }
    case Recipe::kPredicate: {
      HloValue test;
      if (op.hlo == "isnan") {
        test = e.Compare(in[0], in[0], "NE");
      } else if (op.hlo == "isinf") {
        HloValue inf = builder.Splat(in[0].type, dims, "inf");
        test = e.Compare(e.Op("abs", {in[0]}), inf, "EQ");
      } else {
        test = builder.Add(PrimitiveType::kPred, dims, op.hlo, in);
      }
      return Convert(builder, test, output_type);
    }
    case Recipe::kRelu:
      return e.Op("maximum", {in[0], e.Constant(0)});
    case Recipe::kLeakyRelu: {
      HloValue slope = e.Constant(*node.FloatAttr("negative_slope"));
      HloValue positive = e.Compare(in[0], e.Constant(0), "GT");
      return e.Select(positive, in[0], e.Op("multiply", {in[0], slope}));
    }
    case Recipe::kGelu:
      return Gelu(e, in[0]);
    case Recipe::kReciprocal:
      return e.Op("divide", {e.Constant(1), in[0]});
    case Recipe::kAxpy: {
      HloValue alpha = e.Constant(*node.FloatAttr("alpha"));
      return e.Op("add", {in[0], e.Op("multiply", {alpha, in[1]})});
    }
    case Recipe::kTrueDiv:
      return e.Op("divide",
                  {Convert(builder, in[0], output_type), Convert(builder, in[1], output_type)});
    case Recipe::kFloorDiv:
      if (!hlo::IsFloatingPoint(output_type)) {
        return Unimplemented("node '" + node.name + "': FloorDiv of " +
                             std::string(hlo::PrimitiveTypeName(output_type)) +
                             " (only floating-point types)");
      }
      return e.Op("floor", {e.Op("divide", in)});
    case Recipe::kRemainder:
      return FloorRemainder(e, in[0], in[1]);
    case Recipe::kSelect:
      return e.Select(ToPred(builder, in[0]), in[1], in[2]);
    case Recipe::kMaskedFill:
      return e.Select(ToPred(builder, in[1]), in[2], in[0]);
    case Recipe::kClip:
      return builder.Add(output_type, dims, "clamp", {in[1], in[0], in[2]});
    case Recipe::kMean:
      break;
  }
  return MakeError(ErrorCode::kInternal,
                   "node '" + node.name + "': recipe of op '" + node.type + "' is not elementwise");
}

}  // namespace tilesmith::ascgraph::internal
