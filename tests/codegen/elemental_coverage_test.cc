// Every elementwise op the evaluator supports, and the ops that move or reduce elements, on
// every element type: compiled for the host and compared with the evaluator bit for bit (NaN
// payloads aside) on inputs that include each type's special values (±0, ±inf, NaN,
// denormals, the integer extremes, shift amounts around the width). The data files check
// chosen cases; this checks the whole (op × type) matrix, so a combination the elemental
// emitter lacks or gets wrong cannot hide. Ops the parser or the evaluator reject for a
// type are skipped; the others of a family go into one fusion per type.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/parser.h"
#include "tests/codegen/host_check.h"

namespace tilesmith::codegen {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;

std::string TypeName(PrimitiveType type) { return std::string(hlo::PrimitiveTypeName(type)); }

// The values every input of `type` cycles through.
std::vector<double> RealSpecials(PrimitiveType type) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> values = {0,    -0.0, 1,    -1,    0.5,  -2.5, 3,     0.1,  -0.3,
                                7.25, 1e-3, -100, 65504, 1e30, kInf, -kInf, kNan, -kNan};
  if (type == PrimitiveType::kF32) values.push_back(1e-40);  // denormal
  if (type == PrimitiveType::kF64) values.push_back(1e-310);
  return values;
}

std::vector<int64_t> IntSpecials(PrimitiveType type) {
  int bits = hlo::BitWidth(type);
  int64_t max = bits >= 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  int64_t min = bits >= 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
  if (hlo::IsUnsignedIntegral(type)) max = bits >= 64 ? -1 : (int64_t{1} << bits) - 1;
  return {0, 1, -1, 2, 3, 7, -8, max, min, max - 1, min + 1, bits - 1, bits, bits + 1, 0x5A5A5A5A};
}

std::vector<std::complex<double>> ComplexSpecials() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  return {{0, 0},   {-0.0, 0}, {1, 0},    {0, 1},    {1.5, -2},    {-3, 0.5},  {0.25, 4}, {2, -0.0},
          {-1, -1}, {kInf, 0}, {0, kInf}, {kNan, 0}, {1e20, 1e20}, {-kInf, 1}, {0.3, 0.3}};
}

// How many distinct special values a type has (inputs cycle through them).
size_t SpecialCount(PrimitiveType type) {
  if (hlo::IsComplex(type)) return ComplexSpecials().size();
  if (hlo::IsFloatingPoint(type)) return RealSpecials(type).size();
  if (type == PrimitiveType::kPred) return 2;
  return IntSpecials(type).size();
}

// Element i of an input is special number `pick(i)` of its type.
Literal MakeInput(PrimitiveType type, std::vector<int64_t> dims,
                  const std::function<size_t(int64_t)>& pick) {
  Literal literal(hlo::Shape::Array(type, std::move(dims)));
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    size_t k = pick(i);
    if (hlo::IsComplex(type)) {
      std::vector<std::complex<double>> values = ComplexSpecials();
      literal.SetComplex(i, values[k % values.size()]);
    } else if (hlo::IsFloatingPoint(type)) {
      std::vector<double> values = RealSpecials(type);
      literal.SetDouble(i, values[k % values.size()]);
    } else if (type == PrimitiveType::kPred) {
      literal.SetInt(i, static_cast<int64_t>(k % 2));
    } else {
      std::vector<int64_t> values = IntSpecials(type);
      literal.SetInt(i, values[k % values.size()]);
    }
  }
  return literal;
}

// One op of a family: the instruction text and what it produces.
struct Op {
  std::string text;  // "r3 = f32[9] exponential(p0)"
};

// Builds `computations ENTRY e { parameters; ops; ROOT tuple }`.
std::string Module(const std::string& parameters, const std::vector<Op>& ops,
                   const std::string& computations = "") {
  std::ostringstream text;
  text << computations << "ENTRY e {\n" << parameters;
  std::vector<std::string> names;
  std::string shapes;
  for (const Op& op : ops) {
    text << "  " << op.text << "\n";
    std::string name = op.text.substr(0, op.text.find(' '));
    std::string shape = op.text.substr(op.text.find('=') + 2);
    shape = shape.substr(0, shape.find(' '));
    names.push_back(name);
    shapes += (shapes.empty() ? "" : ", ") + shape;
  }
  text << "  ROOT out = (" << shapes << ") tuple(";
  for (size_t i = 0; i < names.size(); ++i) text << (i > 0 ? ", " : "") << names[i];
  text << ")\n}\n";
  return text.str();
}

