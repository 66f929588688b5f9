#include "costmodel/kernel_facts.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "compiler/hlo/tiling.h"

namespace tilesmith::costmodel {

namespace {

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

bool SameDims(const hlo::Shape& shape, std::span<const int64_t> dims) {
  return shape.IsArray() &&
         std::equal(shape.dims().begin(), shape.dims().end(), dims.begin(), dims.end());
}

// One buffer's bytes as addressed: the physical layout, or nothing for odd shapes.
struct Addressing {
  std::optional<hlo::PhysicalLayout> layout;
  int64_t element_bits = 8;
};

std::optional<int64_t> ByteAddress(const Addressing& addressing, const hlo::Shape& shape,
                                   std::span<const int64_t> index) {
  if (!addressing.layout || static_cast<int64_t>(index.size()) != shape.rank()) return std::nullopt;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (index[i] < 0 || index[i] >= shape.dim(i)) return std::nullopt;
  }
  return addressing.layout->LinearIndex(index) * addressing.element_bits / 8;
}

std::vector<int64_t> EvaluateAll(std::span<const analysis::AffineExpr> exprs,
                                 std::span<const int64_t> dims) {
  std::vector<int64_t> values;
  for (const analysis::AffineExpr& expr : exprs) values.push_back(expr.Evaluate(dims, {}));
  return values;
}

bool PredicatesHold(std::span<const emitters::Predicate> predicates,
                    std::span<const int64_t> dims) {
  return std::all_of(predicates.begin(), predicates.end(), [&](const emitters::Predicate& p) {
    return p.range.Contains(p.expr.Evaluate(dims, {}));
  });
}

// The symbol points a warp instruction covers: every symbol at its first value, the last
// one (a thread's vector lanes when its range is small) over its whole range.
std::vector<std::vector<int64_t>> VectorPoints(const analysis::IndexingMap& map) {
  std::vector<int64_t> first;
  for (const analysis::SymbolVar& symbol : map.symbols()) first.push_back(symbol.range.lower);
  std::vector<std::vector<int64_t>> points = {first};
  if (first.empty()) return points;
  const analysis::Interval& last = map.symbols().back().range;
  if (map.symbols().back().kind != analysis::SymbolKind::kRange || last.upper - last.lower >= 16) {
    return points;
  }
  points.clear();
  for (int64_t v = last.lower; v <= last.upper; ++v) {
    first.back() = v;
    points.push_back(first);
  }
  return points;
}

int64_t VectorExtent(const analysis::IndexingMap& map) {
  return static_cast<int64_t>(VectorPoints(map).size());
}

double SymbolPoints(const analysis::IndexingMap& map) {
  double points = 1;
  for (const analysis::SymbolVar& symbol : map.symbols()) {
    if (symbol.kind == analysis::SymbolKind::kRange && !symbol.range.IsEmpty()) {
      points *= static_cast<double>(symbol.range.upper - symbol.range.lower + 1);
    }
  }
  return points;
}

// The byte addresses of every global access of `loop`, per buffer, for the lanes of warp 0.
class WarpAccessCollector {
 public:
  explicit WarpAccessCollector(const KernelIR& kernel) : kernel_(kernel) {
    for (const KernelBuffer& buffer : kernel.buffers) {
      Addressing addressing;
      if (buffer.shape.IsArray()) {
        if (auto layout = hlo::PhysicalLayout::Create(buffer.shape)) {
          addressing.element_bits = layout->element_bits();
          addressing.layout = std::move(*layout);
        }
      }
      addressing_.push_back(std::move(addressing));
    }
  }

  std::map<int64_t, std::vector<int64_t>> Collect(const LoopStmt& loop) const {
    std::map<int64_t, std::vector<int64_t>> addresses;
    for (int64_t lane = 0; lane < kernel_.launch.threads_per_block() && lane < 32; ++lane) {
      std::vector<int64_t> dims = LaneDims(kernel_.launch, 0, lane);
      for (const std::vector<int64_t>& symbols : VectorPoints(loop.map)) {
        if (!loop.map.Contains(dims, symbols)) continue;
        std::vector<int64_t> results = loop.map.Evaluate(dims, symbols);
        for (const emitters::BodyStmt& stmt : loop.body) AddStmt(stmt, results, &addresses);
      }
    }
    return addresses;
  }

