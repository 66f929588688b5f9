#include <algorithm>
#include <limits>

#include "compiler/emitters/element_loop.h"
#include "compiler/emitters/reduction_emitter.h"
#include "compiler/emitters/reduction_internal.h"

namespace tilesmith::emitters {

using analysis::FusionAnalysis;
using analysis::ReductionVariant;
using hlo::HloInstruction;

namespace reduction_internal {

int64_t PowerOfTwoAtLeast(int64_t n) {
  int64_t power = 1;
  while (power < n) power *= 2;
  return power;
}

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The reduce heroes of the fusion's reduction group (distinct, in root order).
std::vector<const HloInstruction*> ReductionHeroes(const FusionAnalysis& analysis) {
  std::vector<const HloInstruction*> heroes;
  for (const HloInstruction* hero : analysis.heroes) {
    if (hero->opcode() != hlo::HloOpcode::kReduce) continue;
    if (analysis::GetReductionDimensions(*hero) != *analysis.reduction) continue;
    if (std::find(heroes.begin(), heroes.end(), hero) == heroes.end()) heroes.push_back(hero);
  }
  return heroes;
}

int64_t Outputs(const HloInstruction* hero) { return hero->operand_count() / 2; }

// True when the hero's init is a constant its reducer leaves unchanged (0 for add, -inf for
// max, …): XLA folds such an init into every partial; any other init must be folded once.
bool HasIdentityInit(const HloInstruction* hero) {
  if (Outputs(hero) != 1) return false;
  const HloInstruction* init = hero->operand(1);
  const hlo::HloInstruction* root = hero->called_computation()->root();
  if (init->opcode() != hlo::HloOpcode::kConstant || init->literal() == nullptr ||
      root->operand_count() != 2 || root->operand(0)->opcode() != hlo::HloOpcode::kParameter ||
      root->operand(1)->opcode() != hlo::HloOpcode::kParameter ||
      root->operand(0) == root->operand(1)) {
    return false;
  }
  hlo::PrimitiveType type = init->shape().element_type();
  if (hlo::IsComplex(type)) return false;
  double value = init->literal()->GetDouble(0);
  bool is_float = hlo::IsFloatingPoint(type);
  switch (root->opcode()) {
    case hlo::HloOpcode::kAdd:
    case hlo::HloOpcode::kOr:
    case hlo::HloOpcode::kXor:
      return value == 0;
    case hlo::HloOpcode::kMultiply:
      return value == 1;
    case hlo::HloOpcode::kAnd:
      return type == hlo::PrimitiveType::kPred ? value == 1 : init->literal()->GetInt(0) == -1;
    case hlo::HloOpcode::kMaximum:
      return is_float
                 ? value == -std::numeric_limits<double>::infinity()
                 : (hlo::IsSignedIntegral(type)
                        ? init->literal()->GetInt(0) == -(int64_t{1} << (hlo::BitWidth(type) - 1))
                        : init->literal()->GetInt(0) == 0);
    case hlo::HloOpcode::kMinimum:
      return is_float && value == std::numeric_limits<double>::infinity();
    default:
      return false;
  }
}

// Whether partials carry a presence flag: some hero's init must be folded in exactly once.
bool NeedsPresence(const FusionAnalysis& analysis) {
  std::vector<const HloInstruction*> heroes = ReductionHeroes(analysis);
  return !std::all_of(heroes.begin(), heroes.end(), HasIdentityInit);
}

int64_t ElementBytes(hlo::PrimitiveType type) { return std::max(1, (hlo::BitWidth(type) + 7) / 8); }

// Shared memory: one partials array per reducer output of every hero. Row: [rows][warps];
// column: [threads_y][columns + 1] (the padding keeps the transposed reads conflict-free).
std::vector<int64_t> PartialsDims(const FusionAnalysis& analysis, const ReductionConfig& config) {
  if (analysis.reduction->is_row_reduction) {
    int64_t warps = config.threads_x / kWarp;
    if (warps <= 1) return {};
    return {config.threads_y, warps};
  }
  return {config.threads_y, config.threads_x * config.vector + 1};
}

// The s32 flag through which the last block to arrive tells its threads (tree splits).
int64_t ArrivalFlagBytes(const ReductionConfig& config) { return config.tree ? 4 : 0; }

int64_t SharedBytes(const FusionAnalysis& analysis, const ReductionConfig& config) {
  std::vector<int64_t> dims = PartialsDims(analysis, config);
  if (dims.empty()) return ArrivalFlagBytes(config);
  int64_t bytes = ArrivalFlagBytes(config);
  bool presence = NeedsPresence(analysis);
  for (const HloInstruction* hero : ReductionHeroes(analysis)) {
    for (int64_t i = 0; i < Outputs(hero); ++i) {
      bytes += dims[0] * dims[1] * ElementBytes(hero->operand(i)->shape().element_type());
    }
    if (presence) bytes += dims[0] * dims[1];
  }
  return bytes;
}

int64_t BlockCount(const FusionAnalysis& analysis, const ReductionConfig& config) {
  const std::array<int64_t, 3>& dims = analysis.reduction->dimensions;
  if (analysis.reduction->is_row_reduction)
    return CeilDiv(dims[1], config.threads_y) * config.split;
  return dims[0] * CeilDiv(dims[2], config.threads_x * config.vector) * config.split;
}

AtomicOp SplitAtomicOp(const HloInstruction* hero) {
  switch (hero->called_computation()->root()->opcode()) {
    case hlo::HloOpcode::kMaximum:
      return AtomicOp::kMax;
    case hlo::HloOpcode::kMinimum:
      return AtomicOp::kMin;
    default:
      return AtomicOp::kAdd;
  }
}

std::string SplitBlocker(const FusionAnalysis& analysis) {
  for (size_t r = 0; r < analysis.roots.size(); ++r) {
    const HloInstruction* hero = analysis.heroes[r];
    if (hero->opcode() != hlo::HloOpcode::kReduce) continue;
    if (analysis.roots[r] != hero) {
      return "root '" + analysis.roots[r]->name() + "' applies an epilogue to the reduce";
    }
    if (!HasIdentityInit(hero)) {
      return "reduce '" + hero->name() + "' is variadic or its init is not its reducer's identity";
    }
    hlo::HloOpcode op = hero->called_computation()->root()->opcode();
    hlo::PrimitiveType type = hero->shape().element_type();
    int bits = hlo::BitWidth(type);
    bool floating = type == hlo::PrimitiveType::kF32 || type == hlo::PrimitiveType::kF64;
    bool integral = hlo::IsIntegral(type) && (bits == 32 || bits == 64);
    bool supported =
        (op == hlo::HloOpcode::kAdd && (floating || integral)) ||
        ((op == hlo::HloOpcode::kMaximum || op == hlo::HloOpcode::kMinimum) && integral);
    if (!supported) {
      return "no atomic " + std::string(hlo::HloOpcodeName(op)) + " on " +
             std::string(hlo::PrimitiveTypeName(type)) + " for reduce '" + hero->name() + "'";
    }
  }
  return "";
}

}  // namespace reduction_internal

using reduction_internal::BlockCount;
using reduction_internal::IsPowerOfTwo;
using reduction_internal::kWarp;
using reduction_internal::Outputs;
using reduction_internal::PowerOfTwoAtLeast;
using reduction_internal::ReductionHeroes;
using reduction_internal::SharedBytes;
using reduction_internal::SplitBlocker;

int64_t ReassociatedTerms(const FusionAnalysis& analysis) {
  if (!analysis.reduction) return 1;
  const std::array<int64_t, 3>& dims = analysis.reduction->dimensions;
  return analysis.reduction->is_row_reduction ? dims[0] * dims[2] : dims[1];
}

nlohmann::json ReductionConfig::ToJson() const {
  nlohmann::json json = {{"threads_x", threads_x},
                         {"threads_y", threads_y},
                         {"vector", vector},
                         {"elements_per_thread", elements_per_thread},
                         {"split", split}};
  if (tree) json["second_pass"] = "tree";
  return json;
}

Expected<ReductionConfig> ReductionConfig::FromJson(const nlohmann::json& json,
                                                    const ReductionConfig& base) {
  if (!json.is_object()) return InvalidArgument("a reduction config is a JSON object");
  ReductionConfig config = base;
  const std::vector<std::pair<const char*, int64_t ReductionConfig::*>> fields = {
      {"threads_x", &ReductionConfig::threads_x},
      {"threads_y", &ReductionConfig::threads_y},
      {"vector", &ReductionConfig::vector},
      {"elements_per_thread", &ReductionConfig::elements_per_thread},
      {"split", &ReductionConfig::split}};
  for (const auto& [key, value] : json.items()) {
    if (key == "second_pass") {
      if (value != "atomic" && value != "tree") {
        return InvalidArgument(
            "reduction config field 'second_pass' is \"atomic\" or \"tree\", not " + value.dump());
      }
      config.tree = value == "tree";
      continue;
    }
    auto field = std::find_if(fields.begin(), fields.end(),
                              [&](const auto& entry) { return key == entry.first; });
    if (field == fields.end()) {
      return InvalidArgument(
          "unknown reduction config field '" + key +
          "' (threads_x, threads_y, vector, elements_per_thread, split, second_pass)");
    }
    if (!value.is_number_integer()) {
      return InvalidArgument("reduction config field '" + key + "' must be an integer");
    }
    config.*(field->second) = value.get<int64_t>();
  }
  return config;
}

namespace {

// XLA's vector width for a reduction reading `minor` contiguous elements: two 32-bit (four
// narrower) elements per access where the dim divides, one when an op of the fusion keeps
// XLA from vectorising.
int64_t DefaultVector(const FusionAnalysis& analysis, int64_t minor) {
  if (MayPreventVectorization(*analysis.fusion)) return 1;
  int64_t bits = std::max(8, analysis.smallest_input_bits);
  int64_t vector = bits > 32 ? 1 : (bits > 16 ? 2 : 4);
  while (vector > 1 && minor % vector != 0) vector /= 2;
  return vector;
}

// Rows packed into a block of up to 256 threads, whole warps in all.
int64_t RowsPerBlock(int64_t threads_x, int64_t rows) {
  int64_t per_block = threads_x * 2 <= 256 ? std::min(rows, 256 / threads_x) : 1;
  while (threads_x * per_block % kWarp != 0) ++per_block;
  return per_block;
}

}  // namespace

ReductionConfig DefaultReductionConfig(const FusionAnalysis& analysis, const DeviceInfo& device) {
  ReductionConfig config;
  if (!analysis.reduction) return config;
  const std::array<int64_t, 3>& dims = analysis.reduction->dimensions;
  switch (analysis.reduction_variant) {
    case ReductionVariant::kRow: {
      config.threads_x = std::min<int64_t>(1024, CeilDiv(CeilDiv(dims[2], 16), kWarp) * kWarp);
      config.vector = DefaultVector(analysis, dims[2]);
      int64_t vectors =
          std::min(16 / config.vector, CeilDiv(CeilDiv(dims[2], config.vector), config.threads_x));
      config.elements_per_thread = std::max<int64_t>(1, vectors) * config.vector;
      config.threads_y = RowsPerBlock(config.threads_x, dims[1]);
      break;
    }
    case ReductionVariant::kMultiRow: {
      int64_t smallest =
          std::max(1, std::min(analysis.smallest_input_bits, analysis.smallest_output_bits));
      int64_t largest = std::max(analysis.smallest_input_bits, analysis.smallest_output_bits);
      int64_t vector = std::min<int64_t>(dims[2], 64 / smallest);
      if (largest >= 32) vector = std::min<int64_t>(vector, 128 / largest);
      vector = std::max<int64_t>(1, vector);
      auto blocks = [&](int64_t v) { return CeilDiv(dims[1], RowsPerBlock(dims[2] / v, dims[1])); };
      while (vector > 1 && blocks(vector) < device.sm_count) vector /= 2;
      if (dims[2] > kWarp * vector) {
        // Too few rows to fill the device at this width: XLA falls back to the row emitter.
        FusionAnalysis as_row = analysis;
        as_row.reduction_variant = ReductionVariant::kRow;
        return DefaultReductionConfig(as_row, device);
      }
      config.vector = vector;
      config.threads_x = std::max<int64_t>(1, dims[2] / vector);
      config.elements_per_thread = vector;
      config.threads_y = RowsPerBlock(config.threads_x, dims[1]);
      break;
    }
    case ReductionVariant::kColumn:
      config.vector = DefaultVector(analysis, dims[2]);
      config.threads_x = kWarp;
      config.threads_y = kWarp;
      config.elements_per_thread = 1;
      break;
    case ReductionVariant::kSmallColumn:
      config.vector = DefaultVector(analysis, dims[2]);
      config.threads_x = std::max<int64_t>(1, dims[2] / config.vector);
      config.threads_y = 128 / config.threads_x;
      config.elements_per_thread = 1;
      break;
  }
  return config;
}

Status ValidateReductionConfig(const ReductionConfig& config, const FusionAnalysis& analysis,
                               const DeviceInfo& device) {
  if (!analysis.reduction) {
    return MakeError(ErrorCode::kFailedPrecondition, "the fusion has no reduction hero");
  }
  nlohmann::json fields = config.ToJson();
  for (const auto& [key, value] : fields.items()) {
    if (value.is_number_integer() && value.get<int64_t>() < 1)
      return InvalidArgument(key + "=" + value.dump() + " must be at least 1");
  }
  const std::array<int64_t, 3>& dims = analysis.reduction->dimensions;
  bool row = analysis.reduction->is_row_reduction;
  if (!IsPowerOfTwo(config.vector) || config.vector > 8) {
    return InvalidArgument("vector=" + std::to_string(config.vector) + " is not 1, 2, 4 or 8");
  }
  if (dims[2] % config.vector != 0) {
    return InvalidArgument("vector=" + std::to_string(config.vector) +
                           " does not divide the contiguous dim of " + std::to_string(dims[2]));
  }
  if (row && config.threads_x < kWarp && !IsPowerOfTwo(config.threads_x)) {
    return InvalidArgument("threads_x=" + std::to_string(config.threads_x) +
                           " below a warp must be a power of two (rows share a warp)");
  }
  if (row && config.threads_x > kWarp && config.threads_x % kWarp != 0) {
    return InvalidArgument("threads_x=" + std::to_string(config.threads_x) +
                           " above a warp must be a multiple of " + std::to_string(kWarp));
  }
  if (row && config.elements_per_thread % config.vector != 0) {
    return InvalidArgument("elements_per_thread=" + std::to_string(config.elements_per_thread) +
                           " is not a multiple of vector=" + std::to_string(config.vector));
  }
  if (config.elements_per_thread > 64) {
    return InvalidArgument("elements_per_thread=" + std::to_string(config.elements_per_thread) +
                           " is over 64 (the unrolled step would not fit in registers)");
  }
  if (config.threads() > device.max_threads_per_block) {
    return InvalidArgument(std::to_string(config.threads()) + " threads are over the limit " +
                           std::to_string(device.max_threads_per_block));
  }
  if (config.threads() % device.warp_size != 0) {
    return InvalidArgument(std::to_string(config.threads()) +
                           " threads are not a multiple of the warp size " +
                           std::to_string(device.warp_size) + " (shuffles need whole warps)");
  }
  if (config.tree && config.split == 1) {
    return InvalidArgument("second_pass=tree combines the parts of a split; it needs split > 1");
  }
  if (config.split > 1 && !config.tree) {
    if (std::string blocker = SplitBlocker(analysis); !blocker.empty()) {
      return InvalidArgument("split=" + std::to_string(config.split) +
                             " with the atomic second pass needs atomics, and " + blocker +
                             " (second_pass=tree combines any reducer's parts)");
    }
  }
  int64_t shared = SharedBytes(analysis, config);
  if (shared > device.shared_memory_per_block) {
    return InvalidArgument("shared memory of " + std::to_string(shared) +
                           " bytes is over the device limit " +
                           std::to_string(device.shared_memory_per_block));
  }
  int64_t blocks = BlockCount(analysis, config);
  if (blocks > device.max_grid_x) {
    return InvalidArgument(std::to_string(blocks) + " blocks are over the grid limit " +
                           std::to_string(device.max_grid_x));
  }
  return OkStatus();
}

// Row: threads along the row 1..1024 (one thread per row needs no shuffles: the host's
// best), rows per block up to 1024 threads, vector 1/2/4, elements per thread 1..32.
// Column: threads along W 4..64 and along H 1..64, vector 1/2/4, rows per
// step 1/2/4. Unsplit first, then splits 4 and 16 with the atomic second pass where atomics
// can combine the parts, then splits 4 and 16 with the tree pass (appended, so that the
// configs before it keep their places). Configs whose threads, elements or parts exceed the
// dims they cover are pruned as redundant, with that reason.
std::vector<SpaceEntry> ReductionSpace(const FusionAnalysis& analysis, const DeviceInfo& device) {
  std::vector<SpaceEntry> space;
  if (!analysis.reduction) return space;
  const std::array<int64_t, 3>& dims = analysis.reduction->dimensions;
  bool row = analysis.reduction->is_row_reduction;
  auto add = [&](const ReductionConfig& config) {
    Status valid = ValidateReductionConfig(config, analysis, device);
    std::string reason = valid ? "" : valid.error().message;
    if (reason.empty() && row && config.threads_x > kWarp &&
        (config.threads_x - kWarp) * config.vector >= dims[2]) {
      reason = "threads_x=" + std::to_string(config.threads_x) + " leaves whole warps idle on " +
               std::to_string(dims[2]) + " elements";
    }
    if (reason.empty() && config.threads_y > PowerOfTwoAtLeast(dims[1]) &&
        config.threads() > kWarp) {
      reason = "threads_y=" + std::to_string(config.threads_y) + " leaves threads idle on " +
               std::to_string(dims[1]) + " rows";
    }
    int64_t steps = row ? CeilDiv(dims[2], config.threads_x * config.elements_per_thread)
                        : CeilDiv(dims[1], config.threads_y * config.elements_per_thread);
    if (reason.empty() && config.split > 1 &&
        CeilDiv(steps, config.split) * (config.split - 1) >= steps) {
      reason = "split=" + std::to_string(config.split) + " leaves parts without elements (" +
               std::to_string(steps) + " steps)";
    }
    space.push_back({config.ToJson(), reason});
  };
  // Atomic splits only where atomics can combine the parts (the validation says why not).
  bool atomics = SplitBlocker(analysis).empty();
  const std::pair<int64_t, bool> splits[] = {
      {1, false}, {4, false}, {16, false}, {4, true}, {16, true}};
  for (auto [split, tree] : splits) {
    if (split > 1 && !tree && !atomics) continue;
    for (int64_t vector : {1, 2, 4}) {
      if (row) {
        for (int64_t threads_x : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}) {
          for (int64_t threads_y : {1, 2, 4, 8, 16, 32, 64}) {
            for (int64_t per_thread : {1, 2, 4, 8, 16, 32}) {
              if (per_thread < vector) continue;
              add({threads_x, threads_y, vector, per_thread, split, tree});
            }
          }
        }
      } else {
        for (int64_t threads_x : {4, 8, 16, 32, 64}) {
          for (int64_t threads_y : {1, 2, 4, 8, 16, 32, 64}) {
            for (int64_t per_thread : {1, 2, 4}) {
              add({threads_x, threads_y, vector, per_thread, split, tree});
            }
          }
        }
      }
    }
  }
  return space;
}

}  // namespace tilesmith::emitters
