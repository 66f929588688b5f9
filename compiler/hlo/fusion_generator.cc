#include "compiler/hlo/fusion_generator.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <optional>
#include <vector>

#include "compiler/hlo/fusion_generator_internal.h"

namespace tilesmith::hlo {
namespace {

using generator_internal::Builder;
using generator_internal::Random;
using generator_internal::Value;

constexpr std::array<std::string_view, 11> kPatterns = {"loop",          "broadcast",
                                                        "slice",         "input_slices",
                                                        "concatenate",   "transpose",
                                                        "row_reduction", "column_reduction",
                                                        "reduce_window", "dynamic_update_slice",
                                                        "scatter"};

constexpr std::array<PrimitiveType, 5> kTypes = {PrimitiveType::kF32, PrimitiveType::kBF16,
                                                 PrimitiveType::kF16, PrimitiveType::kS32,
                                                 PrimitiveType::kS8};

constexpr int64_t kUnbounded = int64_t{1} << 40;

// What a fusion is drawn as before its shapes are fitted to the size bounds: the pattern
// decides how far each dimension may shrink or grow and keeps the emitter it was built for.
struct Plan {
  std::string_view pattern;
  PrimitiveType type = PrimitiveType::kF32;
  std::vector<int64_t> dims, min_dims, max_dims;
  int ops = 1;
  int variant = 0;              // a pattern's sub-kind (permutation, reduced dims, …)
  uint64_t structure_seed = 0;  // the draws of Build, independent of the dims
};

int64_t Product(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// The transposes the transpose emitter tiles, with the smallest dims that keep each tiled
// (both tiled dims at least 4 and their product at least 256 after merging adjacent dims).
struct TransposeKind {
  std::vector<int64_t> permutation;
  std::vector<int64_t> min_dims;
};
const std::array<TransposeKind, 6>& TransposeKinds() {
  static const std::array<TransposeKind, 6> kinds = {{{{1, 0}, {16, 16}},
                                                      {{0, 2, 1}, {2, 16, 16}},
                                                      {{2, 1, 0}, {16, 2, 16}},
                                                      {{1, 2, 0}, {16, 4, 4}},
                                                      {{2, 0, 1}, {4, 4, 16}},
                                                      {{1, 0, 2}, {16, 16, 0}}}};
  return kinds;
}

// Draws the pattern's kind and dimension bounds; dims start at their minimum.
Plan DrawPlan(Random& random, const FusionGeneratorOptions& options) {
  Plan plan;
  plan.pattern = kPatterns[random.Below(kPatterns.size())];
  plan.type = kTypes[random.Below(kTypes.size())];
  plan.ops = static_cast<int>(random.Between(1, options.max_ops));
  plan.structure_seed = random.Next();
  auto bounds = [&](int64_t rank, int64_t low) {
    plan.min_dims.assign(rank, low);
    plan.max_dims.assign(rank, kUnbounded);
  };
  std::string_view p = plan.pattern;
  if (p == "loop" || p == "broadcast") {
    bounds(random.Between(p == "loop" ? 1 : 2, 4), 2);
  } else if (p == "slice" || p == "input_slices" || p == "concatenate") {
    bounds(random.Between(1, 3), 8);
  } else if (p == "transpose") {
    plan.variant = static_cast<int>(random.Below(TransposeKinds().size()));
    const TransposeKind& kind = TransposeKinds()[plan.variant];
    bounds(static_cast<int64_t>(kind.permutation.size()), 1);
    plan.min_dims = kind.min_dims;
    if (plan.min_dims.back() == 0) {
      // Keeping the minor dimension: it rides whole through shared memory, 64 bits at most.
      int64_t minor = 64 / BitWidth(plan.type);
      plan.min_dims.back() = plan.max_dims.back() = minor;
    }
  } else if (p == "row_reduction") {
    // Variant 0: reduce the minor dim; 1: the two minor dims of a rank-3 input; 2: a minor
    // dim dividing the warp (multi-row). A row within 16384 elements stays race-free, so an
    // epilogue keeps the reduction its hero.
    plan.variant = static_cast<int>(random.Below(3));
    int64_t rank = plan.variant == 1 ? 3 : random.Between(2, 3);
    bounds(rank, 1);
    plan.min_dims.back() = 32;
    plan.max_dims.back() = 16384;
    if (plan.variant == 1) {
      plan.min_dims[1] = 2, plan.max_dims[1] = 16;
      plan.max_dims.back() = 1024;
    } else if (plan.variant == 2) {
      plan.min_dims.back() = plan.max_dims.back() = int64_t{1} << random.Between(1, 4);
    }
  } else if (p == "column_reduction") {
    // [H, W] or [D, H, W] reducing H: H of 64 to 4096 and W of at least 8 keep XLA's column
    // emitter (small column when W divides the warp).
    bounds(random.Between(2, 3), 1);
    size_t h = plan.min_dims.size() - 2;
    plan.min_dims[h] = 64, plan.max_dims[h] = 4096;
    plan.min_dims.back() = 8;
    if (random.OneIn(3)) plan.max_dims.back() = 32;
  } else if (p == "reduce_window") {
    bounds(random.Between(2, 3), 2);
    plan.min_dims.back() = 8;
  } else if (p == "dynamic_update_slice") {
    bounds(random.Between(1, 3), 4);
  } else {  // scatter: [updates, row]; combined with atomics, so f32 or s32
    plan.type = random.OneIn(2) ? PrimitiveType::kF32 : PrimitiveType::kS32;
    bounds(2, 2);
  }
  plan.dims = plan.min_dims;
  return plan;
}

// Grows the dims from their minimum towards `elements`, one random doubling at a time, and
// makes some ragged (not a power of two), as real shapes are.
void SizeDims(Random& random, Plan& plan, int64_t elements) {
  std::vector<int64_t>& dims = plan.dims;
  while (true) {
    std::vector<size_t> growable;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] * 2 <= plan.max_dims[d]) growable.push_back(d);
    }
    if (growable.empty() || Product(dims) * 2 > elements) break;
    dims[growable[random.Below(growable.size())]] *= 2;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!random.OneIn(3)) continue;
    static constexpr std::array<std::pair<int64_t, int64_t>, 4> kRagged = {
        {{3, 4}, {5, 4}, {7, 8}, {9, 8}}};
    auto [num, den] = kRagged[random.Below(kRagged.size())];
    int64_t ragged = dims[d] * num / den + (random.OneIn(2) ? 1 : 0);
    dims[d] = std::clamp(ragged, plan.min_dims[d], plan.max_dims[d]);
  }
}