// Keeps the ops the parser and the evaluator accept on `args`, puts them in one kernel, runs it on
// the host and compares every output with the evaluator.
void CheckOps(const std::string& what, const std::string& parameters, const std::vector<Op>& ops,
              const std::vector<Literal>& args, const std::string& computations = "") {
  std::vector<Op> supported;
  for (const Op& op : ops) {
    // Shape inference rejects ops the type does not have (exponential on s8).
    auto module = hlo::ParseHloModule(Module(parameters, {op}, computations), what);
    if (module && hlo::Evaluate(*(*module)->fusion(), args)) supported.push_back(op);
  }
  if (supported.empty()) return;
  std::string text = Module(parameters, supported, computations);
  auto module = hlo::ParseHloModule(text, what);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  const hlo::HloComputation& fusion = *(*module)->fusion();
  auto expected = hlo::Evaluate(fusion, args);
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  // The host calls the evaluator's libm and mirrors its operation order: bit for bit.
  auto comparisons =
      CheckOnHost(fusion, args, *expected, HostOptions{.vector_math = false}, Match::kBits);
  ASSERT_TRUE(comparisons.has_value()) << what << ": " << comparisons.error().message;
  ASSERT_EQ(comparisons->size(), supported.size());
  for (size_t i = 0; i < supported.size(); ++i) {
    EXPECT_TRUE((*comparisons)[i].matches)
        << what << ": " << supported[i].text << ": " << (*comparisons)[i].first_mismatch;
  }
}

std::string Shape(PrimitiveType type, int64_t n) {
  return TypeName(type) + "[" + std::to_string(n) + "]";
}

class ElementalCoverageTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(ElementalCoverageTest, UnaryOps) {
  PrimitiveType type = GetParam();
  int64_t n = static_cast<int64_t>(SpecialCount(type));
  PrimitiveType real = hlo::IsComplex(type) ? hlo::ComplexComponentType(type) : type;
  const char* same[] = {"negate",
                        "sign",
                        "exponential",
                        "exponential-minus-one",
                        "log",
                        "log-plus-one",
                        "tanh",
                        "logistic",
                        "erf",
                        "sqrt",
                        "rsqrt",
                        "cbrt",
                        "sin",
                        "cos",
                        "tan",
                        "acos",
                        "acosh",
                        "asin",
                        "asinh",
                        "atanh",
                        "cosh",
                        "sinh",
                        "floor",
                        "ceil",
                        "round-nearest-afz",
                        "round-nearest-even",
                        "not",
                        "popcnt",
                        "clz",
                        "copy"};
  std::vector<Op> ops;
  int k = 0;
  for (const char* name : same) {
    ops.push_back({"r" + std::to_string(k++) + " = " + Shape(type, n) + " " + name + "(p0)"});
  }
  for (const char* name : {"abs", "real", "imag"}) {
    ops.push_back({"r" + std::to_string(k++) + " = " + Shape(real, n) + " " + name + "(p0)"});
  }
  ops.push_back(
      {"r" + std::to_string(k++) + " = " + Shape(PrimitiveType::kPred, n) + " is-finite(p0)"});
  for (auto [e, m] : {std::pair{5, 10}, {8, 7}, {4, 3}, {2, 1}, {8, 0}, {11, 52}}) {
    ops.push_back({"r" + std::to_string(k++) + " = " + Shape(type, n) +
                   " reduce-precision(p0), exponent_bits=" + std::to_string(e) +
                   ", mantissa_bits=" + std::to_string(m)});
  }
  std::vector<Literal> args;
  args.push_back(MakeInput(type, {n}, [](int64_t i) { return static_cast<size_t>(i); }));
  CheckOps(TypeName(type) + " unary", "  p0 = " + Shape(type, n) + " parameter(0)\n", ops, args);
}

