#include "compiler/emitters/loop_emitter.h"

#include <algorithm>

#include "compiler/analysis/partitioner.h"

namespace tilesmith::emitters {
namespace {

using analysis::AffineExpr;
using analysis::FusionAnalysis;
using analysis::Interval;
using hlo::HloInstruction;
using hlo::HloOpcode;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Ops after which XLA does not unroll: their code is too large or too serial to gain.
bool MayPreventVectorization(const hlo::HloComputation& fusion) {
  constexpr int64_t kMaxConcatOperandsForUnrolling = 10;
  for (const auto& instruction : fusion.instructions()) {
    switch (instruction->opcode()) {
      case HloOpcode::kReduceWindow:
      case HloOpcode::kSort:
      case HloOpcode::kDot:
      case HloOpcode::kSin:
      case HloOpcode::kCos:
      case HloOpcode::kTan:
      case HloOpcode::kPower:
      case HloOpcode::kAtan2:
        return true;
      case HloOpcode::kConcatenate:
        if (instruction->operand_count() > kMaxConcatOperandsForUnrolling) return true;
        break;
      case HloOpcode::kReduce:
        if (instruction->shape().IsTuple()) return true;
        break;
      default:
        break;
    }
  }
  return false;
}

// A fusion output: an array root, or one array leaf of a tuple-shaped root (a variadic
// reduce, a call, a nested tuple); each gets its own buffer.
struct Output {
  const HloInstruction* root;
  int64_t leaf;  // -1 for an array root
  const hlo::Shape* shape;
};

std::vector<Output> FusionOutputs(const FusionAnalysis& analysis) {
  std::vector<Output> outputs;
  for (const HloInstruction* root : analysis.roots) {
    if (!root->shape().IsTuple()) {
      outputs.push_back({root, -1, &root->shape()});
      continue;
    }
    std::vector<const hlo::Shape*> leaves = ArrayLeaves(root->shape());
    for (size_t i = 0; i < leaves.size(); ++i) {
      outputs.push_back({root, static_cast<int64_t>(i), leaves[i]});
    }
  }
  return outputs;
}

// Fusion outputs grouped by dims: each group is one loop.
struct OutputGroup {
  std::vector<int64_t> outputs;  // positions among FusionOutputs
  const hlo::Shape* shape;       // the first output's shape: its layout orders the loop
};

std::vector<OutputGroup> GroupOutputs(const std::vector<Output>& outputs) {
  std::vector<OutputGroup> groups;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const hlo::Shape& shape = *outputs[i].shape;
    auto same = std::find_if(groups.begin(), groups.end(), [&](const OutputGroup& group) {
      return std::equal(group.shape->dims().begin(), group.shape->dims().end(),
                        shape.dims().begin(), shape.dims().end());
    });
    if (same != groups.end()) {
      same->outputs.push_back(static_cast<int64_t>(i));
    } else {
      groups.push_back({{static_cast<int64_t>(i)}, &shape});
    }
  }
  return groups;
}

int64_t LargestOutputElements(const FusionAnalysis& analysis) {
  int64_t largest = 1;
  for (const Output& output : FusionOutputs(analysis)) {
    largest = std::max(largest, output.shape->ElementCount());
  }
  return largest;
}

// Delinearises `linear` into the dims of `shape`, most minor physical dim fastest.
std::vector<AffineExpr> Delinearize(const AffineExpr& linear, const hlo::Shape& shape) {
  std::vector<AffineExpr> index(shape.rank(), AffineExpr::Constant(0));
  int64_t stride = 1;
  for (int64_t dim : shape.layout().minor_to_major) {
    int64_t size = shape.dim(dim);
    AffineExpr scaled = stride == 1 ? linear : linear.FloorDiv(stride);
    index[dim] = scaled.Mod(size);
    stride *= size;
  }
  return index;
}

}  // namespace

nlohmann::json LoopConfig::ToJson() const {
  return {{"threads_per_block", threads_per_block},
          {"vector", vector},
          {"chunks", chunks},
          {"blocks_y", blocks_y}};
}

