#include "compiler/analysis/fusion_analysis.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <span>
#include <unordered_set>

namespace tilesmith::analysis {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

// Thresholds of XLA:GPU (ir_emission_utils.h, reduction_utils.cc) so that "default" here
// means what XLA would do.
constexpr int64_t kWarpSize = 32;
// Transposes: XLA's current (packed-transpose) thresholds.
constexpr int64_t kMinDimensionToTransposeTiled = 4;
constexpr int64_t kMinTotalDimensionsToTransposeTiled = 16 * 16;
// A transpose keeping the minor dimension carries it whole through shared memory.
constexpr int64_t kMaxBitsInMostMinorDimension = 8 * 8;
constexpr int64_t kRowReductionRaceFreeBound = 1024 * 16;  // threads x elements per thread
constexpr int64_t kBatchedReductionRaceFreeBound = 8;
constexpr int64_t kColumnReductionRaceFreeBound = kWarpSize * 128;

std::vector<int64_t> MajorToMinor(const Shape& shape) {
  const std::vector<int64_t>& minor_to_major = shape.layout().minor_to_major;
  return {minor_to_major.rbegin(), minor_to_major.rend()};
}

bool Contains(std::span<const int64_t> values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// True if `dims` occupy consecutive positions in the layout (ignoring size-1 dims, which
// can sit anywhere without changing the memory order).
bool AreDimensionsConsecutive(const Shape& shape, std::span<const int64_t> dims) {
  std::vector<int64_t> positions;
  std::vector<int64_t> order = MajorToMinor(shape);
  int64_t position = 0;
  for (int64_t dim : order) {
    if (shape.dim(dim) == 1) continue;
    if (Contains(dims, dim)) positions.push_back(position);
    ++position;
  }
  for (size_t i = 1; i < positions.size(); ++i) {
    if (positions[i] != positions[i - 1] + 1) return false;
  }
  return true;
}

// {product of dims more major than `middle`, product of `middle`, product of the rest},
// in the layout's order. Dims of size 1 are in no section: one in `middle` ahead of a
// larger outer dim (f32[1,8,12] keeping dims 0 and 2) must not open the middle early.
std::array<int64_t, 3> PartitionByMiddleDimensions(const Shape& shape,
                                                   std::span<const int64_t> middle) {
  std::array<int64_t, 3> parts = {1, 1, 1};
  int section = 0;
  for (int64_t dim : MajorToMinor(shape)) {
    if (shape.dim(dim) == 1) continue;
    bool in_middle = Contains(middle, dim);
    if (section == 0 && in_middle) section = 1;
    if (section == 1 && !in_middle) section = 2;
    parts[in_middle ? 1 : section] *= shape.dim(dim);
  }
  return parts;
}

bool IsUnnestedReductionFasterThanElemental(const ReductionDimensions& r) {
  if (r.is_row_reduction) {
    return r.dimensions[2] >= kWarpSize || kWarpSize % r.dimensions[2] == 0;
  }
  int64_t major = r.dimensions[1];
  int64_t minor = r.dimensions[2];
  bool prefer_elemental = major < kWarpSize || (major < 2 * kWarpSize && minor < kWarpSize) ||
                          (major < 4 * kWarpSize && minor < 8) ||
                          (major < 8 * kWarpSize && minor < 3);
  return !prefer_elemental;
}

bool ReductionIsRaceFree(const ReductionDimensions& r) {
  if (r.is_row_reduction) {
    return r.dimensions[2] <= kRowReductionRaceFreeBound &&
           r.dimensions[0] <= kBatchedReductionRaceFreeBound;
  }
  return r.dimensions[1] <= kColumnReductionRaceFreeBound;
}

// XLA's choice among its reduction emitters (the vector width the multi-row test assumes
// follows the smallest and largest input/output types, as XLA's does).
ReductionVariant ChooseReductionVariant(const FusionAnalysis& analysis,
                                        const ReductionDimensions& dims) {
  int64_t minor = dims.dimensions[2];
  if (!dims.is_row_reduction) {
    return kWarpSize % minor == 0 ? ReductionVariant::kSmallColumn : ReductionVariant::kColumn;
  }
  if ((minor & (minor - 1)) != 0) return ReductionVariant::kRow;
  int64_t smallest =
      std::max(1, std::min(analysis.smallest_input_bits, analysis.smallest_output_bits));
  int64_t largest = std::max(analysis.smallest_input_bits, analysis.smallest_output_bits);
  int64_t vector = std::min<int64_t>(minor, 64 / smallest);
  if (largest >= 32) vector = std::min<int64_t>(vector, 128 / largest);
  vector = std::max<int64_t>(vector, 1);
  // XLA narrows the vector until the rows fill every SM; without a device at hand this
  // assumes the default GPU target's (H100 SXM's 132).
  constexpr int64_t kDefaultSmCount = 132;
  int64_t rows = dims.dimensions[1];
  auto blocks = [&](int64_t v) {
    int64_t threads = std::max<int64_t>(1, minor / v);
    int64_t per_block = rows * threads <= 256 ? rows : std::max<int64_t>(1, 256 / threads);
    return (rows + per_block - 1) / per_block;
  };
  while (vector > 1 && blocks(vector) < kDefaultSmCount) vector /= 2;
  return minor <= kWarpSize * vector ? ReductionVariant::kMultiRow : ReductionVariant::kRow;
}

bool IsRealReductionHero(const HloInstruction& root, const HloInstruction& hero) {
  if (!IsReductionFromOrToContiguousDimensions(hero)) return false;
  return &root == &hero || ReductionIsRaceFree(GetReductionDimensions(hero));
}

// Dimensions of size greater than one, in logical order.
std::vector<int64_t> NonTrivialDims(const Shape& shape) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dim(d) != 1) dims.push_back(d);
  }
  return dims;
}