TEST_P(ElementalCoverageTest, BinaryAndTernaryOps) {
  PrimitiveType type = GetParam();
  int64_t m = static_cast<int64_t>(SpecialCount(type));
  int64_t n = m * m;  // every pair of specials
  const char* names[] = {"add",
                         "subtract",
                         "multiply",
                         "divide",
                         "remainder",
                         "maximum",
                         "minimum",
                         "power",
                         "atan2",
                         "and",
                         "or",
                         "xor",
                         "shift-left",
                         "shift-right-logical",
                         "shift-right-arithmetic"};
  std::vector<Op> ops;
  int k = 0;
  for (const char* name : names) {
    ops.push_back({"r" + std::to_string(k++) + " = " + Shape(type, n) + " " + name + "(p0, p1)"});
  }
  if (type == PrimitiveType::kF32 || type == PrimitiveType::kF64) {
    PrimitiveType complex =
        type == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128;
    ops.push_back({"r" + std::to_string(k++) + " = " + Shape(complex, n) + " complex(p0, p1)"});
  }
  ops.push_back({"r" + std::to_string(k++) + " = " + Shape(type, n) + " clamp(p0, p1, p0)"});
  ops.push_back({"r" + std::to_string(k++) + " = " + Shape(type, n) + " select(p2, p0, p1)"});
  for (const char* direction : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    for (const char* kind :
         {"", ", type=FLOAT", ", type=TOTALORDER", ", type=SIGNED", ", type=UNSIGNED"}) {
      ops.push_back({"r" + std::to_string(k++) + " = " + Shape(PrimitiveType::kPred, n) +
                     " compare(p0, p1), direction=" + direction + kind});
    }
  }
  std::vector<Literal> args;
  args.push_back(MakeInput(type, {n}, [m](int64_t i) { return static_cast<size_t>(i / m); }));
  args.push_back(MakeInput(type, {n}, [m](int64_t i) { return static_cast<size_t>(i % m); }));
  args.push_back(
      MakeInput(PrimitiveType::kPred, {n}, [](int64_t i) { return static_cast<size_t>(i / 3); }));
  CheckOps(TypeName(type) + " binary",
           "  p0 = " + Shape(type, n) + " parameter(0)\n  p1 = " + Shape(type, n) +
               " parameter(1)\n  p2 = pred[" + std::to_string(n) + "] parameter(2)\n",
           ops, args);
}

TEST_P(ElementalCoverageTest, ConvertToEveryType) {
  PrimitiveType type = GetParam();
  int64_t n = static_cast<int64_t>(SpecialCount(type));
  std::vector<Op> ops;
  int k = 0;
  for (PrimitiveType to : hlo::AllArrayTypes()) {
    ops.push_back({"r" + std::to_string(k++) + " = " + Shape(to, n) + " convert(p0)"});
  }
  std::vector<Literal> args;
  args.push_back(MakeInput(type, {n}, [](int64_t i) { return static_cast<size_t>(i); }));
  CheckOps(TypeName(type) + " convert", "  p0 = " + Shape(type, n) + " parameter(0)\n", ops, args);
}

