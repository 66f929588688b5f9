// The AscIR ops tilesmith understands: how many inputs each takes, which dtypes must agree,
// and how it lowers to HLO. One table (ops.cc) serves validation and lowering, so an op is
// either fully supported or rejected up front with its name.
#pragma once

#include <string>
#include <string_view>

#include "support/status.h"

namespace tilesmith::ascgraph {

/// What role a node plays in the loop nest; validation and lowering branch on it.
enum class OpKind {
  kData,         ///< graph input (`index`)
  kOutput,       ///< graph output (`index`)
  kScalar,       ///< a constant (`value`) filling its output
  kMove,         ///< Load, Store, Nop: the value unchanged, re-indexed by the output attrs
  kBroadcast,    ///< repeats 1 on the input, the full size on the output
  kElementwise,  ///< one output element from the same element of each input
  kReduce,       ///< reduced axes keep repeats 1 on the output
  kTranspose,    ///< the output lists the input's axes in another order
  kConcat,       ///< inputs joined along the one axis where their repeats differ
};

/// How an elementwise op or a reduction is built from HLO. Most are one HLO op (`kHlo`,
/// named by `OpInfo::hlo`; for reductions the combiner); the rest are small subgraphs.
enum class Recipe {
  kHlo,         ///< `hlo(x, …)` with every operand in the output type
  kCast,        ///< convert to the output dtype
  kCompare,     ///< compare(x1, x2), direction=`hlo`, then to the output dtype
  kLogical,     ///< operands as pred (x != 0), `hlo` (and/or/not), then to the output dtype;
                ///< for Any/All the reducer is `hlo` over pred
  kPredicate,   ///< a float test (`hlo`: isnan, isinf, isfinite), then to the output dtype
  kRelu,        ///< max(x, 0)
  kLeakyRelu,   ///< x > 0 ? x : x * negative_slope
  kGelu,        ///< tanh approximation
  kReciprocal,  ///< 1 / x
  kAxpy,        ///< x1 + alpha * x2
  kTrueDiv,     ///< both operands converted to the output type, then divide
  kFloorDiv,    ///< floor(x1 / x2)
  kRemainder,   ///< x1 - floor(x1 / x2) * x2 (the sign of the divisor)
  kSelect,      ///< x1 ? x2 : x3, x1 any type (nonzero is true)
  kMaskedFill,  ///< mask ? value : x for inputs (x, mask, value)
  kClip,        ///< clamp(x2, x1, x3)
  kMean,        ///< reduce with add, then divide by the number of reduced elements
};

/// Which operand dtypes must equal which.
enum class TypeRule {
  kSame,             ///< every input has the output's dtype
  kAny,              ///< no constraint (Cast, logical ops)
  kInputsAgree,      ///< inputs share one dtype; the output may differ (compares, TrueDiv)
  kFirstIsControl,   ///< input 0 is a condition of any type; the others match the output
  kSecondIsControl,  ///< input 1 is a mask of any type; the others match the output
};

/// One AscIR op as tilesmith lowers it.
struct OpInfo {
  std::string_view name;  ///< the node type, e.g. "Abs"
  OpKind kind;
  int min_inputs;
  int max_inputs;  ///< -1: no limit (Concat)
  Recipe recipe = Recipe::kHlo;
  std::string_view hlo = {};  ///< HLO opcode, compare direction or reducer opcode
  TypeRule types = TypeRule::kSame;
};

/// The op `type` with `input_count` inputs ("Max" with one input is the reduction, with
/// two the elementwise maximum). Errors name the op, and say what is supported or how
/// many inputs it takes.
Expected<const OpInfo*> LookupOp(std::string_view type, size_t input_count);

/// Every supported op name, sorted, comma separated (for help and errors).
std::string SupportedOpNames();

}  // namespace tilesmith::ascgraph