Expected<LoopConfig> LoopConfig::FromJson(const nlohmann::json& json) {
  return FromJson(json, LoopConfig{});
}

Expected<LoopConfig> LoopConfig::FromJson(const nlohmann::json& json, const LoopConfig& base) {
  if (!json.is_object()) return InvalidArgument("a loop config is a JSON object");
  LoopConfig config = base;
  for (const auto& [key, value] : json.items()) {
    if (!value.is_number_integer()) {
      return InvalidArgument("loop config field '" + key + "' must be an integer");
    }
    int64_t number = value.get<int64_t>();
    if (key == "threads_per_block")
      config.threads_per_block = number;
    else if (key == "vector")
      config.vector = number;
    else if (key == "chunks")
      config.chunks = number;
    else if (key == "blocks_y")
      config.blocks_y = number;
    else
      return InvalidArgument("unknown loop config field '" + key +
                             "' (threads_per_block, vector, chunks, blocks_y)");
  }
  return config;
}

LoopConfig DefaultLoopConfig(const FusionAnalysis& analysis, const DeviceInfo& device) {
  LoopConfig config;
  int64_t elements = LargestOutputElements(analysis);
  int64_t vector = 1;
  if (elements >= device.threads_per_sm * device.sm_count &&
      !MayPreventVectorization(*analysis.fusion)) {
    vector = elements % 4 == 0 ? 4 : elements % 2 == 0 ? 2 : 1;
    if (device.simd_bytes > 0) {
      // On the host a thread's elements become one SIMD operation: fill the register
      // (GELU f32 runs at 35% of copy bandwidth with 4 lanes, 67% with 8 on AVX2).
      int64_t lanes = std::clamp<int64_t>(
          device.simd_bytes * 8 / std::max(8, analysis.smallest_output_bits), 1, 8);
      while (lanes > 1 && elements % lanes != 0) lanes /= 2;
      vector = lanes;
    }
  }
  // Packed outputs: enough elements per thread to fill whole bytes.
  int64_t bits = std::max(1, analysis.smallest_output_bits);
  vector = std::max<int64_t>(vector, CeilDiv(8, bits));
  config.vector = vector;
  int64_t work = CeilDiv(elements, vector);
  if (work < config.threads_per_block) {
    config.threads_per_block =
        std::max<int64_t>(device.warp_size, CeilDiv(work, device.warp_size) * device.warp_size);
  }
  int64_t blocks = CeilDiv(work, config.threads_per_block);
  config.blocks_y = std::max<int64_t>(1, CeilDiv(blocks, device.max_grid_x));
  return config;
}

Status ValidateLoopConfig(const LoopConfig& config, const FusionAnalysis& analysis,
                          const DeviceInfo& device) {
  if (config.threads_per_block < 1 || config.threads_per_block > device.max_threads_per_block) {
    return InvalidArgument("threads_per_block=" + std::to_string(config.threads_per_block) +
                           " is outside [1, " + std::to_string(device.max_threads_per_block) + "]");
  }
  if (config.threads_per_block % device.warp_size != 0) {
    return InvalidArgument("threads_per_block=" + std::to_string(config.threads_per_block) +
                           " is not a multiple of the warp size " +
                           std::to_string(device.warp_size));
  }
  if (config.vector != 1 && config.vector != 2 && config.vector != 4 && config.vector != 8) {
    return InvalidArgument("vector=" + std::to_string(config.vector) + " is not 1, 2, 4 or 8");
  }
  if (config.chunks < 1) return InvalidArgument("chunks must be >= 1");
  // Packed outputs: each thread must own whole bytes, or neighbours would race on them.
  int64_t min_vector = CeilDiv(8, std::max(1, analysis.smallest_output_bits));
  if (config.vector < min_vector) {
    return InvalidArgument("vector=" + std::to_string(config.vector) + " splits bytes of " +
                           std::to_string(analysis.smallest_output_bits) +
                           "-bit outputs between threads; it must be at least " +
                           std::to_string(min_vector));
  }
  if (config.blocks_y < 1 || config.blocks_y > device.max_grid_y) {
    return InvalidArgument("blocks_y=" + std::to_string(config.blocks_y) + " is outside [1, " +
                           std::to_string(device.max_grid_y) + "]");
  }
  int64_t per_block = config.threads_per_block * config.vector * config.chunks;
  int64_t blocks = CeilDiv(LargestOutputElements(analysis), per_block);
  int64_t blocks_x = CeilDiv(blocks, config.blocks_y);
  if (blocks_x > device.max_grid_x) {
    return InvalidArgument(std::to_string(blocks) + " blocks need a grid x extent of " +
                           std::to_string(blocks_x) + ", over the limit " +
                           std::to_string(device.max_grid_x) +
                           "; raise blocks_y, chunks or threads_per_block");
  }
  return OkStatus();
}

