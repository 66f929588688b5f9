#include "costmodel/features.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "compiler/emitters/emitter_registry.h"
#include "costmodel/gpu_model.h"
#include "costmodel/kernel_facts.h"

namespace tilesmith::costmodel {
namespace {

// The config columns of the first schemas, in the place stored models expect them. Every
// other declared field (a new emitter's, a new field) follows them in registry order; the
// columns themselves come from the emitters' declarations (Emitter::config_fields).
constexpr std::string_view kFirstConfigColumns[] = {
    "threads_per_block",   "vector", "chunks",  "blocks_y", "threads_x",     "threads_y",
    "elements_per_thread", "split",  "tile_in", "tile_out", "rows_per_pass", "threads",
    "shared_padding"};
// Per-operand slots: shapes beyond these are summarised by the totals.
constexpr int kInputSlots = 4;
constexpr int kOutputSlots = 2;
constexpr const char* kOperandFigures[] = {"bytes", "elements", "rank", "minor_extent"};
// Analytic breakdown terms taken as they are (GPU and host models name them; a term the
// model of this target does not have stays missing).
constexpr const char* kAnalyticTerms[] = {
    "memory_us",         "compute_us",          "read_us",
    "write_us",          "shared_us",           "thread_steps_us",
    "dispatch_us",       "latency_hiding",      "l2_read_boost",
    "bandwidth_cap_gbs", "bandwidth_gbs",       "simd_efficiency",
    "busy_threads",      "parallel_efficiency", "vector",
    "fits_cache",        "thread_steps",        "vectorised_across_threads",
    "sweep_miss_us",     "segment_steps",       "code_us",
    "wave_latency_us",   "load_balance"};
// The host model's thread-walk misses by kind (HostSweepCost): one total hides which of
// them a config pays, and their prices differ by machine.
constexpr const char* kSweepTerms[] = {"l2_lines", "l3_lines", "page_walks", "tlb_misses"};

// Every declared config field that is a feature, once (the first declaration wins; the
// emitters test checks that shared fields agree), in column order.
std::vector<emitters::ConfigField> MakeConfigFeatures() {
  std::vector<emitters::ConfigField> declared;
  for (const emitters::Emitter* emitter : emitters::RegisteredEmitters()) {
    for (const emitters::ConfigField& field : emitter->config_fields()) {
      if (field.encoding == emitters::FeatureEncoding::kNone) continue;
      auto same = [&](const emitters::ConfigField& f) { return f.name == field.name; };
      if (std::none_of(declared.begin(), declared.end(), same)) declared.push_back(field);
    }
  }
  auto rank = [](std::string_view name) {
    auto found = std::find(std::begin(kFirstConfigColumns), std::end(kFirstConfigColumns), name);
    return found - std::begin(kFirstConfigColumns);
  };
  std::stable_sort(declared.begin(), declared.end(),
                   [&](const auto& a, const auto& b) { return rank(a.name) < rank(b.name); });
  return declared;
}

const std::vector<emitters::ConfigField>& ConfigFeatures() {
  static const std::vector<emitters::ConfigField> fields = MakeConfigFeatures();
  return fields;
}

std::string ColumnOf(const emitters::ConfigField& field, std::string_view value = {}) {
  std::string column = "cfg." + std::string(field.name);
  if (field.encoding == emitters::FeatureEncoding::kLog2) column += ".log2";
  if (field.encoding == emitters::FeatureEncoding::kOneHot) column += "." + std::string(value);
  return column;
}

std::vector<std::string> MakeNames() {
  std::vector<std::string> names;
  for (const emitters::ConfigField& field : ConfigFeatures()) {
    if (field.encoding == emitters::FeatureEncoding::kOneHot) {
      for (std::string_view value : field.values) names.push_back(ColumnOf(field, value));
    } else {
      names.push_back(ColumnOf(field));
    }
  }
  for (const emitters::Emitter* emitter : emitters::RegisteredEmitters()) {
    names.push_back("emitter." + std::string(emitter->name()));
  }
  for (const char* name :
       {"launch.blocks", "launch.threads_per_block", "launch.threads", "launch.shared_bytes",
        "resources.registers", "resources.spill_bytes", "operands.inputs", "operands.outputs"}) {
    names.push_back(name);
  }
  for (int i = 0; i < kInputSlots; ++i) {
    for (const char* figure : kOperandFigures) {
      names.push_back("in" + std::to_string(i) + "." + figure);
    }
  }
  for (int i = 0; i < kOutputSlots; ++i) {
    for (const char* figure : kOperandFigures) {
      names.push_back("out" + std::to_string(i) + "." + figure);
    }
  }
  for (const char* name : {"bytes.read",
                           "bytes.write",
                           "bytes.total",
                           "bytes.per_cache",
                           "bytes.element",
                           "flops.elementwise",
                           "flops.transcendental",
                           "flops.divide_sqrt",
                           "flops.reduce",
                           "flops.total",
                           "flops.per_byte",
                           "kernel.vector_width",
                           "kernel.thread_steps",
                           "kernel.steps_per_thread",
                           "kernel.threads_vectorize",
                           "kernel.phases",
                           "kernel.loops",
                           "occupancy.blocks_per_sm",
                           "occupancy.warps_per_sm",
                           "occupancy.fraction",
                           "waves.count",
                           "waves.efficiency",
                           "coalescing.read_factor",
                           "coalescing.write_factor",
                           "coalescing.accesses",
                           "code.instructions",
                           "code.divisions",
                           "code.memory",
                           "code.vector",
                           "code.branches",
                           "code.total_instructions",
                           "code.total_divisions",
                           "code.division_share",
                           "code.memory_share",
                           "code.vector_share",
                           "code.instructions_per_element",
                           "code.constant_divisions",
                           "code.gather_lanes",
                           "code.constant_division_share",
                           "code.gather_lanes_per_instruction",
                           "code.half_lanes",
                           "code.half_lanes_per_instruction",
                           "code.machine_instructions",
                           "code.float_divisions",
                           "code.machine_instructions_per_element",
                           "code.lane_moves",
                           "code.lane_moves_per_element",
                           "shared.bytes",
                           "shared.conflict_degree",
                           "ratio.elements_per_thread",
                           "ratio.bytes_per_thread",
                           "ratio.blocks_per_core",
                           "ratio.memory_share",
                           "analytic.us",
                           "analytic.log_us"}) {
    names.push_back(name);
  }
  for (const char* term : kAnalyticTerms) names.push_back(std::string("analytic.") + term);
  for (const char* term : kSweepTerms) names.push_back(std::string("sweep.") + term);
  return names;
}

const std::vector<std::string>& Names() {
  static const std::vector<std::string> names = MakeNames();
  return names;
}

// Column lookup for filling a row; names are few, a sorted map is fast enough.
const std::map<std::string, int, std::less<>>& Columns() {
  static const std::map<std::string, int, std::less<>> columns = [] {
    std::map<std::string, int, std::less<>> map;
    for (size_t i = 0; i < Names().size(); ++i) map.emplace(Names()[i], static_cast<int>(i));
    return map;
  }();
  return columns;
}

class Row {
 public:
  Row() : values_(Names().size(), std::numeric_limits<float>::quiet_NaN()) {}
  void Set(std::string_view name, double value) {
    int column = FeatureIndex(name);
    assert(column >= 0 && "a feature missing from the schema");
    if (column >= 0) values_[column] = static_cast<float>(value);
  }
  std::vector<float> Take() { return std::move(values_); }