  int64_t ElementBytes(int64_t buffer) const {
    return std::max<int64_t>(1, addressing_[buffer].element_bits / 8);
  }

 private:
  void Add(int64_t buffer, std::span<const int64_t> index,
           std::map<int64_t, std::vector<int64_t>>* addresses) const {
    if (auto address = ByteAddress(addressing_[buffer], kernel_.buffers[buffer].shape, index)) {
      (*addresses)[buffer].push_back(*address);
    }
  }

  // The input buffers read at `index` itself: parameters reached from `roots` through
  // elementwise ops of the same dims only (a transpose or broadcast on the way reads
  // elsewhere, and is left out).
  void AddInputs(std::span<const hlo::HloInstruction* const> roots, std::span<const int64_t> dims,
                 std::span<const int64_t> index,
                 std::map<int64_t, std::vector<int64_t>>* addresses) const {
    std::vector<const hlo::HloInstruction*> stack(roots.begin(), roots.end());
    std::set<const hlo::HloInstruction*> seen;
    while (!stack.empty()) {
      const hlo::HloInstruction* instruction = stack.back();
      stack.pop_back();
      if (!seen.insert(instruction).second || !SameDims(instruction->shape(), dims)) continue;
      if (instruction->opcode() == HloOpcode::kParameter) {
        for (size_t b = 0; b < kernel_.buffers.size(); ++b) {
          const KernelBuffer& buffer = kernel_.buffers[b];
          if (!buffer.is_output && buffer.leaf < 0 &&
              buffer.index == instruction->parameter_number()) {
            Add(static_cast<int64_t>(b), index, addresses);
          }
        }
      } else if (hlo::IsElementwise(instruction->opcode())) {
        for (const hlo::HloInstruction* operand : instruction->operands()) stack.push_back(operand);
      }
    }
  }

  void AddStmt(const emitters::BodyStmt& stmt, std::span<const int64_t> results,
               std::map<int64_t, std::vector<int64_t>>* addresses) const {
    if (const auto* store = std::get_if<emitters::StoreStmt>(&stmt)) {
      if (PredicatesHold(store->predicates, results)) {
        Add(store->buffer, EvaluateAll(store->indices, results), addresses);
      }
    } else if (const auto* call = std::get_if<emitters::CallStmt>(&stmt)) {
      const emitters::KernelFunction& function = kernel_.functions[call->function];
      if (function.roots.empty() || !function.roots[0]->shape().IsArray()) return;
      AddInputs(function.roots, function.roots[0]->shape().dims(),
                EvaluateAll(call->indices, results), addresses);
    } else if (const auto* reduce = std::get_if<emitters::ReduceStmt>(&stmt)) {
      if (!reduce->from_shared.empty() || reduce->hero == nullptr) return;
      const hlo::Shape& operand = reduce->hero->operand(0)->shape();
      std::vector<const hlo::HloInstruction*> all;
      for (const auto& instruction : kernel_.fusion->instructions())
        all.push_back(instruction.get());
      for (const std::vector<int64_t>& point : VectorPoints(reduce->elements)) {
        if (!reduce->elements.Contains(results, point)) continue;
        AddInputs(all, operand.dims(), reduce->elements.Evaluate(results, point), addresses);
      }
    }
  }

  const KernelIR& kernel_;
  std::vector<Addressing> addressing_;
};

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

double KernelThreadSteps(const KernelIR& kernel) {
  double threads = static_cast<double>(kernel.launch.block_count()) *
                   static_cast<double>(kernel.launch.threads_per_block());
  double steps = 0;
  for (const emitters::Phase& phase : kernel.phases) {
    for (const LoopStmt& loop : phase.loops) {
      steps += threads * SymbolPoints(loop.map) / static_cast<double>(VectorExtent(loop.map));
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