// The elements of `operand` and `result` sit at the same byte offsets: the same type
// width, and the non-trivial dimensions in the same physical order with the same sizes.
bool IsPhysicallyIdentical(const Shape& operand, const Shape& result) {
  if (hlo::BitWidth(operand.element_type()) != hlo::BitWidth(result.element_type())) {
    return false;
  }
  auto physical_sizes = [](const Shape& shape) {
    std::vector<int64_t> sizes;
    for (int64_t dim : MajorToMinor(shape)) {
      if (shape.dim(dim) != 1) sizes.push_back(shape.dim(dim));
    }
    return sizes;
  };
  return operand.layout().tiles.empty() && result.layout().tiles.empty() &&
         physical_sizes(operand) == physical_sizes(result);
}

bool TransposeIsBitcast(const HloInstruction& transpose) {
  const Shape& operand = transpose.operand(0)->shape();
  const Shape& result = transpose.shape();
  // Output dim i reads operand dim perm[i]; it is a bitcast if, in physical order, the
  // non-trivial dims visit the same operand dims in the same order.
  std::vector<int64_t> operand_order;
  for (int64_t dim : MajorToMinor(operand)) {
    if (operand.dim(dim) != 1) operand_order.push_back(dim);
  }
  std::vector<int64_t> result_order;
  for (int64_t dim : MajorToMinor(result)) {
    if (result.dim(dim) != 1) result_order.push_back(transpose.dimensions()[dim]);
  }
  return operand_order == result_order && operand.layout().tiles.empty() &&
         result.layout().tiles.empty();
}

// Ops that pass values through unchanged in order: the hero search walks over them.
bool IsIntermediate(const HloInstruction& instruction, int64_t allowed_operand_count) {
  if (instruction.operand_count() == 0 || instruction.operand_count() > allowed_operand_count) {
    return false;
  }
  HloOpcode opcode = instruction.opcode();
  if (hlo::IsElementwise(opcode) || opcode == HloOpcode::kCopy) {
    if (opcode == HloOpcode::kCopy) {
      return instruction.shape() == instruction.operand(0)->shape();
    }
    return true;
  }
  switch (opcode) {
    case HloOpcode::kBitcast:
      return true;
    case HloOpcode::kReshape:
      return IsPhysicallyIdentical(instruction.operand(0)->shape(), instruction.shape());
    case HloOpcode::kTranspose:
      return TransposeIsBitcast(instruction);
    default:
      return false;
  }
}