// Integers past f32's 24 bits and f64 values between narrow-float neighbours: converts
// to narrow floats must round once, as the evaluator does.
TEST(ElementalCoverageTest, ConvertsToNarrowFloatsRoundOnce) {
  std::vector<Op> ops;
  int k = 0;
  for (PrimitiveType to : hlo::AllArrayTypes()) {
    if (!hlo::IsNarrowFloat(to)) continue;
    for (const char* from : {"p0", "p1", "p2"}) {
      ops.push_back({"r" + std::to_string(k++) + " = " + Shape(to, 64) + " convert(" + from + ")"});
    }
  }
  std::vector<Literal> args(3);
  args[0] = Literal(hlo::Shape::Array(PrimitiveType::kS64, {64}));
  args[1] = Literal(hlo::Shape::Array(PrimitiveType::kU64, {64}));
  args[2] = Literal(hlo::Shape::Array(PrimitiveType::kF64, {64}));
  for (int64_t i = 0; i < 64; ++i) {
    // 2^k + 2^(k-9) + 1 rounds up in bf16 only because of its lowest bit.
    int shift = static_cast<int>(10 + i % 50);
    int64_t value = (int64_t{1} << shift) + (int64_t{1} << (shift - 9)) + 1;
    args[0].SetInt(i, i % 2 == 0 ? value : -value);
    args[1].SetInt(i, static_cast<int64_t>(~uint64_t{0} - static_cast<uint64_t>(i)));
    double near_tie = std::ldexp(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), shift - 30);
    args[2].SetDouble(i, i % 3 == 0 ? -near_tie : near_tie);
  }
  CheckOps(
      "narrow rounding",
      "  p0 = s64[64] parameter(0)\n  p1 = u64[64] parameter(1)\n  p2 = f64[64] parameter(2)\n",
      ops, args);
}

TEST_P(ElementalCoverageTest, BitcastConvertToEveryType) {
  PrimitiveType type = GetParam();
  int from_bits = hlo::BitWidth(type);
  const int64_t n = 64;
  std::string parameter = "  p0 = " + Shape(type, n) + " parameter(0)\n";
  std::vector<Literal> args;
  args.push_back(MakeInput(type, {n}, [](int64_t i) { return static_cast<size_t>(i * 7); }));
  std::vector<Op> ops;
  int k = 0;
  for (PrimitiveType to : hlo::AllArrayTypes()) {
    int to_bits = hlo::BitWidth(to);
    std::string name = "r" + std::to_string(k++);
    if (to_bits == from_bits) {
      ops.push_back({name + " = " + Shape(to, n) + " bitcast-convert(p0)"});
    } else if (to_bits < from_bits && from_bits % to_bits == 0) {
      ops.push_back({name + " = " + TypeName(to) + "[" + std::to_string(n) + "," +
                     std::to_string(from_bits / to_bits) + "] bitcast-convert(p0)"});
    } else if (to_bits > from_bits && to_bits % from_bits == 0) {
      // Widening reads a minor dim of pieces: the input is reshaped to provide it.
      int64_t pieces = to_bits / from_bits;
      std::string pieces_shape =
          TypeName(type) + "[" + std::to_string(n / pieces) + "," + std::to_string(pieces) + "]";
      CheckOps(TypeName(type) + " bitcast-convert to " + TypeName(to),
               parameter + "  pieces = " + pieces_shape + " reshape(p0)\n",
               {{name + " = " + Shape(to, n / pieces) + " bitcast-convert(pieces)"}}, args);
    }
  }
  CheckOps(TypeName(type) + " bitcast-convert", parameter, ops, args);
}

