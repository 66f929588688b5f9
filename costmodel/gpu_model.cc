#include "costmodel/gpu_model.h"

#include <algorithm>
#include <cmath>

#include "costmodel/kernel_facts.h"

namespace tilesmith::costmodel {

Occupancy ComputeOccupancy(const emitters::DeviceInfo& device, int64_t threads_per_block,
                           int64_t registers_per_thread, int64_t shared_bytes_per_block) {
  Occupancy occupancy;
  int64_t warp = std::max<int64_t>(1, device.warp_size);
  int64_t warps_per_block = std::max<int64_t>(1, (threads_per_block + warp - 1) / warp);
  int64_t by_threads = device.threads_per_sm / (warps_per_block * warp);
  int64_t registers_per_warp =
      (std::max<int64_t>(1, registers_per_thread) * warp + kRegisterAllocationUnit - 1) /
      kRegisterAllocationUnit * kRegisterAllocationUnit;
  int64_t by_registers = device.registers_per_sm / (registers_per_warp * warps_per_block);
  int64_t by_shared = kMaxBlocksPerSm;
  if (shared_bytes_per_block > 0) {
    int64_t shared_per_sm = device.shared_memory_per_block_optin + kSharedReservedPerBlock;
    by_shared = shared_per_sm / (shared_bytes_per_block + kSharedReservedPerBlock);
  }
  occupancy.blocks_per_sm = kMaxBlocksPerSm;
  occupancy.limited_by = "blocks";
  auto limit = [&](int64_t value, const char* name) {
    if (value < occupancy.blocks_per_sm) {
      occupancy.blocks_per_sm = value;
      occupancy.limited_by = name;
    }
  };
  limit(by_threads, "threads");
  limit(by_registers, "registers");
  limit(by_shared, "shared");
  occupancy.blocks_per_sm = std::max<int64_t>(0, occupancy.blocks_per_sm);
  occupancy.warps_per_sm = occupancy.blocks_per_sm * warps_per_block;
  occupancy.fraction = static_cast<double>(occupancy.warps_per_sm * warp) /
                       static_cast<double>(std::max<int64_t>(1, device.threads_per_sm));
  return occupancy;
}

Waves ComputeWaves(int64_t blocks, int64_t blocks_per_sm, int64_t sm_count) {
  Waves waves;
  int64_t capacity = std::max<int64_t>(1, blocks_per_sm) * std::max<int64_t>(1, sm_count);
  waves.waves = (blocks + capacity - 1) / capacity;
  if (waves.waves > 0) {
    waves.efficiency = static_cast<double>(blocks) / static_cast<double>(waves.waves * capacity);
  }
  return waves;
}

double ReadBoost(int64_t working_set_bytes, int64_t cache_bytes) {
  return cache_bytes > 0 && working_set_bytes <= cache_bytes ? kL2ReadBoost : 1.0;
}

double PerBlockBandwidthCap(int64_t blocks_in_flight, double clock_ghz) {
  return static_cast<double>(blocks_in_flight) * clock_ghz * 1e3 * kBytesPerBlockCycle;
}

double LatencyHiding(int64_t warps_per_sm) {
  return std::min(1.0, static_cast<double>(std::max<int64_t>(1, warps_per_sm)) /
                           static_cast<double>(kWarpsToHideLatency));
}

double LatencyCoverage(double bytes_in_flight, double read_bytes,
                       const emitters::DeviceInfo& device) {
  // GB/s is bytes per ns: latency (ns) x bandwidth (GB/s) is the bytes that must be in flight.
  double needed =
      std::min(device.memory_latency_ns * device.memory_bandwidth_gbs, std::max(0.0, read_bytes));
  if (device.memory_latency_ns <= 0 || needed <= 0) return 0;
  return std::min(1.0, bytes_in_flight / needed);
}

double ComputeTimeUs(double flops, int64_t blocks, int64_t threads_per_block, int64_t sm_count,
                     double clock_ghz) {
  double lanes =
      static_cast<double>(std::max<int64_t>(1, std::min(blocks, sm_count))) *
      static_cast<double>(std::max<int64_t>(1, std::min<int64_t>(threads_per_block, 128)));
  return flops / (clock_ghz * 1e3 * 2 * lanes);
}

double Overlapped(double compute_us, double memory_us) {
  return compute_us + memory_us - kOverlap * std::min(compute_us, memory_us);
}

double BlockDispatchUs(int64_t blocks, int64_t sm_count) {
  int64_t sms = std::max<int64_t>(1, sm_count);
  return kBlockDispatchUs * static_cast<double>((std::max<int64_t>(0, blocks) + sms - 1) / sms);
}

double SharedTimeUs(double bytes, int64_t conflict_degree, int64_t sm_count, double clock_ghz) {
  double per_us = static_cast<double>(std::max<int64_t>(1, sm_count)) * kSharedBytesPerSmCycle *
                  clock_ghz * 1e3;
  return bytes * static_cast<double>(std::max<int64_t>(1, conflict_degree)) / per_us;
}

Expected<Prediction> GpuModel::Predict(const emitters::KernelIR& kernel,
                                       const DeviceFigures& device,
                                       const ResourceUsage* usage) const {
  const emitters::DeviceInfo& info = device.info;
  if (info.memory_bandwidth_gbs <= 0 || info.sm_count <= 0 || info.clock_ghz <= 0) {
    return InvalidArgument("device '" + info.name +
                           "' has no bandwidth, SM count or clock for the GPU model");
  }
  int64_t blocks = kernel.launch.block_count();
  int64_t threads = kernel.launch.threads_per_block();
  int64_t registers =
      usage != nullptr && usage->registers > 0 ? usage->registers : kEstimatedRegisters;
  int64_t shared =
      usage != nullptr ? std::max(usage->shared_bytes, kernel.SharedBytes()) : kernel.SharedBytes();
  Occupancy occupancy = ComputeOccupancy(info, threads, registers, shared);
  if (occupancy.blocks_per_sm == 0) {
    return InvalidArgument("a block of " + std::to_string(threads) + " threads, " +
                           std::to_string(registers) + " registers and " + std::to_string(shared) +
                           " shared bytes does not fit on an SM");
  }
  Waves waves = ComputeWaves(blocks, occupancy.blocks_per_sm, info.sm_count);

  Traffic traffic = KernelTraffic(kernel);
  Coalescing coalescing = KernelCoalescing(kernel);
  SharedTraffic shared_traffic = KernelSharedTraffic(kernel);
  double spill_bytes = usage != nullptr ? static_cast<double>(usage->spill_bytes) *
                                              static_cast<double>(threads * blocks)
                                        : 0.0;
  double flops = KernelFlops(kernel);

  int64_t in_flight = std::min(blocks, occupancy.blocks_per_sm * info.sm_count);
  double dram = info.memory_bandwidth_gbs * 1e3;  // bytes per µs
  // A loop kernel's thread issues the loads of all its elements (vector x chunks, with no
  // dependence between them) before it uses one, so the resident blocks hold all their reads
  // in flight; where they cover the latency, the warp count does not limit the bandwidth.
  // Other emitters loop over their elements, keeping fewer loads in flight than they read.
  double coverage = 0;
  if (kernel.emitter == "loop" && blocks > 0) {
    double read_bytes = static_cast<double>(traffic.read_bytes);
    coverage =
        LatencyCoverage(static_cast<double>(in_flight) * read_bytes / static_cast<double>(blocks),
                        read_bytes, info);
  }
  double hiding = std::max(LatencyHiding(occupancy.warps_per_sm), coverage);
  double cap = PerBlockBandwidthCap(in_flight, info.clock_ghz);
  double boost = ReadBoost(traffic.read_bytes + traffic.write_bytes, device.cache_bytes);
  double read_bw = std::min(dram * boost, cap) * hiding;
  double write_bw = std::min(dram, cap) * hiding;
  double read_us =
      (static_cast<double>(traffic.read_bytes) * coalescing.read_factor + spill_bytes / 2) /
      read_bw;
  double write_us =
      (static_cast<double>(traffic.write_bytes) * coalescing.write_factor + spill_bytes / 2) /
      write_bw;
  double memory_us = read_us + write_us;
  double compute_us = ComputeTimeUs(flops, blocks, threads, info.sm_count, info.clock_ghz);
  double shared_us = SharedTimeUs(shared_traffic.bytes, shared_traffic.conflict_degree,
                                  info.sm_count, info.clock_ghz);
  double dispatch_us = BlockDispatchUs(blocks, info.sm_count);
  double wave_latency_us = kWaveLatencyUs * static_cast<double>(waves.waves);
  // Dispatching blocks overlaps their memory and compute work; the round trip of each wave
  // does not, as the next wave's loads wait for the blocks before it to retire.
  double total = kLaunchOverheadUs +
                 std::max(Overlapped(compute_us + shared_us, memory_us), dispatch_us) +
                 wave_latency_us;

  Prediction prediction;
  prediction.microseconds = total;
  prediction.breakdown = {
      {"model", name()},
      {"read_us", read_us},
      {"write_us", write_us},
      {"memory_us", memory_us},
      {"compute_us", compute_us},
      {"shared_us", shared_us},
      {"launch_us", kLaunchOverheadUs},
      {"dispatch_us", dispatch_us},
      {"wave_latency_us", wave_latency_us},
      {"bytes",
       {{"read", traffic.read_bytes}, {"write", traffic.write_bytes}, {"spill", spill_bytes}}},
      {"flops", flops},
      {"coalescing",
       {{"read_factor", coalescing.read_factor},
        {"write_factor", coalescing.write_factor},
        {"warp_accesses", coalescing.accesses}}},
      {"bank_conflict_degree", shared_traffic.conflict_degree},
      {"l2_read_boost", boost},
      {"bandwidth_cap_gbs", cap / 1e3},
      {"latency_hiding", hiding},
      {"latency_coverage", coverage},
      {"occupancy",
       {{"blocks_per_sm", occupancy.blocks_per_sm},
        {"limited_by", occupancy.limited_by},
        {"warps_per_sm", occupancy.warps_per_sm},
        {"fraction", occupancy.fraction}}},
      {"waves", {{"count", waves.waves}, {"efficiency", waves.efficiency}}},
      {"resources",
       {{"registers", registers},
        {"shared_bytes", shared},
        {"source", usage != nullptr && usage->registers > 0 ? "cubin" : "estimate"}}},
  };
  return prediction;
}

}  // namespace tilesmith::costmodel