// Breadth-first over operands from `start` (consumers first), looking for exactly one
// instruction matching `predicate` behind intermediate ops; then no non-trivial op may be
// reachable downstream of it.
const HloInstruction* FindNonTrivialHero(
    const HloInstruction& start, const std::function<bool(const HloInstruction&)>& predicate) {
  const HloInstruction* hero = nullptr;
  std::deque<const HloInstruction*> queue{&start};
  std::unordered_set<const HloInstruction*> visited{&start};
  while (!queue.empty()) {
    const HloInstruction* node = queue.front();
    queue.pop_front();
    if (predicate(*node)) {
      if (hero != nullptr) return nullptr;  // two candidates: no single hero
      hero = node;
      continue;
    }
    if (!IsIntermediate(*node, 3)) continue;
    for (const HloInstruction* operand : node->operands()) {
      if (visited.insert(operand).second) queue.push_back(operand);
    }
  }
  if (hero == nullptr) return nullptr;
  std::deque<const HloInstruction*> users(hero->users().begin(), hero->users().end());
  std::unordered_set<const HloInstruction*> seen(users.begin(), users.end());
  while (!users.empty()) {
    const HloInstruction* user = users.front();
    users.pop_front();
    if (user->opcode() != HloOpcode::kTuple && user->opcode() != HloOpcode::kParameter &&
        !IsIntermediate(*user, 3)) {
      return nullptr;
    }
    for (const HloInstruction* next : user->users()) {
      if (seen.insert(next).second) users.push_back(next);
    }
  }
  return hero;
}

int SmallestBits(const std::vector<const HloInstruction*>& values) {
  int bits = 1 << 20;
  for (const HloInstruction* value : values) {
    const Shape& shape = value->shape();
    if (!shape.IsArray()) continue;
    bits = std::min(bits, shape.element_type() == hlo::PrimitiveType::kPred
                              ? 8
                              : hlo::BitWidth(shape.element_type()));
  }
  return bits;
}

bool IsUnitStrideSlice(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kSlice || !instruction.attributes().slice) return false;
  const auto& slice = *instruction.attributes().slice;
  return std::all_of(slice.begin(), slice.end(),
                     [](const hlo::SliceDim& d) { return d.stride == 1; });
}

bool IsInputSlicesFusion(const std::vector<const HloInstruction*>& roots) {
  if (roots.size() < 2) return false;
  for (const HloInstruction* root : roots) {
    if (!IsUnitStrideSlice(*root)) return false;
    const Shape& first = roots[0]->operand(0)->shape();
    const Shape& operand = root->operand(0)->shape();
    if (!std::equal(first.dims().begin(), first.dims().end(), operand.dims().begin(),
                    operand.dims().end()) ||
        !(first.layout() == operand.layout())) {
      return false;
    }
  }
  return true;
}

const HloInstruction* ThroughBitcasts(const HloInstruction* instruction) {
  while (instruction->opcode() == HloOpcode::kBitcast) instruction = instruction->operand(0);
  return instruction;
}

// A dynamic-update-slice root can write only the update region into the output when the
// output aliases the parameter it updates: that parameter feeds nothing but elementwise
// ops, bitcasts, tuples and dynamic-slices of the same region.
bool CanUpdateInPlace(const std::vector<const HloInstruction*>& roots) {
  for (const HloInstruction* root : roots) {
    const HloInstruction* dus = ThroughBitcasts(root);
    if (dus->opcode() != HloOpcode::kDynamicUpdateSlice) return false;
    if (dus->users().size() > 1) return false;
    const HloInstruction* operand = ThroughBitcasts(dus->operand(0));
    if (operand->opcode() != HloOpcode::kParameter) return false;
    if (operand->shape().ElementCount() != root->shape().ElementCount() ||
        operand->shape().element_type() != root->shape().element_type()) {
      return false;
    }
    std::deque<const HloInstruction*> queue{operand};
    std::unordered_set<const HloInstruction*> visited{operand, dus};
    while (!queue.empty()) {
      const HloInstruction* value = queue.front();
      queue.pop_front();
      for (const HloInstruction* user : value->users()) {
        if (user->opcode() == HloOpcode::kDynamicSlice) {
          bool same_start = user->operand(0) == dus->operand(0) &&
                            user->shape().EqualsIgnoringLayout(dus->operand(1)->shape());
          for (int64_t i = 1; same_start && i < user->operand_count(); ++i) {
            same_start = user->operand(i) == dus->operand(i + 1);
          }
          if (!same_start && dus->operand(1)->shape().ElementCount() != 1) return false;
        } else if (user != dus && !hlo::IsElementwise(user->opcode()) &&
                   user->opcode() != HloOpcode::kBitcast && user->opcode() != HloOpcode::kTuple) {
          return false;
        }
        if (visited.insert(user).second) queue.push_back(user);
      }
    }
  }
  return !roots.empty();
}

