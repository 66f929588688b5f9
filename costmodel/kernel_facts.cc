#include "costmodel/kernel_facts.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "compiler/emitters/element_loop.h"
#include "compiler/hlo/tiling.h"
#include "costmodel/warp_accesses.h"

namespace tilesmith::costmodel {

namespace {

using namespace facts_internal;
using emitters::KernelBuffer;
using emitters::KernelIR;
using emitters::LoopStmt;
using hlo::HloOpcode;

double OpFlops(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kTanh:
    case HloOpcode::kLogistic:
    case HloOpcode::kErf:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kPower:
    case HloOpcode::kAtan2:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtanh:
    case HloOpcode::kCosh:
    case HloOpcode::kSinh:
    case HloOpcode::kCbrt:
      return kTranscendentalFlops;
    case HloOpcode::kDivide:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kRemainder:
      return 4;
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kBitcast:
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kCopy:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kIota:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGather:
    case HloOpcode::kScatter:
    case HloOpcode::kBitcastConvert:
      return 0;
    default:
      return 1;
  }
}

int64_t Elements(const hlo::Shape& shape) {
  int64_t total = 0;
  for (const hlo::Shape* leaf : emitters::ArrayLeaves(shape))
    total += std::max<int64_t>(0, leaf->ElementCount());
  return total;
}

}  // namespace

int64_t BufferBytes(const KernelBuffer& buffer) {
  if (!buffer.shape.IsArray()) return 0;
  auto layout = hlo::PhysicalLayout::Create(buffer.shape);
  return layout ? layout->byte_size() : 0;
}

Traffic KernelTraffic(const KernelIR& kernel) {
  Traffic traffic;
  for (const KernelBuffer& buffer : kernel.buffers) {
    (buffer.is_output ? traffic.write_bytes : traffic.read_bytes) += BufferBytes(buffer);
  }
  return traffic;
}

FlopsByClass KernelFlopsByClass(const KernelIR& kernel) {
  FlopsByClass flops;
  if (kernel.fusion == nullptr) return flops;
  for (const auto& instruction : kernel.fusion->instructions()) {
    if (instruction->opcode() == HloOpcode::kReduce ||
        instruction->opcode() == HloOpcode::kReduceWindow) {
      flops.reduce += static_cast<double>(Elements(instruction->operand(0)->shape()));
      continue;
    }
    if (instruction->opcode() == HloOpcode::kDot && instruction->attributes().dot) {
      // A multiply and an add per output element and contracted element.
      double contracted = 1;
      const hlo::Shape& lhs = instruction->operand(0)->shape();
      for (int64_t d : instruction->attributes().dot->lhs_contracting) {
        contracted *= static_cast<double>(lhs.dims()[d]);
      }
      flops.elementwise += 2 * contracted * static_cast<double>(Elements(instruction->shape()));
      continue;
    }
    double per_element = OpFlops(instruction->opcode());
    double elements = static_cast<double>(Elements(instruction->shape()));
    if (per_element == kTranscendentalFlops) {
      flops.transcendental += per_element * elements;
    } else if (per_element > 1) {
      flops.divide_sqrt += per_element * elements;
    } else {
      flops.elementwise += per_element * elements;
    }
  }
  return flops;
}

double KernelFlops(const KernelIR& kernel) { return KernelFlopsByClass(kernel).total(); }

int64_t DistinctSectors(std::span<const int64_t> addresses, int64_t width, int64_t sector_bytes) {
  std::set<int64_t> sectors;
  for (int64_t address : addresses) {
    for (int64_t s = address / sector_bytes; s <= (address + width - 1) / sector_bytes; ++s) {
      sectors.insert(s);
    }
  }
  return static_cast<int64_t>(sectors.size());
}

double CoalescingFactor(std::span<const int64_t> addresses, int64_t width) {
  if (addresses.empty()) return 1;
  std::set<int64_t> distinct(addresses.begin(), addresses.end());
  int64_t useful = static_cast<int64_t>(distinct.size()) * width;
  int64_t ideal = (useful + 31) / 32;
  return std::max(
      1.0, static_cast<double>(DistinctSectors(addresses, width)) / static_cast<double>(ideal));
}

