#include "compiler/emitters/loop_emitter.h"

#include <algorithm>
#include <numeric>

#include "compiler/analysis/partitioner.h"
#include "compiler/emitters/element_loop.h"
#include "compiler/emitters/loop_launch.h"
#include "compiler/emitters/row_reductions.h"

namespace tilesmith::emitters {
namespace {

using analysis::AffineExpr;
using analysis::FusionAnalysis;
using analysis::Interval;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Fusion outputs grouped by dims: each group is one loop.
struct OutputGroup {
  std::vector<int64_t> outputs;  // positions among FusionOutputs
  const hlo::Shape* shape;       // the first output's shape: its layout orders the loop
};

std::vector<OutputGroup> GroupOutputs(const std::vector<FusionOutput>& outputs) {
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
  for (const FusionOutput& output : FusionOutputs(analysis)) {
    largest = std::max(largest, output.shape->ElementCount());
  }
  return largest;
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
  return DefaultLoopConfigFor(analysis, device, LargestOutputElements(analysis), 0);
}

LoopConfig DefaultLoopConfigFor(const FusionAnalysis& analysis, const DeviceInfo& device,
                                int64_t elements, int64_t vector_divides) {
  LoopConfig config;
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
  if (vector_divides > 0) vector = std::gcd(vector, vector_divides);
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
  return ValidateLoopConfigFor(config, analysis, device, LargestOutputElements(analysis));
}

Status ValidateLoopConfigFor(const LoopConfig& config, const FusionAnalysis& analysis,
                             const DeviceInfo& device, int64_t elements) {
  if (config.threads_per_block < 1 || config.threads_per_block > device.max_threads_per_block) {
    return InvalidArgument("threads_per_block=" + std::to_string(config.threads_per_block) +
                           " is outside [1, " + std::to_string(device.max_threads_per_block) + "]");
  }
  if (config.threads_per_block % device.warp_size != 0) {
    return InvalidArgument("threads_per_block=" + std::to_string(config.threads_per_block) +
                           " is not a multiple of the warp size " +
                           std::to_string(device.warp_size));
  }
  if (config.vector == 16) {
    // 16 lanes make one 16-byte access only of 1-byte elements; wider ones would need
    // several accesses per lane group and more registers than a step is worth.
    if (int widest = WidestElementBits(analysis); widest > 8) {
      return InvalidArgument(
          "vector=16 needs elements of at most 1 byte (one 16-byte access); "
          "this fusion has " +
          std::to_string(widest) + "-bit elements, so use 8 or less");
    }
  } else if (config.vector != 1 && config.vector != 2 && config.vector != 4 && config.vector != 8) {
    return InvalidArgument("vector=" + std::to_string(config.vector) +
                           " is not 1, 2, 4 or 8 (or 16 for 1-byte elements)");
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
  int64_t blocks = CeilDiv(elements, per_block);
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
  std::vector<FusionOutput> outputs = FusionOutputs(analysis);
  for (const FusionOutput& output : outputs) {
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
  AddFusionBuffers(analysis, kernel);
  analysis::PartitionedComputation partition = analysis::PartitionComputation(fusion);
  AddPartitionFunctions(partition, kernel);

  int64_t per_block = config.threads_per_block * config.vector * config.chunks;
  int64_t blocks = CeilDiv(LargestOutputElements(analysis), per_block);
  int64_t blocks_x = CeilDiv(blocks, config.blocks_y);
  kernel.launch.threads = {config.threads_per_block, 1, 1};
  kernel.launch.blocks = {blocks_x, config.blocks_y, 1};
  ElementLoopShape shape{config.threads_per_block, config.vector, config.chunks, blocks_x,
                         config.blocks_y};
  int64_t next_value = 0;
  std::optional<RowReductions> rows = FindRowReductions(analysis, outputs, shape);
  if (rows) AddRowReductionPhase(*rows, shape, kernel, next_value);

  Phase phase;
  for (const OutputGroup& group : GroupOutputs(outputs)) {
    auto results = [&](std::span<const AffineExpr> index) {
      std::vector<AffineExpr> values(index.begin(), index.end());
      if (rows) values.push_back(RowSlot(*rows, shape, index));
      return values;
    };
    LoopStmt loop{ElementLoopMap(shape, *group.shape, {}, results), {}};
    std::vector<AffineExpr> index;
    for (int64_t d = 0; d < group.shape->rank(); ++d) index.push_back(AffineExpr::Dim(d));
    StoreOutputs(kernel, partition, outputs, group.outputs, index, loop.body, next_value);
    if (rows) BindRowReductions(*rows, kernel, group.shape->rank(), loop.body, next_value);
    phase.loops.push_back(std::move(loop));
  }
  kernel.phases.push_back(std::move(phase));
  return kernel;
}

namespace {

// An emitter whose config is a LoopConfig; what differs between such emitters is in `hooks`.
class LoopConfigEmitter final : public Emitter {
 public:
  // `loop_elements`, when set, names the elements the loop covers, which adds the launch
  // shapes covering the memory latency (LatencyCoveringLoopConfigs) to the space.
  explicit LoopConfigEmitter(LoopConfigHooks hooks,
                             int64_t (*loop_elements)(const FusionAnalysis&) = nullptr)
      : hooks_(hooks), loop_elements_(loop_elements) {}

  std::string_view name() const override { return hooks_.name; }
  std::span<const ConfigField> config_fields() const override {
    static constexpr ConfigField kFields[] = {
        {"threads_per_block"}, {"vector"}, {"chunks"}, {"blocks_y"}};
    return kFields;
  }

  nlohmann::json DefaultConfig(const FusionAnalysis& analysis,
                               const DeviceInfo& device) const override {
    return hooks_.default_config(analysis, device).ToJson();
  }

  Status Validate(const FusionAnalysis& analysis, const nlohmann::json& config,
                  const DeviceInfo& device) const override {
    TS_ASSIGN_OR_RETURN(LoopConfig loop, Read(analysis, config, device));
    return hooks_.validate(loop, analysis, device);
  }

  Expected<KernelIR> Emit(const FusionAnalysis& analysis, const nlohmann::json& config,
                          const DeviceInfo& device) const override {
    TS_ASSIGN_OR_RETURN(LoopConfig loop, Read(analysis, config, device));
    return hooks_.emit(analysis, loop, device);
  }

  std::vector<SpaceEntry> Space(const FusionAnalysis& analysis,
                                const DeviceInfo& device) const override {
    std::vector<SpaceEntry> space;
    LoopConfig base = hooks_.default_config(analysis, device);
    std::vector<int64_t> vectors = LoopVectorWidths(analysis);
    std::vector<LoopConfig> configs;
    for (int64_t threads : {32, 64, 128, 256, 512, 1024}) {
      for (int64_t vector : vectors) {
        for (int64_t chunks : {1, 2, 4}) {
          LoopConfig config = base;
          config.threads_per_block = threads;
          config.vector = vector;
          config.chunks = chunks;
          configs.push_back(config);
        }
      }
    }
    if (loop_elements_ != nullptr) {
      int64_t elements = loop_elements_(analysis);
      for (const LoopConfig& config : LatencyCoveringLoopConfigs(
               base, elements, LoopInputBytesPerElement(analysis, elements), vectors, device)) {
        if (std::find(configs.begin(), configs.end(), config) == configs.end()) {
          configs.push_back(config);
        }
      }
    }
    for (const LoopConfig& config : configs) {
      Status valid = hooks_.validate(config, analysis, device);
      space.push_back({config.ToJson(), valid ? "" : valid.error().message});
    }
    return space;
  }

 private:
  Expected<LoopConfig> Read(const FusionAnalysis& analysis, const nlohmann::json& config,
                            const DeviceInfo& device) const {
    LoopConfig base = hooks_.default_config(analysis, device);
    if (config.is_null()) return base;
    return LoopConfig::FromJson(config, base);
  }

  LoopConfigHooks hooks_;
  int64_t (*loop_elements_)(const FusionAnalysis&);
};

}  // namespace

std::unique_ptr<Emitter> MakeLoopConfigEmitter(LoopConfigHooks hooks) {
  return std::make_unique<LoopConfigEmitter>(hooks);
}

std::unique_ptr<Emitter> MakeLoopEmitter() {
  return std::make_unique<LoopConfigEmitter>(
      LoopConfigHooks{"loop", &DefaultLoopConfig, &ValidateLoopConfig, &EmitLoopKernel},
      &LargestOutputElements);
}

}  // namespace tilesmith::emitters