// Drops size-1 dimensions and merges runs of operand dimensions that stay adjacent and in
// order in the output, so that equivalent transposes compare equal: bf16[2,2048,8,16] with
// {0,2,3,1} and bf16[2,2048,128] with {0,2,1} both become [2,2048,128] -> {0,2,1}.
TransposeDescription NormalizeTranspose(const HloInstruction& transpose) {
  const Shape& operand = transpose.operand(0)->shape();
  std::span<const int64_t> permutation = transpose.dimensions();
  // Output order of the non-trivial operand dims.
  std::vector<int64_t> order;
  for (int64_t operand_dim : permutation) {
    if (operand.dim(operand_dim) != 1) order.push_back(operand_dim);
  }
  // Group output-adjacent dims that are consecutive non-trivial operand dims.
  std::vector<int64_t> non_trivial = NonTrivialDims(operand);
  auto rank_in_operand = [&](int64_t dim) {
    return std::find(non_trivial.begin(), non_trivial.end(), dim) - non_trivial.begin();
  };
  std::vector<std::vector<int64_t>> groups;
  for (int64_t dim : order) {
    if (!groups.empty() && rank_in_operand(groups.back().back()) + 1 == rank_in_operand(dim)) {
      groups.back().push_back(dim);
    } else {
      groups.push_back({dim});
    }
  }
  // Number the groups by their position in the operand.
  std::vector<size_t> by_operand(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) by_operand[i] = i;
  std::sort(by_operand.begin(), by_operand.end(),
            [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  TransposeDescription description;
  description.instruction = &transpose;
  description.permutation.resize(groups.size());
  for (size_t rank = 0; rank < by_operand.size(); ++rank) {
    description.permutation[by_operand[rank]] = static_cast<int64_t>(rank);
  }
  for (const std::vector<int64_t>& group : groups) {
    int64_t size = 1;
    for (int64_t dim : group) size *= operand.dim(dim);
    description.dimensions.push_back(size);
  }
  return description;
}

}  // namespace

std::string_view ReductionVariantName(ReductionVariant variant) {
  switch (variant) {
    case ReductionVariant::kRow:
      return "row";
    case ReductionVariant::kMultiRow:
      return "multi-row";
    case ReductionVariant::kColumn:
      return "column";
    case ReductionVariant::kSmallColumn:
      return "small column";
  }
  return "row";
}

ReductionDimensions GetReductionDimensions(const HloInstruction& reduce) {
  const Shape& input = reduce.operand(0)->shape();
  std::span<const int64_t> reduced = reduce.dimensions();
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!Contains(reduced, d)) kept.push_back(d);
  }
  if (kept.empty()) return {true, {1, 1, input.ElementCount()}};
  if (AreDimensionsConsecutive(input, kept)) {
    std::array<int64_t, 3> parts = PartitionByMiddleDimensions(input, kept);
    if (parts[1] == 1) return {true, {1, 1, parts[0] * parts[2]}};
    if (parts[2] == 1) return {false, {1, parts[0], parts[1]}};
    return {true, parts};
  }
  std::array<int64_t, 3> parts = PartitionByMiddleDimensions(input, reduced);
  if (parts[2] == 1) return {true, {1, parts[0], parts[1]}};
  return {false, parts};
}