int64_t BankConflictDegree(std::span<const int64_t> byte_addresses) {
  std::map<int64_t, std::set<int64_t>> words_by_bank;
  for (int64_t address : byte_addresses) words_by_bank[(address / 4) % 32].insert(address / 4);
  int64_t degree = 1;
  for (const auto& [bank, words] : words_by_bank) {
    degree = std::max(degree, static_cast<int64_t>(words.size()));
  }
  return degree;
}

std::vector<int64_t> LaneDims(const emitters::LaunchGrid& launch, int64_t warp, int64_t lane) {
  int64_t t = warp * 32 + lane;
  int64_t x = launch.threads[0], y = launch.threads[1];
  return {t % x, (t / x) % y, t / (x * y), 0, 0, 0};
}

Coalescing KernelCoalescing(const KernelIR& kernel) {
  WarpAccessCollector collector(kernel);
  std::map<int64_t, double> factor_of;
  Coalescing result;
  for (const emitters::Phase& phase : kernel.phases) {
    if (phase.loops.empty()) continue;
    for (const auto& [buffer, addresses] : collector.Collect(phase.loops.front())) {
      ++result.accesses;
      if (!factor_of.contains(buffer)) {
        factor_of[buffer] = CoalescingFactor(addresses, collector.ElementBytes(buffer));
      }
    }
  }
  double read_bytes = 0, read_weighted = 0, write_bytes = 0, write_weighted = 0;
  for (size_t b = 0; b < kernel.buffers.size(); ++b) {
    double bytes = static_cast<double>(BufferBytes(kernel.buffers[b]));
    auto it = factor_of.find(static_cast<int64_t>(b));
    double factor = it == factor_of.end() ? 1.0 : it->second;
    (kernel.buffers[b].is_output ? write_bytes : read_bytes) += bytes;
    (kernel.buffers[b].is_output ? write_weighted : read_weighted) += bytes * factor;
  }
  if (read_bytes > 0) result.read_factor = read_weighted / read_bytes;
  if (write_bytes > 0) result.write_factor = write_weighted / write_bytes;
  return result;
}

SharedTraffic KernelSharedTraffic(const KernelIR& kernel) {
  SharedTraffic traffic;
  double blocks = static_cast<double>(kernel.launch.block_count());
  double threads = static_cast<double>(kernel.launch.threads_per_block());
  for (const emitters::Phase& phase : kernel.phases) {
    for (const LoopStmt& loop : phase.loops) {
      double points = SymbolPoints(loop.map);
      std::vector<int64_t> symbols = VectorPoints(loop.map).front();
      for (const emitters::BodyStmt& stmt : loop.body) {
        int64_t alloc = -1;
        std::span<const analysis::AffineExpr> indices;
        if (const auto* load = std::get_if<emitters::SharedLoadStmt>(&stmt)) {
          alloc = load->alloc;
          indices = load->indices;
        } else if (const auto* store = std::get_if<emitters::SharedStoreStmt>(&stmt)) {
          alloc = store->alloc;
          indices = store->indices;
        }
        if (alloc < 0) continue;
        const emitters::SharedAlloc& shared = kernel.shared[alloc];
        int64_t element_bytes = std::max(1, (hlo::BitWidth(shared.type) + 7) / 8);
        traffic.bytes += blocks * threads * points * static_cast<double>(element_bytes);
        std::vector<int64_t> addresses;
        for (int64_t lane = 0; lane < kernel.launch.threads_per_block() && lane < 32; ++lane) {
          std::vector<int64_t> dims = LaneDims(kernel.launch, 0, lane);
          if (!loop.map.Contains(dims, symbols)) continue;
          std::vector<int64_t> index = EvaluateAll(indices, loop.map.Evaluate(dims, symbols));
          int64_t linear = 0;
          for (size_t i = 0; i < index.size() && i < shared.dims.size(); ++i) {
            linear = linear * shared.dims[i] + index[i];
          }
          addresses.push_back(linear * element_bytes);
        }
        traffic.conflict_degree = std::max(traffic.conflict_degree, BankConflictDegree(addresses));
      }
    }
  }
  return traffic;
}