// Ops that move or combine elements, on every element type: what they read depends only
// on indices, so each type's storage (packed sub-byte, pred bytes, complex pairs) is what
// they exercise.
TEST_P(ElementalCoverageTest, DataMovementAndReductions) {
  PrimitiveType type = GetParam();
  std::string t = TypeName(type);
  auto shape = [&](const std::string& dims) { return t + "[" + dims + "]"; };
  // Reducers: or for pred, add for the rest.
  std::string combine = type == PrimitiveType::kPred ? "or" : "add";
  std::string computations = "combine {\n  a = " + t + "[] parameter(0)\n  b = " + t +
                             "[] parameter(1)\n  ROOT c = " + t + "[] " + combine + "(a, b)\n}\n\n";
  std::vector<Op> ops = {
      {"transpose = " + shape("6,4") + " transpose(p0), dimensions={1,0}"},
      {"reverse = " + shape("4,6") + " reverse(p0), dimensions={0,1}"},
      {"slice = " + shape("2,3") + " slice(p0), slice={[1:3], [0:6:2]}"},
      {"pad = " + shape("9,8") + " pad(p0, p1), padding=1_1_1x0_2"},
      {"concatenate = " + shape("4,12") + " concatenate(p0, p0), dimensions={1}"},
      {"broadcast = " + shape("3,4,6") + " broadcast(p0), dimensions={1,2}"},
      {"reshape = " + shape("24") + " reshape(p0)"},
      {"relayout = " + shape("4,6") + "{0,1} copy(p0)"},
      {"iota = " + shape("4,6") + " iota(), iota_dimension=1"},
      {"dynamic_slice = " + shape("2,3") + " dynamic-slice(p0, i0, i1), dynamic_slice_sizes={2,3}"},
      {"update = " + shape("4,6") + " dynamic-update-slice(p0, p2, i0, i1)"},
      {"reduce = " + shape("4") + " reduce(p0, p1), dimensions={1}, to_apply=combine"},
      {"reduce_all = " + shape("") + " reduce(p0, p1), dimensions={0,1}, to_apply=combine"},
      {"window = " + shape("3,2") +
       " reduce-window(p0, p1), window={size=2x3 stride=1x2}, to_apply=combine"},
      {"map = " + shape("4,6") + " map(p0, p0), dimensions={0,1}, to_apply=combine"},
  };
  std::vector<Literal> args;
  args.push_back(MakeInput(type, {4, 6}, [](int64_t i) { return static_cast<size_t>(i); }));
  args.push_back(MakeInput(type, {}, [](int64_t) { return size_t{2}; }));
  args.push_back(MakeInput(type, {2, 3}, [](int64_t i) { return static_cast<size_t>(i + 5); }));
  args.push_back(Literal(hlo::Shape::Scalar(PrimitiveType::kS32)));
  args.push_back(Literal(hlo::Shape::Scalar(PrimitiveType::kS32)));
  args[3].SetInt(0, 1);
  args[4].SetInt(0, 5);  // clamped to 3
  CheckOps(t + " data movement",
           "  p0 = " + shape("4,6") + " parameter(0)\n  p1 = " + shape("") +
               " parameter(1)\n  p2 = " + shape("2,3") +
               " parameter(2)\n  i0 = s32[] parameter(3)\n  i1 = s32[] parameter(4)\n",
           ops, args, computations);
}

// dynamic-slice and dynamic-update-slice start indices of this (integer) type, every
// special value: negative, huge, u64 above INT64_MAX; starts clamp as the evaluator clamps.
TEST_P(ElementalCoverageTest, DynamicSliceStartsOfThisType) {
  PrimitiveType type = GetParam();
  if (!hlo::IsIntegral(type)) return;
  std::string t = TypeName(type);
  std::vector<Op> ops;
  std::string parameters = "  p0 = f32[9,7] parameter(0)\n  u = f32[2,3] parameter(1)\n";
  std::vector<Literal> args;
  args.push_back(
      MakeInput(PrimitiveType::kF32, {9, 7}, [](int64_t i) { return static_cast<size_t>(i); }));
  args.push_back(
      MakeInput(PrimitiveType::kF32, {2, 3}, [](int64_t i) { return static_cast<size_t>(i + 3); }));
  size_t count = IntSpecials(type).size();
  for (size_t k = 0; k < count; ++k) {
    std::string index = "i" + std::to_string(k);
    parameters += "  " + index + " = " + t + "[] parameter(" + std::to_string(k + 2) + ")\n";
    args.push_back(MakeInput(type, {}, [k](int64_t) { return k; }));
    std::string other = "i" + std::to_string((k + 1) % count);
    ops.push_back({"s" + std::to_string(k) + " = f32[2,3] dynamic-slice(p0, " + index + ", " +
                   other + "), dynamic_slice_sizes={2,3}"});
    ops.push_back({"d" + std::to_string(k) + " = f32[9,7] dynamic-update-slice(p0, u, " + other +
                   ", " + index + ")"});
  }
  CheckOps(t + " dynamic-slice starts", parameters, ops, args);
}

std::vector<PrimitiveType> ArrayTypes() {
  return {hlo::AllArrayTypes().begin(), hlo::AllArrayTypes().end()};
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ElementalCoverageTest, ::testing::ValuesIn(ArrayTypes()),
                         [](const ::testing::TestParamInfo<PrimitiveType>& info) {
                           return TypeName(info.param);
                         });

}  // namespace
}  // namespace tilesmith::codegen
