#include "costmodel/ascend/pipe_model.h"

#include <algorithm>
#include <array>
#include <string>

namespace tilesmith::costmodel::ascend {
namespace {

// Every coefficient below is a public fact quoted by the spec ("Ascend tiling cost model",
// ../shared/specs/ascgraph.md); estimates built from them are marked where they are used.

// MTE2, a Load of S bytes: S / (9.9074 + 15.896 / block_dim) + 27.01.
constexpr double kLoadBytesPerCycle = 9.9074;
constexpr double kLoadContention = 15.896;
constexpr double kLoadCallCycles = 27.01;
// MTE3, an aligned Store of S bytes: S / (9.96 + 3.79 / block_dim) + 12.09.
constexpr double kStoreBytesPerCycle = 9.96;
constexpr double kStoreContention = 3.79;
constexpr double kStoreCallCycles = 12.09;
// Head costs: MTE2 1575 + 32.7·block_dim ("for large loads"; the spec gives no other
// figure, so it is charged whenever the kernel loads), MTE3 497, VEC 37.
constexpr double kMte2Head = 1575;
constexpr double kMte2HeadPerCore = 32.7;
constexpr double kMte3Head = 497;
constexpr double kVecHead = 37;
// Objective: max over pipes + 300·block_dim.
constexpr double kCyclesPerCore = 300;

// Vector calls, k·N + b. Published: fp16 Add k=0.0103 b=22.2; fp32 Add k=0.0206 b=23.2;
// fp32 Exp k=0.0307 b=28.0. Both Add figures give the same k per byte (0.00515), i.e. the
// vector unit streams a fixed number of bytes per cycle whatever the type; the estimates for
// other widths keep k proportional to the element width on that evidence.
constexpr double kFp16AddK = 0.0103, kFp16AddB = 22.2;
constexpr double kFp32AddK = 0.0206, kFp32AddB = 23.2;
constexpr double kFp32ExpK = 0.0307, kFp32ExpB = 28.0;

// One "simple" call (add, compare, select, copy, cast, one reduction step: one pass of the
// vector unit) at an element width: fp16/fp32 Add per the spec; 1-byte types take the fp16
// offset and half its slope; 8-byte types the fp32 offset and twice its slope (assumed).
VectorCost SimpleCall(int bytes) {
  double k_per_byte = kFp32AddK / 4;  // == kFp16AddK / 2
  return {k_per_byte * bytes, bytes <= 2 ? kFp16AddB : kFp32AddB, true, ""};
}

// One "transcendental" call (exp, ln, sqrt, reciprocal, division: the iterative units):
// fp32 Exp per the spec; other widths scale its slope by width and keep its offset (assumed).
VectorCost TranscendentalCall(int bytes) { return {kFp32ExpK / 4 * bytes, kFp32ExpB, true, ""}; }

// How many calls of each class one op makes. Composite ops are counted as the primitive
// calls of their usual expansion (an assumption: CANN's fused APIs may do better):
//   Sigmoid = 1 / (1 + exp(-x))               -> muls, exp, adds, reciprocal
//   Tanh    = (e^2x - 1) / (e^2x + 1)           -> muls, exp, adds, adds, div
//   Gelu    = x · sigmoid(1.5958·(x + 0.044715·x³)) -> 8 simple (x², x³, muls, add, muls,
//             neg, adds, mul) + exp + reciprocal
//   Pow     = exp(y · ln x)                     -> ln, mul, exp
//   Erf     = a rational approximation          -> 8 multiply-adds + one division
//   Sign    = (x > 0) - (x < 0)                 -> 2 compares + sub
//   Isnan/IsInf/IsFinite -> compare + select; FloorDiv -> div + floor;
//   Remainder = x1 - floor(x1 / x2) · x2        -> div, floor, mul, sub
//   LeakyRelu = max(x, α·x); ClipByValue = min(max(x, lo), hi)
//   Transpose: a scatter pass and a copy pass through the unified buffer.
struct OpShape {
  std::string_view name;
  int simple;
  int transcendental;
  bool tmp;
};
constexpr std::array kOps = {
    // Elementwise arithmetic, logic and data movement inside the unified buffer.
    OpShape{"Abs", 1, 0, false},
    OpShape{"Neg", 1, 0, false},
    OpShape{"Add", 1, 0, false},
    OpShape{"Sub", 1, 0, false},
    OpShape{"Mul", 1, 0, false},
    OpShape{"Muls", 1, 0, false},
    OpShape{"Adds", 1, 0, false},
    OpShape{"Max", 1, 0, false},
    OpShape{"Min", 1, 0, false},
    OpShape{"Maximum", 1, 0, false},
    OpShape{"Minimum", 1, 0, false},
    OpShape{"Square", 1, 0, false},
    OpShape{"Relu", 1, 0, false},
    OpShape{"Axpy", 1, 0, false},
    OpShape{"LeakyRelu", 2, 0, false},
    OpShape{"ClipByValue", 2, 0, false},
    OpShape{"Select", 1, 0, false},
    OpShape{"Where", 1, 0, false},
    OpShape{"Eq", 1, 0, false},
    OpShape{"Ne", 1, 0, false},
    OpShape{"Gt", 1, 0, false},
    OpShape{"Ge", 1, 0, false},
    OpShape{"Lt", 1, 0, false},
    OpShape{"Le", 1, 0, false},
    OpShape{"LogicalAnd", 1, 0, false},
    OpShape{"LogicalOr", 1, 0, false},
    OpShape{"LogicalNot", 1, 0, false},
    OpShape{"Cast", 1, 0, false},
    OpShape{"Broadcast", 1, 0, false},
    OpShape{"Concat", 1, 0, false},
    OpShape{"Transpose", 2, 0, true},
    // Reductions: one accumulation pass over the input (Mean's final scaling is on the much
    // smaller output and is left out); the scratch is the reduce API's work buffer.
    OpShape{"Sum", 1, 0, true},
    OpShape{"Mean", 1, 0, true},
    OpShape{"Prod", 1, 0, true},
    OpShape{"Any", 1, 0, true},
    OpShape{"All", 1, 0, true},
    // The iterative units.
    OpShape{"Exp", 0, 1, false},
    OpShape{"Ln", 0, 1, false},
    OpShape{"Log", 0, 1, false},
    OpShape{"Sqrt", 0, 1, false},
    OpShape{"Rsqrt", 0, 1, false},
    OpShape{"Reciprocal", 0, 1, false},
    OpShape{"Div", 0, 1, false},
    OpShape{"TrueDiv", 0, 1, false},
    // Composites (see above).
    OpShape{"Sigmoid", 2, 2, true},
    OpShape{"Tanh", 3, 2, true},
    OpShape{"Gelu", 8, 2, true},
    OpShape{"Pow", 1, 2, true},
    OpShape{"Erf", 8, 1, true},
    OpShape{"Sign", 3, 0, false},
    OpShape{"FloorDiv", 1, 1, false},
    OpShape{"Remainder", 3, 1, true},
    OpShape{"Isnan", 2, 0, false},
    OpShape{"IsInf", 2, 0, false},
    OpShape{"IsFinite", 2, 0, false},
    OpShape{"BitwiseAnd", 1, 0, false},
    OpShape{"MaskedFill", 1, 0, false},
    // A Scalar fills its buffer once per tile (Duplicate); Ub2ub copies inside the buffer.
    OpShape{"Scalar", 1, 0, false},
    OpShape{"Ub2ub", 1, 0, false},
};

}  // namespace

std::string_view PipeName(Pipe pipe) {
  switch (pipe) {
    case Pipe::kMte2:
      return "MTE2";
    case Pipe::kMte3:
      return "MTE3";
    case Pipe::kVec:
      return "VEC";
  }
  return "?";
}

double PipeCycles::Max() const { return std::max({mte2, mte3, vec}); }

Pipe PipeCycles::Bottleneck() const {
  if (mte2 >= mte3 && mte2 >= vec) return Pipe::kMte2;
  return mte3 >= vec ? Pipe::kMte3 : Pipe::kVec;
}

double LoadCycles(double bytes, int64_t block_dim) {
  return bytes / (kLoadBytesPerCycle + kLoadContention / static_cast<double>(block_dim)) +
         kLoadCallCycles;
}

double StoreCycles(double bytes, int64_t block_dim) {
  return bytes / (kStoreBytesPerCycle + kStoreContention / static_cast<double>(block_dim)) +
         kStoreCallCycles;
}

double HeadCycles(Pipe pipe, int64_t block_dim) {
  switch (pipe) {
    case Pipe::kMte2:
      return kMte2Head + kMte2HeadPerCore * static_cast<double>(block_dim);
    case Pipe::kMte3:
      return kMte3Head;
    case Pipe::kVec:
      return kVecHead;
  }
  return 0;
}

double Objective(const PipeCycles& cycles, int64_t block_dim) {
  return cycles.Max() + kCyclesPerCore * static_cast<double>(block_dim);
}

Expected<VectorOpInfo> VectorOp(std::string_view type, hlo::PrimitiveType dtype) {
  auto op = std::find_if(kOps.begin(), kOps.end(),
                         [&](const OpShape& shape) { return shape.name == type; });
  if (op == kOps.end()) {
    return Unimplemented("op '" + std::string(type) + "' has no Ascend vector cost estimate");
  }
  int bytes = std::max(1, hlo::UnpackedByteWidth(dtype));
  VectorOpInfo info;
  info.needs_tmp_buffer = op->tmp;
  VectorCost simple = SimpleCall(bytes);
  VectorCost transcendental = TranscendentalCall(bytes);
  info.cost.k = op->simple * simple.k + op->transcendental * transcendental.k;
  info.cost.b = op->simple * simple.b + op->transcendental * transcendental.b;
  if (type == "Add" && dtype == hlo::PrimitiveType::kF16) {
    info.cost = {kFp16AddK, kFp16AddB, false, "spec: fp16 Add"};
  } else if (type == "Add" && dtype == hlo::PrimitiveType::kF32) {
    info.cost = {kFp32AddK, kFp32AddB, false, "spec: fp32 Add"};
  } else if (type == "Exp" && dtype == hlo::PrimitiveType::kF32) {
    info.cost = {kFp32ExpK, kFp32ExpB, false, "spec: fp32 Exp"};
  } else {
    info.cost.basis = "assumed: " + std::to_string(op->simple) + " simple + " +
                      std::to_string(op->transcendental) + " transcendental call(s) at " +
                      std::to_string(bytes) + "-byte width";
  }
  return info;
}

}  // namespace tilesmith::costmodel::ascend