int64_t KernelVectorWidth(const KernelIR& kernel) {
  for (const emitters::Phase& phase : kernel.phases) {
    if (!phase.loops.empty()) return VectorExtent(phase.loops.front().map);
  }
  return 1;
}

std::vector<double> PhaseThreads(const KernelIR& kernel) {
  double threads = static_cast<double>(kernel.launch.block_count()) *
                   static_cast<double>(kernel.launch.threads_per_block());
  std::vector<double> running;
  for (const emitters::Phase& phase : kernel.phases) {
    // From a phase with an arrival on, only the last of each `arrivals` blocks runs.
    if (phase.arrival)
      threads /= static_cast<double>(std::max<int64_t>(1, phase.arrival->arrivals));
    running.push_back(threads);
  }
  return running;
}

double KernelThreadSteps(const KernelIR& kernel) {
  std::vector<double> threads = PhaseThreads(kernel);
  double steps = 0;
  for (size_t p = 0; p < kernel.phases.size(); ++p) {
    for (const LoopStmt& loop : kernel.phases[p].loops) {
      steps += threads[p] * SymbolPoints(loop.map) / static_cast<double>(VectorExtent(loop.map));
    }
  }
  return steps;
}

double HostSegmentSteps(const KernelIR& kernel) {
  std::vector<double> threads = PhaseThreads(kernel);
  double steps = 0;
  for (size_t p = 0; p < kernel.phases.size(); ++p) {
    for (const LoopStmt& loop : kernel.phases[p].loops) {
      double shuffles = static_cast<double>(
          std::count_if(loop.body.begin(), loop.body.end(), [](const emitters::BodyStmt& stmt) {
            return std::holds_alternative<emitters::ShuffleStmt>(stmt);
          }));
      if (shuffles == 0) continue;
      // A thread loop per segment at every point, lanes of the vector included.
      steps += threads[p] * SymbolPoints(loop.map) * (shuffles + 1);
    }
  }
  return steps;
}

int64_t ComputeElementBytes(const KernelIR& kernel) {
  for (const KernelBuffer& buffer : kernel.buffers) {
    if (!buffer.is_output || !buffer.shape.IsArray()) continue;
    hlo::PrimitiveType type = buffer.shape.element_type();
    int64_t bytes = std::max(1, (hlo::BitWidth(type) + 7) / 8);
    return hlo::IsFloatingPoint(type) ? std::max<int64_t>(4, bytes) : bytes;
  }
  return 4;
}

bool ThreadsVectorize(const KernelIR& kernel) {
  for (const emitters::Phase& phase : kernel.phases) {
    for (const LoopStmt& loop : phase.loops) {
      if (SymbolPoints(loop.map) != 1) return false;
      for (const emitters::BodyStmt& stmt : loop.body) {
        if (!std::holds_alternative<emitters::CallStmt>(stmt) &&
            !std::holds_alternative<emitters::StoreStmt>(stmt)) {
          return false;
        }
      }
    }
  }
  return !kernel.phases.empty();
}

}  // namespace tilesmith::costmodel