// Splits `total` into `parts` positive sizes.
std::vector<int64_t> Split(Random& random, int64_t total, int64_t parts) {
  std::vector<int64_t> sizes(parts, 1);
  int64_t left = total - parts;
  for (int64_t i = 0; i + 1 < parts; ++i) {
    int64_t take = random.Between(0, left);
    sizes[i] += take / 2;
    left -= take / 2;
  }
  sizes.back() += left;
  return sizes;
}

// Shares of an op budget: `first` gets a random part of what `structural` ops leave.
std::pair<int, int> Share(Random& random, int budget, int structural) {
  int rest = std::max(0, budget - structural);
  int first = static_cast<int>(random.Between(0, rest));
  return {first, rest - first};
}

std::vector<Value> BuildPattern(Builder& b, Random& random, const Plan& plan) {
  std::string_view p = plan.pattern;
  const std::vector<int64_t>& dims = plan.dims;
  if (p == "loop") {
    Value x = b.Elementwise(b.Parameter(plan.type, dims), plan.ops, true);
    // Sometimes a second output: an intermediate value of the chain.
    std::vector<Value> side = b.ValuesLike(x);
    if (!side.empty() && random.OneIn(4)) return {x, side[random.Below(side.size())]};
    return {x};
  }
  if (p == "broadcast") {
    std::vector<int64_t> kept, small;
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
      if (random.OneIn(2)) kept.push_back(d), small.push_back(dims[d]);
    }
    auto [before, after] = Share(random, plan.ops, 1);
    Value x = b.Elementwise(b.Parameter(plan.type, small), before, true);
    return {b.Elementwise(b.Broadcast(x, dims, kept), after, true)};
  }
  if (p == "slice") {
    auto [before, after] = Share(random, plan.ops, 1);
    Value x = b.Elementwise(b.Parameter(plan.type, dims), before, true);
    return {b.Elementwise(b.Slice(x, /*unit_stride=*/false), after, true)};
  }
  if (p == "input_slices") {
    int slices = static_cast<int>(random.Between(2, 3));
    Value x = b.Elementwise(b.Parameter(plan.type, dims), std::max(0, plan.ops - slices), true);
    std::vector<Value> roots;
    for (int i = 0; i < slices; ++i) roots.push_back(b.Slice(x, /*unit_stride=*/true));
    return roots;
  }
  if (p == "concatenate") {
    int64_t axis = random.Below(dims.size());
    int64_t count = random.Between(2, 4);
    auto [before, after] = Share(random, plan.ops, 1);
    std::vector<Value> operands;
    for (int64_t size : Split(random, dims[axis], count)) {
      std::vector<int64_t> shape = dims;
      shape[axis] = size;
      int own = before > 0 && random.OneIn(2) ? 1 : 0;
      before -= own;
      operands.push_back(b.Elementwise(b.Parameter(plan.type, shape), own, false));
    }
    return {b.Elementwise(b.Concatenate(operands, axis), after + before, true)};
  }
  if (p == "transpose") {
    auto [before, after] = Share(random, plan.ops, 1);
    Value x = b.Elementwise(b.Parameter(plan.type, dims), before, true);
    Value t = b.Transpose(x, TransposeKinds()[plan.variant].permutation);
    b.ForgetValues();
    return {b.Elementwise(t, after, true)};
  }
  if (p == "row_reduction" || p == "column_reduction") {
    std::vector<int64_t> reduced;
    int64_t rank = static_cast<int64_t>(dims.size());
    if (p == "column_reduction") {
      reduced = {rank - 2};
    } else {
      reduced = plan.variant == 1 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{rank - 1};
    }
    auto [before, after] = Share(random, plan.ops, 1);
    Value x = b.Elementwise(b.Parameter(plan.type, dims), before, true);
    Value reduce = b.Reduce(x, reduced);
    b.ForgetValues();
    Value r = b.UnaryChain(reduce, after, true);
    // A side output of the reduced input, as layer norms and softmaxes write.
    if (before > 0 && random.OneIn(4)) return {r, x};
    return {r};
  }
  if (p == "reduce_window") {
    auto [before, after] = Share(random, plan.ops, 1);
    Value x = b.Elementwise(b.Parameter(plan.type, dims), before, true);
    return {b.Elementwise(b.ReduceWindow(x), after, true)};
  }
  if (p == "dynamic_update_slice") {
    // Everything before the update: an epilogue would stop it from updating in place.
    std::vector<int64_t> update;
    for (int64_t size : dims) update.push_back(random.Between(1, size));
    Value operand = b.Parameter(plan.type, dims);
    Value u = b.Elementwise(b.Parameter(plan.type, update), std::max(0, plan.ops - 1), false);
    return {b.DynamicUpdateSlice(operand, u)};
  }
  // scatter: rows of `updates` added into an operand of at least 8 rows.
  int64_t rows = std::max<int64_t>(8, dims[0] / random.Between(1, 4));
  Value operand = b.Parameter(plan.type, {rows, dims[1]});
  Value updates = b.Elementwise(b.Parameter(plan.type, dims), std::max(0, plan.ops - 1), false);
  return {b.Scatter(operand, updates)};
}

