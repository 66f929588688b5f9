// Helpers the reduction emitter's kernel builder and its config code share.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/reduction_emitter.h"

namespace tilesmith::emitters::reduction_internal {

inline constexpr int64_t kWarp = 32;

int64_t PowerOfTwoAtLeast(int64_t n);
bool IsPowerOfTwo(int64_t n);

/// The reduce heroes of the fusion's reduction group (distinct, in root order).
std::vector<const hlo::HloInstruction*> ReductionHeroes(const analysis::FusionAnalysis& analysis);

/// Reducer outputs of a (possibly variadic) reduce.
int64_t Outputs(const hlo::HloInstruction* hero);

/// True when the hero's init is a constant its reducer leaves unchanged (0 for add, -inf for
/// max, …): XLA folds such an init into every partial; any other init must be folded once.
bool HasIdentityInit(const hlo::HloInstruction* hero);

/// Whether partials carry a presence flag: some hero's init must be folded in exactly once.
bool NeedsPresence(const analysis::FusionAnalysis& analysis);

/// Shared memory: one partials array per reducer output (and presence) of every hero. Row:
/// [rows][warps] (none when a warp covers a row); column: [threads_y][columns + 1].
std::vector<int64_t> PartialsDims(const analysis::FusionAnalysis& analysis,
                                  const ReductionConfig& config);
int64_t SharedBytes(const analysis::FusionAnalysis& analysis, const ReductionConfig& config);

/// The atomic read-modify-write of `hero`'s reducer (add, max or min), for split reductions.
AtomicOp SplitAtomicOp(const hlo::HloInstruction* hero);

/// Why the fusion's reductions cannot be split across blocks with atomics, or "".
std::string SplitBlocker(const analysis::FusionAnalysis& analysis);

/// Blocks of the launch: rows of H per block (row), or D x column tiles (column), times the
/// split.
int64_t BlockCount(const analysis::FusionAnalysis& analysis, const ReductionConfig& config);

/// The logical index of an element of `shape` from its `[D, H, W]` coordinates: the three
/// are consecutive runs of `shape`'s non-trivial dims in physical (major to minor) order,
/// each run row-major within itself. Tiled layouts are Unimplemented.
Expected<std::vector<analysis::AffineExpr>> InputIndex(
    const hlo::Shape& shape, const std::array<int64_t, 3>& sizes,
    const std::array<analysis::AffineExpr, 3>& coordinates);

/// The hero's output index for the kept coordinates: its kept input dims in logical order.
Expected<std::vector<analysis::AffineExpr>> OutputIndex(
    const hlo::HloInstruction* hero, const std::array<int64_t, 3>& sizes,
    const std::array<analysis::AffineExpr, 3>& coordinates);

}  // namespace tilesmith::emitters::reduction_internal
