// Internal to costmodel/: the Kernel IR walking that kernel_facts.cc's facts share —
// byte addresses of a buffer's elements, the symbol points a warp or a thread covers, and
// the collector of every global access a loop makes for given thread ids.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "compiler/emitters/element_loop.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/hlo/tiling.h"
#include "costmodel/kernel_facts.h"

namespace tilesmith::costmodel::facts_internal {

using emitters::KernelBuffer;
using emitters::KernelIR;
using emitters::LoopStmt;
using hlo::HloOpcode;

/// True when `shape` is an array of exactly `dims`.
bool SameDims(const hlo::Shape& shape, std::span<const int64_t> dims);

/// One buffer's bytes as addressed: the physical layout, or nothing for odd shapes.
struct Addressing {
  std::optional<hlo::PhysicalLayout> layout;
  int64_t element_bits = 8;
};

/// The byte offset of `index` in a buffer of `shape`, or nothing outside it.
std::optional<int64_t> ByteAddress(const Addressing& addressing, const hlo::Shape& shape,
                                   std::span<const int64_t> index);

/// Each expr at `dims`.
std::vector<int64_t> EvaluateAll(std::span<const analysis::AffineExpr> exprs,
                                 std::span<const int64_t> dims);

/// True when every predicate holds at `dims`.
bool PredicatesHold(std::span<const emitters::Predicate> predicates, std::span<const int64_t> dims);

/// The symbol points a warp instruction covers: every symbol at its first value, the last
/// one (a thread's vector lanes when its range is small) over its whole range.
std::vector<std::vector<int64_t>> VectorPoints(const analysis::IndexingMap& map);

/// How many points VectorPoints gives, at least 1 (an empty map divides as one lane).
int64_t VectorExtent(const analysis::IndexingMap& map);

/// The points of the map's range symbols (all of them); 0 for an empty map.
double SymbolPoints(const analysis::IndexingMap& map);

/// Accesses evaluated when following one thread's walk through a loop (its points times a
/// reduce statement's points); longer walks are extrapolated from their first accesses.
inline constexpr int64_t kMaxSweepPoints = 4096;

/// The first `cap` points of `map`'s range symbols in the order the host runs them (the first
/// symbol outermost); runtime symbols stay at their lower bound.
std::vector<std::vector<int64_t>> AllPoints(const analysis::IndexingMap& map, int64_t cap);

/// The byte addresses of every global access of `loop`, per buffer, for the lanes of warp 0.
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
      AddThread(loop, LaneDims(kernel_.launch, 0, lane), VectorPoints(loop.map), &addresses);
    }
    return addresses;
  }

  /// The addresses one thread (launch ids `dims`) touches at `points` of the loop's symbols,
  /// in that order. With `sweep` (a host thread's whole run), a reduce statement reads the
  /// first `reduce_points` points of its elements (else only its vector lanes) and atomics
  /// count as accesses.
  void AddThread(const LoopStmt& loop, std::span<const int64_t> dims,
                 std::span<const std::vector<int64_t>> points,
                 std::map<int64_t, std::vector<int64_t>>* addresses, bool sweep = false,
                 int64_t reduce_points = 1) const {
    for (const std::vector<int64_t>& symbols : points) {
      if (!loop.map.Contains(dims, symbols)) continue;
      std::vector<int64_t> results = loop.map.Evaluate(dims, symbols);
      for (const emitters::BodyStmt& stmt : loop.body) {
        AddStmt(stmt, results, addresses, sweep ? reduce_points : 0);
      }
    }
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
          if (buffer.is_parameter() && buffer.leaf < 0 &&
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
               std::map<int64_t, std::vector<int64_t>>* addresses, int64_t reduce_points) const {
    bool sweep = reduce_points > 0;
    if (const auto* store = std::get_if<emitters::StoreStmt>(&stmt)) {
      if (PredicatesHold(store->predicates, results)) {
        Add(store->buffer, EvaluateAll(store->indices, results), addresses);
      }
    } else if (const auto* atomic = std::get_if<emitters::AtomicStmt>(&stmt); atomic && sweep) {
      if (PredicatesHold(atomic->predicates, results)) {
        Add(atomic->buffer, EvaluateAll(atomic->indices, results), addresses);
      }
    } else if (const auto* call = std::get_if<emitters::CallStmt>(&stmt)) {
      const emitters::KernelFunction& function = kernel_.functions[call->function];
      if (function.roots.empty() || !function.roots[0]->shape().IsArray()) return;
      AddInputs(function.roots, function.roots[0]->shape().dims(),
                EvaluateAll(call->indices, results), addresses);
    } else if (const auto* reduce = std::get_if<emitters::ReduceStmt>(&stmt)) {
      if (!reduce->from_shared.empty() || reduce->hero == nullptr) return;
      std::vector<std::vector<int64_t>> points =
          sweep ? AllPoints(reduce->elements, reduce_points) : VectorPoints(reduce->elements);
      if (!reduce->from_buffers.empty()) {
        // A split's last level reads the partials other blocks stored, not the operands.
        for (const std::vector<int64_t>& point : points) {
          if (!reduce->elements.Contains(results, point)) continue;
          std::vector<int64_t> index = reduce->elements.Evaluate(results, point);
          for (int64_t buffer : reduce->from_buffers) Add(buffer, index, addresses);
        }
        return;
      }
      const hlo::Shape& operand = reduce->hero->operand(0)->shape();
      std::vector<const hlo::HloInstruction*> all;
      for (const auto& instruction : kernel_.fusion->instructions())
        all.push_back(instruction.get());
      const OperandStreams* streams = sweep ? &StreamsOf(reduce->hero) : nullptr;
      for (const std::vector<int64_t>& point : points) {
        if (!reduce->elements.Contains(results, point)) continue;
        std::vector<int64_t> index = reduce->elements.Evaluate(results, point);
        if (streams == nullptr || streams->buffers.empty()) {
          AddInputs(all, operand.dims(), index, addresses);
          continue;
        }
        if (auto address = ByteAddress(streams->addressing, operand, index)) {
          for (int64_t buffer : streams->buffers) (*addresses)[buffer].push_back(*address);
        }
      }
    }
  }

  // A walk's view of a reduce's operand: the input buffers with its element count that it
  // reads (through bitcasts and reshapes, which keep the bytes' order), addressed as the
  // operand itself.
  struct OperandStreams {
    Addressing addressing;
    std::vector<int64_t> buffers;
  };

  const OperandStreams& StreamsOf(const hlo::HloInstruction* hero) const {
    auto [it, added] = streams_.try_emplace(hero);
    if (!added) return it->second;
    const hlo::HloInstruction* operand = hero->operand(0);
    if (auto layout = hlo::PhysicalLayout::Create(operand->shape())) {
      it->second.addressing.element_bits = layout->element_bits();
      it->second.addressing.layout = std::move(*layout);
    }
    int64_t elements = operand->shape().ElementCount();
    for (const hlo::HloInstruction* instruction : emitters::OperandClosure(operand)) {
      if (instruction->opcode() != HloOpcode::kParameter) continue;
      for (size_t b = 0; b < kernel_.buffers.size(); ++b) {
        const KernelBuffer& buffer = kernel_.buffers[b];
        if (buffer.is_parameter() && buffer.leaf < 0 &&
            buffer.index == instruction->parameter_number() && buffer.shape.IsArray() &&
            buffer.shape.ElementCount() == elements) {
          it->second.buffers.push_back(static_cast<int64_t>(b));
        }
      }
    }
    return it->second;
  }

  const KernelIR& kernel_;
  std::vector<Addressing> addressing_;
  mutable std::map<const hlo::HloInstruction*, OperandStreams> streams_;
};

}  // namespace tilesmith::costmodel::facts_internal