// Fusion `plan` as text, or its size when it does not fit.
struct Built {
  std::string text;
  int64_t bytes = 0;
  int ops = 0;
};

Built Build(const Plan& plan, const std::string& name, const std::string& comment) {
  Random random(plan.structure_seed);
  Builder builder(random);
  std::vector<Value> roots = BuildPattern(builder, random, plan);
  std::string_view p = plan.pattern;
  bool input =
      p == "row_reduction" || p == "column_reduction" || p == "transpose" || p == "scatter";
  Built built;
  built.text = builder.Module(name, comment, roots, input ? "kInput" : "kLoop");
  built.bytes = builder.bytes();
  built.ops = builder.ops();
  return built;
}

}  // namespace

Expected<int64_t> ParseByteCount(std::string_view text) {
  int64_t value = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (value > (int64_t{1} << 50)) break;
    value = value * 10 + (text[i] - '0');
  }
  std::string_view suffix = text.substr(i);
  int shift = suffix.empty()  ? 0
              : suffix == "K" ? 10
              : suffix == "M" ? 20
              : suffix == "G" ? 30
                              : -1;
  if (i == 0 || shift < 0 || value > (int64_t{1} << 50)) {
    return InvalidArgument("'" + std::string(text) +
                           "' is not a byte count (a whole number, optionally with K, M or G)");
  }
  return value << shift;
}