 private:
  std::vector<float> values_;
};

void SetOperand(Row& row, const std::string& prefix, const hlo::Shape& shape, int64_t bytes) {
  row.Set(prefix + ".bytes", static_cast<double>(bytes));
  row.Set(prefix + ".elements", static_cast<double>(shape.ElementCount()));
  row.Set(prefix + ".rank", static_cast<double>(shape.rank()));
  // The extent of the most minor dimension: how long a contiguous run is.
  int64_t minor = 1;
  if (shape.rank() > 0) {
    const auto& order = shape.layout().minor_to_major;
    minor = shape.dim(order.empty() ? shape.rank() - 1 : order.front());
  }
  row.Set(prefix + ".minor_extent", static_cast<double>(minor));
}

double NumberOr(const nlohmann::json& value, double fallback) {
  if (value.is_number()) return value.get<double>();
  if (value.is_boolean()) return value.get<bool>() ? 1 : 0;
  return fallback;
}

// The field's columns from `config`; a field the config lacks (another emitter's) or a value
// of the wrong type stays missing.
void SetConfigField(Row& row, const emitters::ConfigField& field, const nlohmann::json& config) {
  auto found = config.find(field.name);
  if (found == config.end()) return;
  switch (field.encoding) {
    case emitters::FeatureEncoding::kNumeric:
      if (found->is_number()) row.Set(ColumnOf(field), found->get<double>());
      return;
    case emitters::FeatureEncoding::kLog2:
      if (found->is_number() && found->get<double>() > 0) {
        row.Set(ColumnOf(field), std::log2(found->get<double>()));
      }
      return;
    case emitters::FeatureEncoding::kBoolean:
      if (found->is_boolean()) row.Set(ColumnOf(field), found->get<bool>() ? 1 : 0);
      return;
    case emitters::FeatureEncoding::kOneHot:
      if (!found->is_string()) return;
      for (std::string_view value : field.values) {
        row.Set(ColumnOf(field, value), found->get<std::string>() == value ? 1 : 0);
      }
      return;
    case emitters::FeatureEncoding::kNone:
      return;
  }
}

}  // namespace

std::span<const std::string> FeatureNames() { return Names(); }

int FeatureIndex(std::string_view name) {
  auto found = Columns().find(name);
  return found == Columns().end() ? -1 : found->second;
}

std::vector<float> KernelFeatures(const emitters::KernelIR& kernel, const DeviceFigures& device,
                                  const ResourceUsage* usage, const Prediction& analytic) {
  Row row;
  nlohmann::json config = nlohmann::json::parse(kernel.config_json, nullptr, false);
  if (config.is_object()) {
    for (const emitters::ConfigField& field : ConfigFeatures()) SetConfigField(row, field, config);
  }
  for (const emitters::Emitter* emitter : emitters::RegisteredEmitters()) {
    row.Set("emitter." + std::string(emitter->name()), kernel.emitter == emitter->name() ? 1 : 0);
  }

  const int64_t blocks = kernel.launch.block_count();
  const int64_t threads = kernel.launch.threads_per_block();
  const double all_threads = static_cast<double>(blocks) * static_cast<double>(threads);
  int64_t shared = kernel.SharedBytes();
  if (usage != nullptr) shared = std::max(shared, usage->shared_bytes);
  row.Set("launch.blocks", static_cast<double>(blocks));
  row.Set("launch.threads_per_block", static_cast<double>(threads));
  row.Set("launch.threads", all_threads);
  row.Set("launch.shared_bytes", static_cast<double>(shared));
  if (usage != nullptr && usage->registers > 0) {
    row.Set("resources.registers", static_cast<double>(usage->registers));
    row.Set("resources.spill_bytes", static_cast<double>(usage->spill_bytes));
  }

  int inputs = 0, outputs = 0;
  for (const emitters::KernelBuffer& buffer : kernel.buffers) {
    if (buffer.is_scratch) continue;  // a split's partials: not an operand of the fusion
    int& count = buffer.is_output ? outputs : inputs;
    int slots = buffer.is_output ? kOutputSlots : kInputSlots;
    if (count < slots && buffer.shape.IsArray()) {
      SetOperand(row, (buffer.is_output ? "out" : "in") + std::to_string(count), buffer.shape,
                 BufferBytes(buffer));
    }
    ++count;
  }
  row.Set("operands.inputs", inputs);
  row.Set("operands.outputs", outputs);

  Traffic traffic = KernelTraffic(kernel);
  double bytes = static_cast<double>(traffic.read_bytes + traffic.write_bytes);
  row.Set("bytes.read", static_cast<double>(traffic.read_bytes));
  row.Set("bytes.write", static_cast<double>(traffic.write_bytes));
  row.Set("bytes.total", bytes);
  if (device.cache_bytes > 0) {
    row.Set("bytes.per_cache", bytes / static_cast<double>(device.cache_bytes));
  }
  row.Set("bytes.element", static_cast<double>(ComputeElementBytes(kernel)));
  FlopsByClass flops = KernelFlopsByClass(kernel);
  row.Set("flops.elementwise", flops.elementwise);
  row.Set("flops.transcendental", flops.transcendental);
  row.Set("flops.divide_sqrt", flops.divide_sqrt);
  row.Set("flops.reduce", flops.reduce);
  row.Set("flops.total", flops.total());
  row.Set("flops.per_byte", flops.total() / std::max(1.0, bytes));

  double steps = KernelThreadSteps(kernel);
  row.Set("kernel.vector_width", static_cast<double>(KernelVectorWidth(kernel)));
  row.Set("kernel.thread_steps", steps);
  row.Set("kernel.steps_per_thread", steps / std::max(1.0, all_threads));
  row.Set("kernel.threads_vectorize", ThreadsVectorize(kernel) ? 1 : 0);
  size_t loops = 0;
  for (const emitters::Phase& phase : kernel.phases) loops += phase.loops.size();
  row.Set("kernel.phases", static_cast<double>(kernel.phases.size()));
  row.Set("kernel.loops", static_cast<double>(loops));

  // Occupancy and waves as the GPU model computes them; the host has no SMs to fill (its
  // parallel efficiency comes with the analytic terms below).
  if (device.info.sm_count > 0) {
    int64_t registers =
        usage != nullptr && usage->registers > 0 ? usage->registers : kEstimatedRegisters;
    Occupancy occupancy = ComputeOccupancy(device.info, threads, registers, shared);
    Waves waves = ComputeWaves(blocks, occupancy.blocks_per_sm, device.info.sm_count);
    row.Set("occupancy.blocks_per_sm", static_cast<double>(occupancy.blocks_per_sm));
    row.Set("occupancy.warps_per_sm", static_cast<double>(occupancy.warps_per_sm));
    row.Set("occupancy.fraction", occupancy.fraction);
    row.Set("waves.count", static_cast<double>(waves.waves));
    row.Set("waves.efficiency", waves.efficiency);
  }
  Coalescing coalescing = KernelCoalescing(kernel);
  row.Set("coalescing.read_factor", coalescing.read_factor);
  row.Set("coalescing.write_factor", coalescing.write_factor);
  row.Set("coalescing.accesses", static_cast<double>(coalescing.accesses));
  SharedTraffic shared_traffic = KernelSharedTraffic(kernel);
  row.Set("shared.bytes", shared_traffic.bytes);
  row.Set("shared.conflict_degree", static_cast<double>(shared_traffic.conflict_degree));

  double out_elements = 0;
  for (const emitters::KernelBuffer& buffer : kernel.buffers) {
    if (buffer.is_output && buffer.shape.IsArray()) {
      out_elements = std::max(out_elements, static_cast<double>(buffer.shape.ElementCount()));
    }
  }
  // What the compiled host code executes (per block, then the whole grid), where counted.
  if (usage != nullptr && usage->has_host_code()) {
    // A block's count over the whole grid, per output element.
    auto per_element = [&](double per_block) {
      return per_block * static_cast<double>(blocks) / std::max(1.0, out_elements);
    };
    double instructions = usage->executed_instructions;
    row.Set("code.instructions", instructions);
    row.Set("code.divisions", usage->executed_divisions);
    row.Set("code.memory", usage->executed_memory);
    row.Set("code.vector", usage->executed_vector);
    row.Set("code.branches", usage->executed_branches);
    row.Set("code.total_instructions", instructions * static_cast<double>(blocks));
    row.Set("code.total_divisions", usage->executed_divisions * static_cast<double>(blocks));
    row.Set("code.division_share", usage->executed_divisions / instructions);
    row.Set("code.memory_share", usage->executed_memory / instructions);
    row.Set("code.vector_share", usage->executed_vector / instructions);
    row.Set("code.instructions_per_element", per_element(instructions));
    row.Set("code.constant_divisions", usage->executed_constant_divisions);
    row.Set("code.gather_lanes", usage->executed_gather_lanes);
    row.Set("code.constant_division_share",
            usage->executed_constant_divisions / std::max(1.0, usage->executed_divisions));
    row.Set("code.gather_lanes_per_instruction", usage->executed_gather_lanes / instructions);
    row.Set("code.half_lanes", usage->executed_half_lanes);
    row.Set("code.half_lanes_per_instruction", usage->executed_half_lanes / instructions);
    row.Set("code.float_divisions", usage->executed_float_divisions);
    if (usage->executed_machine_instructions > 0) {
      row.Set("code.machine_instructions", usage->executed_machine_instructions);
      row.Set("code.machine_instructions_per_element",
              per_element(usage->executed_machine_instructions));
      row.Set("code.lane_moves", usage->executed_lane_moves);
      row.Set("code.lane_moves_per_element", per_element(usage->executed_lane_moves));
    }
  }

  // Scale-free figures: what transfers between fusions of different sizes, where absolute
  // sizes mostly tell fusions apart.
  row.Set("ratio.elements_per_thread", out_elements / std::max(1.0, all_threads));
  row.Set("ratio.bytes_per_thread", bytes / std::max(1.0, all_threads));
  double cores = static_cast<double>(device.info.sm_count);
  auto calibration = analytic.breakdown.find("calibration");
  if (cores <= 0 && calibration != analytic.breakdown.end() && calibration->is_object()) {
    cores = NumberOr(calibration->value("threads", nlohmann::json()), 0);
  }
  if (cores > 0) row.Set("ratio.blocks_per_core", static_cast<double>(blocks) / cores);
  auto memory = analytic.breakdown.find("memory_us");
  if (analytic.microseconds > 0 && memory != analytic.breakdown.end()) {
    row.Set("ratio.memory_share", NumberOr(*memory, 0) / analytic.microseconds);
  }
  row.Set("analytic.us", analytic.microseconds);
  row.Set("analytic.log_us", std::log(std::max(1e-3, analytic.microseconds)));
  for (const char* term : kAnalyticTerms) {
    auto found = analytic.breakdown.find(term);
    if (found == analytic.breakdown.end()) continue;
    double value = NumberOr(*found, std::numeric_limits<double>::quiet_NaN());
    if (!std::isnan(value)) row.Set(std::string("analytic.") + term, value);
  }
  auto sweep = analytic.breakdown.find("sweep");
  if (sweep != analytic.breakdown.end() && sweep->is_object()) {
    for (const char* term : kSweepTerms) {
      double value =
          NumberOr(sweep->value(term, nlohmann::json()), std::numeric_limits<double>::quiet_NaN());
      if (!std::isnan(value)) row.Set(std::string("sweep.") + term, value);
    }
  }
  return row.Take();
}

}  // namespace tilesmith::costmodel