bool IsReductionFromOrToContiguousDimensions(const HloInstruction& reduce) {
  if (reduce.opcode() != HloOpcode::kReduce) return false;
  const Shape& input = reduce.operand(0)->shape();
  // Nothing to reduce: every output is the init value, which the loop emitter writes.
  if (input.ElementCount() == 0) return false;
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!Contains(reduce.dimensions(), d)) kept.push_back(d);
  }
  return (AreDimensionsConsecutive(input, kept) ||
          AreDimensionsConsecutive(input, reduce.dimensions())) &&
         IsUnnestedReductionFasterThanElemental(GetReductionDimensions(reduce));
}

std::optional<TransposeDescription> GetTiledTranspose(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kTranspose) return std::nullopt;
  TransposeDescription description = NormalizeTranspose(instruction);
  const std::vector<int64_t>& permutation = description.permutation;
  const std::vector<int64_t>& dims = description.dimensions;
  int64_t rank = static_cast<int64_t>(dims.size());
  if (rank < 2) return std::nullopt;  // only size-1 dims move: a bitcast
  // Operand dims in the normalised order: output dim i is operand dim permutation[i].
  std::vector<int64_t> operand_dims(rank);
  for (int64_t i = 0; i < rank; ++i) operand_dims[permutation[i]] = dims[i];
  int64_t bits = hlo::BitWidth(instruction.shape().element_type());
  int64_t t1;  // the operand dim read along the minor axis of the shared tile
  int64_t t2;  // the operand dim written along the minor axis of the output
  if (permutation.back() == rank - 1) {
    // The minor dimension stays: the next two are tiled and the minor one rides along.
    description.keeps_minor_dimension = true;
    if (bits * dims.back() > kMaxBitsInMostMinorDimension) return std::nullopt;
    t1 = operand_dims[rank - 2];
    t2 = dims[rank - 2];
  } else {
    t1 = operand_dims.back();
    t2 = dims.back();
  }
  if (t1 < kMinDimensionToTransposeTiled || t2 < kMinDimensionToTransposeTiled ||
      t1 * t2 < kMinTotalDimensionsToTransposeTiled) {
    return std::nullopt;
  }
  return description;
}

const HloInstruction& FindHero(const HloInstruction& root) {
  const HloInstruction* hero = &root;
  while (IsIntermediate(*hero, 1) && hero->operand(0)->opcode() != HloOpcode::kParameter) {
    hero = hero->operand(0);
  }
  auto is_transpose = [](const HloInstruction& node) {
    return GetTiledTranspose(node).has_value();
  };
  if (const HloInstruction* transpose = FindNonTrivialHero(*hero, is_transpose)) {
    return *transpose;
  }
  auto is_concatenate = [](const HloInstruction& node) {
    return node.opcode() == HloOpcode::kConcatenate;
  };
  if (const HloInstruction* concatenate = FindNonTrivialHero(*hero, is_concatenate)) {
    return *concatenate;
  }
  return hero->opcode() == HloOpcode::kReduce ? *hero : root;
}

std::vector<const HloInstruction*> FusionRoots(const hlo::HloComputation& fusion) {
  const HloInstruction* root = fusion.root();
  if (root->opcode() == HloOpcode::kTuple) {
    return {root->operands().begin(), root->operands().end()};
  }
  return {root};
}