Status ValidateGeneratorOptions(const FusionGeneratorOptions& options) {
  if (options.max_bytes < kMinGeneratedBytes) {
    return InvalidArgument("the most bytes of a generated fusion must be at least " +
                           std::to_string(kMinGeneratedBytes) +
                           " (the smallest every kind of "
                           "fusion fits in), not " +
                           std::to_string(options.max_bytes));
  }
  if (options.min_bytes < 1 || options.min_bytes > options.max_bytes / 2) {
    return InvalidArgument(
        "the fewest bytes of a generated fusion must be at least 1 and at "
        "most half the most (" +
        std::to_string(options.max_bytes) + "), not " + std::to_string(options.min_bytes));
  }
  if (options.max_ops < 4) {
    return InvalidArgument("a generated fusion must be allowed at least 4 ops, not " +
                           std::to_string(options.max_ops));
  }
  return OkStatus();
}

std::span<const std::string_view> FusionPatterns() { return kPatterns; }

std::span<const PrimitiveType> GeneratedTypes() { return kTypes; }

GeneratedFusion GenerateFusion(uint64_t seed, int64_t index,
                               const FusionGeneratorOptions& options) {
  Random random(generator_internal::Mix(seed, static_cast<uint64_t>(index)));
  Plan plan = DrawPlan(random, options);
  // A size drawn log-uniformly: a power of two between the bounds, then a point within it.
  int64_t low = generator_internal::Log2(options.min_bytes);
  int64_t high = generator_internal::Log2(options.max_bytes);
  int64_t octave = random.Between(low, std::max(low, high - 1));
  int64_t target = (int64_t{1} << octave) + random.Below(int64_t{1} << octave);
  target = std::clamp(target, options.min_bytes, options.max_bytes);
  int64_t element_bytes = std::max(1, BitWidth(plan.type) / 8);
  SizeDims(random, plan, std::max<int64_t>(1, target / (3 * element_bytes)));

  GeneratedFusion fusion;
  fusion.name = "gen_" + std::to_string(seed) + "_" + std::to_string(index);
  fusion.pattern = std::string(plan.pattern);
  fusion.type = plan.type;
  std::string comment = "// Generated fusion " + std::to_string(index) + " of seed " +
                        std::to_string(seed) + " (tilesmith generate): " + fusion.pattern + ", " +
                        std::string(PrimitiveTypeName(plan.type)) + ".";
  Built built = Build(plan, fusion.name, comment);
  // Shrink the largest dims (or grow the smallest) until the fusion fits the bounds; the
  // structure's draws do not depend on the dims, so the fusion keeps its shape of graph.
  for (int step = 0; step < 200; ++step) {
    std::vector<int64_t>& dims = plan.dims;
    std::optional<size_t> pick;
    if (built.bytes > options.max_bytes) {
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] > plan.min_dims[d] && (!pick || dims[d] > dims[*pick])) pick = d;
      }
      if (!pick) break;
      dims[*pick] = std::max(plan.min_dims[*pick], dims[*pick] / 2);
    } else if (built.bytes < options.min_bytes) {
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] < plan.max_dims[d] && (!pick || dims[d] < dims[*pick])) pick = d;
      }
      if (!pick) break;
      dims[*pick] = std::min(plan.max_dims[*pick], dims[*pick] * 2);
    } else {
      break;
    }
    built = Build(plan, fusion.name, comment);
  }
  fusion.text = std::move(built.text);
  fusion.bytes = built.bytes;
  fusion.ops = built.ops;
  return fusion;
}

}  // namespace tilesmith::hlo
