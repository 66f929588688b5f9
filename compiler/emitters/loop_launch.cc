#include "compiler/emitters/loop_launch.h"

#include <algorithm>

#include "compiler/emitters/element_loop.h"
#include "compiler/emitters/kernel_ir.h"

namespace tilesmith::emitters {
namespace {

int ElementBits(const hlo::Shape& shape) {
  return shape.element_type() == hlo::PrimitiveType::kPred ? 8
                                                           : hlo::BitWidth(shape.element_type());
}

// The array leaves of every parameter: what a kernel reads.
std::vector<const hlo::Shape*> InputArrays(const analysis::FusionAnalysis& analysis) {
  std::vector<const hlo::Shape*> inputs;
  for (const hlo::HloInstruction* parameter : analysis.fusion->parameters()) {
    for (const hlo::Shape* leaf : ArrayLeaves(parameter->shape())) inputs.push_back(leaf);
  }
  return inputs;
}

}  // namespace

int WidestElementBits(const analysis::FusionAnalysis& analysis) {
  int widest = 0;
  for (const hlo::Shape* input : InputArrays(analysis)) {
    widest = std::max(widest, ElementBits(*input));
  }
  for (const FusionOutput& output : FusionOutputs(analysis)) {
    if (output.shape->IsArray()) widest = std::max(widest, ElementBits(*output.shape));
  }
  return widest;
}

std::vector<int64_t> LoopVectorWidths(const analysis::FusionAnalysis& analysis) {
  std::vector<int64_t> widths = {1, 2, 4, 8};
  if (WidestElementBits(analysis) <= 8) widths.push_back(16);
  return widths;
}

double LoopInputBytesPerElement(const analysis::FusionAnalysis& analysis, int64_t elements) {
  double bytes = 0;
  for (const hlo::Shape* input : InputArrays(analysis)) {
    double share = std::min(1.0, static_cast<double>(input->ElementCount()) /
                                     static_cast<double>(std::max<int64_t>(1, elements)));
    bytes += share * ElementBits(*input) / 8.0;
  }
  return bytes;
}

int64_t ResidentLoopBlocksPerSm(int64_t threads_per_block, const DeviceInfo& device) {
  int64_t by_threads = device.threads_per_sm / std::max<int64_t>(1, threads_per_block);
  return std::max<int64_t>(0, std::min(by_threads, device.max_blocks_per_sm));
}

double LatencyBytesPerSm(const DeviceInfo& device) {
  // GB/s is bytes per ns, so latency (ns) x bandwidth (GB/s) is bytes.
  return device.memory_latency_ns * device.memory_bandwidth_gbs /
         static_cast<double>(std::max<int64_t>(1, device.sm_count));
}

LoopLaunchFacts DescribeLoopLaunch(const LoopConfig& config, int64_t elements,
                                   double input_bytes_per_element, const DeviceInfo& device) {
  LoopLaunchFacts facts;
  int64_t per_thread = config.vector * config.chunks;
  int64_t resident = ResidentLoopBlocksPerSm(config.threads_per_block, device);
  int64_t sms = std::max<int64_t>(1, device.sm_count);
  facts.blocks = CeilDiv(elements, config.threads_per_block * per_thread);
  facts.blocks_per_sm = std::min(resident, CeilDiv(facts.blocks, sms));
  // Averaged over every SM: an SM without a block keeps nothing in flight.
  int64_t blocks_in_flight = std::min(facts.blocks, resident * sms);
  facts.bytes_in_flight_per_sm = static_cast<double>(blocks_in_flight) *
                                 static_cast<double>(config.threads_per_block * per_thread) *
                                 input_bytes_per_element / static_cast<double>(sms);
  // A fusion whose reads are fewer than latency x bandwidth cannot keep more in flight than
  // all of them at once, spread over every SM.
  double all_reads_per_sm =
      static_cast<double>(elements) * input_bytes_per_element / static_cast<double>(sms);
  facts.bytes_needed_per_sm = std::min(LatencyBytesPerSm(device), all_reads_per_sm);
  facts.fills_all_sms = facts.blocks >= sms * resident;
  facts.covers_latency = facts.bytes_in_flight_per_sm >= facts.bytes_needed_per_sm;
  return facts;
}

std::vector<LoopConfig> LatencyCoveringLoopConfigs(const LoopConfig& base, int64_t elements,
                                                   double input_bytes_per_element,
                                                   std::span<const int64_t> vectors,
                                                   const DeviceInfo& device) {
  std::vector<LoopConfig> configs;
  if (LatencyBytesPerSm(device) <= 0) return configs;
  for (int64_t threads : {128, 256, 512}) {
    if (threads > device.max_threads_per_block) continue;
    for (int64_t vector : vectors) {
      LoopConfig config = base;
      config.threads_per_block = threads;
      config.vector = vector;
      config.chunks = 0;
      // The most work per thread that still fills every SM: bytes in flight grow with it.
      for (int64_t chunks : {8, 4, 2, 1}) {
        config.chunks = chunks;
        if (DescribeLoopLaunch(config, elements, input_bytes_per_element, device).fills_all_sms) {
          break;
        }
        config.chunks = 0;
      }
      if (config.chunks == 0) {
        // No grid fills the slots: a small fusion. One chunk spreads it furthest; it must
        // still give every SM a block.
        config.chunks = 1;
        LoopLaunchFacts facts =
            DescribeLoopLaunch(config, elements, input_bytes_per_element, device);
        if (facts.blocks < device.sm_count) continue;
      }
      LoopLaunchFacts facts = DescribeLoopLaunch(config, elements, input_bytes_per_element, device);
      if (!facts.covers_latency) continue;
      config.blocks_y = std::max<int64_t>(1, CeilDiv(facts.blocks, device.max_grid_x));
      if (std::find(configs.begin(), configs.end(), config) == configs.end()) {
        configs.push_back(config);
      }
    }
  }
  return configs;
}

}  // namespace tilesmith::emitters