Expected<KernelIR> EmitLoopKernel(const FusionAnalysis& analysis, const LoopConfig& config,
                                  const DeviceInfo& device) {
  TS_RETURN_IF_ERROR(ValidateLoopConfig(config, analysis, device));
  const hlo::HloComputation& fusion = *analysis.fusion;
  std::vector<Output> outputs = FusionOutputs(analysis);
  for (const Output& output : outputs) {
    if (!output.shape->IsArray()) {
      return Unimplemented("output '" + output.root->name() + "' holds " +
                           hlo::ShapeToString(*output.shape) + "; the loop emitter writes arrays");
    }
  }
  KernelIR kernel;
  kernel.name = fusion.name();
  kernel.fusion = &fusion;
  kernel.emitter = "loop";
  kernel.config_json = config.ToJson().dump();
  for (const HloInstruction* parameter : fusion.parameters()) {
    std::string name = "p" + std::to_string(parameter->parameter_number());
    if (!parameter->shape().IsTuple()) {
      kernel.buffers.push_back({name, parameter->shape(), false, parameter->parameter_number()});
      continue;
    }
    std::vector<const hlo::Shape*> leaves = ArrayLeaves(parameter->shape());
    for (size_t i = 0; i < leaves.size(); ++i) {
      kernel.buffers.push_back({name + "." + std::to_string(i), *leaves[i], false,
                                parameter->parameter_number(), static_cast<int64_t>(i)});
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    kernel.buffers.push_back(
        {"out" + std::to_string(i), *outputs[i].shape, true, static_cast<int64_t>(i)});
  }

  analysis::PartitionedComputation partition = analysis::PartitionComputation(fusion);
  for (const analysis::Subgraph& subgraph : partition.subgraphs()) {
    kernel.functions.push_back({subgraph.name, subgraph.roots, subgraph.instructions});
  }

  int64_t per_block = config.threads_per_block * config.vector * config.chunks;
  int64_t blocks = CeilDiv(LargestOutputElements(analysis), per_block);
  int64_t blocks_x = CeilDiv(blocks, config.blocks_y);
  kernel.launch.threads = {config.threads_per_block, 1, 1};
  kernel.launch.blocks = {blocks_x, config.blocks_y, 1};
  int64_t total_threads = config.threads_per_block * blocks_x * config.blocks_y;

  Phase phase;
  int64_t next_value = 0;
  for (const OutputGroup& group : GroupOutputs(outputs)) {
    int64_t elements = group.shape->ElementCount();
    std::vector<Interval> dim_ranges = {Interval::ForSize(config.threads_per_block),
                                        Interval::Point(0),
                                        Interval::Point(0),
                                        Interval::ForSize(blocks_x),
                                        Interval::ForSize(config.blocks_y),
                                        Interval::Point(0)};
    std::vector<analysis::SymbolVar> symbols = {{Interval::ForSize(config.chunks)},
                                                {Interval::ForSize(config.vector)}};
    AffineExpr thread = AffineExpr::Dim(kThreadIdX);
    AffineExpr block = AffineExpr::Dim(kBlockIdY) * blocks_x + AffineExpr::Dim(kBlockIdX);
    AffineExpr linear = (block * config.threads_per_block + thread) * config.vector +
                        AffineExpr::Symbol(0) * (config.vector * total_threads) +
                        AffineExpr::Symbol(1);
    analysis::IndexingMap map(dim_ranges, symbols, Delinearize(linear, *group.shape),
                              {{linear, Interval::ForSize(elements)}});
    map.Simplify();
    LoopStmt loop{std::move(map), {}};
    std::vector<AffineExpr> identity;
    for (int64_t d = 0; d < group.shape->rank(); ++d) identity.push_back(AffineExpr::Dim(d));
    for (int64_t output : group.outputs) {
      const Output& leaf = outputs[output];
      int64_t function = partition.SubgraphOf(*leaf.root);
      std::vector<std::pair<const HloInstruction*, int64_t>> leaves =
          kernel.functions[function].Leaves();
      int64_t position =
          std::find(leaves.begin(), leaves.end(), std::make_pair(leaf.root, leaf.leaf)) -
          leaves.begin();
      // One call per function per loop: later outputs of the same function reuse its values.
      int64_t value = -1;
      for (const BodyStmt& stmt : loop.body) {
        if (const auto* call = std::get_if<CallStmt>(&stmt); call && call->function == function) {
          value = call->first_value + position;
        }
      }
      if (value < 0) {
        loop.body.push_back(CallStmt{function, identity, next_value});
        value = next_value + position;
        next_value += static_cast<int64_t>(leaves.size());
      }
      loop.body.push_back(StoreStmt{kernel.OutputBuffer(output), identity, value});
    }
    phase.loops.push_back(std::move(loop));
  }
  kernel.phases.push_back(std::move(phase));
  return kernel;
}

namespace {

class LoopEmitter final : public Emitter {
 public:
  std::string_view name() const override { return "loop"; }

  nlohmann::json DefaultConfig(const FusionAnalysis& analysis,
                               const DeviceInfo& device) const override {
    return DefaultLoopConfig(analysis, device).ToJson();
  }

  Status Validate(const FusionAnalysis& analysis, const nlohmann::json& config,
                  const DeviceInfo& device) const override {
    TS_ASSIGN_OR_RETURN(LoopConfig loop, Read(analysis, config, device));
    return ValidateLoopConfig(loop, analysis, device);
  }

  Expected<KernelIR> Emit(const FusionAnalysis& analysis, const nlohmann::json& config,
                          const DeviceInfo& device) const override {
    TS_ASSIGN_OR_RETURN(LoopConfig loop, Read(analysis, config, device));
    return EmitLoopKernel(analysis, loop, device);
  }

  std::vector<SpaceEntry> Space(const FusionAnalysis& analysis,
                                const DeviceInfo& device) const override {
    std::vector<SpaceEntry> space;
    LoopConfig base = DefaultLoopConfig(analysis, device);
    for (int64_t threads : {32, 64, 128, 256, 512, 1024}) {
      for (int64_t vector : {1, 2, 4, 8}) {
        for (int64_t chunks : {1, 2, 4}) {
          LoopConfig config = base;
          config.threads_per_block = threads;
          config.vector = vector;
          config.chunks = chunks;
          Status valid = ValidateLoopConfig(config, analysis, device);
          space.push_back({config.ToJson(), valid ? "" : valid.error().message});
        }
      }
    }
    return space;
  }

 private:
  static Expected<LoopConfig> Read(const FusionAnalysis& analysis, const nlohmann::json& config,
                                   const DeviceInfo& device) {
    LoopConfig base = DefaultLoopConfig(analysis, device);
    if (config.is_null()) return base;
    return LoopConfig::FromJson(config, base);
  }
};

}  // namespace

std::unique_ptr<Emitter> MakeLoopEmitter() { return std::make_unique<LoopEmitter>(); }

}  // namespace tilesmith::emitters