FusionAnalysis AnalyzeFusion(const hlo::HloComputation& fusion) {
  FusionAnalysis analysis;
  analysis.fusion = &fusion;
  analysis.roots = FusionRoots(fusion);
  for (const HloInstruction* root : analysis.roots) analysis.heroes.push_back(&FindHero(*root));
  std::vector<const HloInstruction*> parameters(fusion.parameters().begin(),
                                                fusion.parameters().end());
  analysis.smallest_input_bits = SmallestBits(parameters);
  analysis.smallest_output_bits = SmallestBits(analysis.roots);
  auto choose = [&](std::string_view kind, std::string reason) {
    analysis.emitter = kind;
    analysis.reason = std::move(reason);
    return analysis;
  };
  auto loop_or_in_place = [&](std::string reason) {
    if (CanUpdateInPlace(analysis.roots)) {
      return choose("dynamic_update_slice",
                    "the root updates a parameter in place; only the update region is written");
    }
    return choose("loop", std::move(reason));
  };

  if (analysis.smallest_input_bits < 8 || analysis.smallest_output_bits < 8) {
    if (IsInputSlicesFusion(analysis.roots)) {
      return choose("input_slices", "sub-byte types; several slices of one input");
    }
    return loop_or_in_place("types narrower than 8 bits are emitted by the loop emitter");
  }

  const HloInstruction* first_reduce = nullptr;
  for (size_t i = 0; i < analysis.roots.size(); ++i) {
    if (IsRealReductionHero(*analysis.roots[i], *analysis.heroes[i])) {
      first_reduce = analysis.heroes[i];
      break;
    }
  }
  if (first_reduce != nullptr) {
    ReductionDimensions dims = GetReductionDimensions(*first_reduce);
    int64_t operand_elements = first_reduce->operand(0)->shape().ElementCount();
    bool compatible = true;
    for (size_t i = 0; i < analysis.roots.size() && compatible; ++i) {
      if (analysis.roots[i] == first_reduce) continue;
      if (!IsRealReductionHero(*analysis.roots[i], *analysis.heroes[i])) {
        compatible = analysis.roots[i]->shape().ElementCount() == operand_elements;
      } else {
        compatible = GetReductionDimensions(*analysis.heroes[i]) == dims;
      }
    }
    if (compatible) {
      analysis.reduction = dims;
      analysis.reduction_variant = ChooseReductionVariant(analysis, dims);
      return choose("reduction", std::string(ReductionVariantName(analysis.reduction_variant)) +
                                     " reduction [" + std::to_string(dims.dimensions[0]) + "," +
                                     std::to_string(dims.dimensions[1]) + "," +
                                     std::to_string(dims.dimensions[2]) + "]");
    }
  }

  // A transpose hero shared by every root (other roots must be bitcasts of its input).
  std::optional<TransposeDescription> transpose;
  bool consistent = true;
  std::vector<const HloInstruction*> other_roots;
  for (size_t i = 0; i < analysis.roots.size() && consistent; ++i) {
    auto description = GetTiledTranspose(*analysis.heroes[i]);
    if (!description) {
      other_roots.push_back(analysis.roots[i]);
      continue;
    }
    if (!transpose) {
      transpose = description;
    } else if (transpose->permutation != description->permutation ||
               transpose->dimensions != description->dimensions) {
      consistent = false;
    }
  }
  if (transpose && consistent) {
    const Shape& input = transpose->instruction->operand(0)->shape();
    for (const HloInstruction* root : other_roots) {
      if (root->shape().ElementCount() != input.ElementCount()) consistent = false;
    }
    if (consistent) {
      analysis.transpose = transpose;
      return choose("transpose",
                    transpose->keeps_minor_dimension
                        ? "transpose keeping the minor dimension, tiled through shared memory"
                        : "transpose moving the minor dimension, tiled through shared memory");
    }
  }

  // One concatenate hero shared by every root, with few operands (each operand gets its
  // own loop, which costs occupancy).
  const HloInstruction* hero = analysis.heroes[0];
  bool shared_hero = std::all_of(analysis.heroes.begin(), analysis.heroes.end(),
                                 [&](const HloInstruction* h) { return h == hero; });
  if (shared_hero && hero->opcode() == HloOpcode::kConcatenate && hero->operand_count() <= 4) {
    return choose("concatenate", "a concatenate hero with at most 4 operands");
  }
  if (analysis.roots.size() > 1) {
    if (IsInputSlicesFusion(analysis.roots)) {
      return choose("input_slices", "several unit-stride slices of one input");
    }
    return loop_or_in_place("several outputs without a common hero");
  }
  if (analysis.roots[0]->opcode() == HloOpcode::kScatter) {
    return choose("scatter", "the root is a scatter");
  }
  return loop_or_in_place("no transpose, reduction, slice, scatter or concatenate hero");
}

}  // namespace tilesmith::analysis