namespace tilesmith::costmodel {

namespace {

// Lines (64 bytes) and pages (4 KiB) of (buffer, byte address) pairs.
struct DistinctUnits {
  std::set<std::pair<int64_t, int64_t>> lines, pages;
  void Add(const std::map<int64_t, std::vector<int64_t>>& addresses) {
    for (const auto& [buffer, bytes] : addresses) {
      for (int64_t address : bytes) {
        lines.insert({buffer, address / kHostLineBytes});
        pages.insert({buffer, address / kHostPageBytes});
      }
    }
  }
};

// The points of the first reduce statement reading global memory, or 1 when it has none:
// a thread's walk reads them all at each point of its loop.
double ReducePointsOf(const LoopStmt& loop) {
  for (const emitters::BodyStmt& stmt : loop.body) {
    const auto* reduce = std::get_if<emitters::ReduceStmt>(&stmt);
    if (reduce != nullptr && reduce->from_shared.empty()) return SymbolPoints(reduce->elements);
  }
  return 1;
}

}  // namespace

std::vector<ThreadSweep> KernelThreadSweeps(const KernelIR& kernel) {
  WarpAccessCollector collector(kernel);
  const emitters::LaunchGrid& launch = kernel.launch;
  std::vector<double> phase_threads = PhaseThreads(kernel);
  int64_t neighbours = std::min<int64_t>(launch.threads_per_block(), kHostNeighbourThreads);
  std::vector<ThreadSweep> sweeps;
  for (size_t p = 0; p < kernel.phases.size(); ++p) {
    const emitters::Phase& phase = kernel.phases[p];
    double threads = phase_threads[p];
    ThreadSweep sweep;
    sweep.threads = threads;
    // Lines of the phase's walk per set of L1 and per page offset of L2 (buffers start
    // page-aligned, so equal offsets in different buffers compete), weighted by the loop's
    // extrapolation.
    std::map<int64_t, double> l1_sets, l2_offsets;
    for (const LoopStmt& loop : phase.loops) {
      double loop_points = SymbolPoints(loop.map);
      double reduce_points = ReducePointsOf(loop);
      std::vector<std::vector<int64_t>> points = AllPoints(
          loop.map, std::max<int64_t>(1, kMaxSweepPoints / static_cast<int64_t>(reduce_points)));
      if (points.empty()) continue;
      int64_t reduce_cap =
          std::max<int64_t>(1, kMaxSweepPoints / static_cast<int64_t>(points.size()));
      // Thread 0's walk, extrapolated from the accesses evaluated.
      std::map<int64_t, std::vector<int64_t>> walk;
      collector.AddThread(loop, LaneDims(launch, 0, 0), points, &walk, true, reduce_cap);
      DistinctUnits own;
      own.Add(walk);
      double scale = loop_points / static_cast<double>(points.size()) * reduce_points /
                     std::min(reduce_points, static_cast<double>(reduce_cap));
      double lines = static_cast<double>(own.lines.size()) * scale;
      for (const auto& [buffer, line] : own.lines) {
        l1_sets[line % kHostL1Sets] += scale;
        l2_offsets[line % (kHostPageBytes / kHostLineBytes)] += scale;
      }
      // How many neighbouring threads touch each line: their first points side by side.
      DistinctUnits together;
      double touches = 0;
      for (int64_t t = 0; t < neighbours; ++t) {
        std::map<int64_t, std::vector<int64_t>> first;
        collector.AddThread(loop, LaneDims(launch, t / 32, t % 32), std::span(&points.front(), 1),
                            &first, true, 16);
        DistinctUnits mine;
        mine.Add(first);
        touches += static_cast<double>(mine.lines.size());
        together.Add(first);
      }
      double shared_by =
          together.lines.empty() ? 1 : touches / static_cast<double>(together.lines.size());
      sweep.lines += lines;
      sweep.pages += static_cast<double>(own.pages.size()) * scale;
      sweep.line_touches += threads * lines;
      sweep.neighbour_touches += threads * lines * (1 - 1 / std::max(1.0, shared_by));
    }
    auto kept = [&](const std::map<int64_t, double>& sets, double lines_per_set) {
      double held = 0;
      for (const auto& [set, count] : sets) held += std::min(count, lines_per_set);
      return sweep.lines > 0 ? held / sweep.lines : 1.0;
    };
    sweep.l1_kept = kept(l1_sets, kHostCacheWays);
    // L2 is indexed by physical address: the lines of one page offset spread over the
    // L2 sets whose low bits they fix, as the pages' frames fall.
    sweep.l2_kept = kept(l2_offsets, static_cast<double>(kHostCacheWays * kHostL2Sets /
                                                         (kHostPageBytes / kHostLineBytes)));
    sweeps.push_back(sweep);
  }
  return sweeps;
}

}  // namespace tilesmith::costmodel
