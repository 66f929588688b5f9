// What kind of fusion an HLO fusion is: its roots, the hero of each root (the op that
// decides how the fusion is emitted), and which of XLA's seven emitters handles it, with
// XLA's order of preference (gpu-emitters spec, "Hero-based code generation").
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "compiler/hlo/hlo_module.h"

namespace tilesmith::analysis {

/// A reduction normalised to `[D, H, W]` over the physical order of its input: a row
/// reduction reduces W (and D) and keeps H; a column reduction reduces H and keeps D and W.
struct ReductionDimensions {
  bool is_row_reduction = true;
  std::array<int64_t, 3> dimensions = {1, 1, 1};
  friend bool operator==(const ReductionDimensions&, const ReductionDimensions&) = default;
};

/// Which of XLA's reduction emitters a reduction fusion gets: multi-row when the reduced
/// minor dim is a power of two that fits one warp's vectors, small column when the kept minor
/// dim divides the warp size.
enum class ReductionVariant { kRow, kMultiRow, kColumn, kSmallColumn };

/// "row", "multi-row", "column", "small column".
std::string_view ReductionVariantName(ReductionVariant variant);

/// `reduce`'s `[D, H, W]` classification (its operand's layout decides what is contiguous).
ReductionDimensions GetReductionDimensions(const hlo::HloInstruction& reduce);

/// True if the reduced or the kept dimensions are consecutive in the input's layout and the
/// reduction emitter beats the elemental loop for these sizes.
bool IsReductionFromOrToContiguousDimensions(const hlo::HloInstruction& reduce);

/// A transpose the shared-memory transpose emitter tiles: its permutation, output dims and
/// whether it keeps the most minor dimension (e.g. `{1,0,2}`).
struct TransposeDescription {
  const hlo::HloInstruction* instruction = nullptr;
  std::vector<int64_t> dimensions;   // output dims
  std::vector<int64_t> permutation;  // the transpose's `dimensions`
  bool keeps_minor_dimension = false;
};

/// The description if `instruction` is a transpose worth tiling through shared memory.
std::optional<TransposeDescription> GetTiledTranspose(const hlo::HloInstruction& instruction);

/// The hero of a fusion root: walking up from the root through elementwise and bitcast-like
/// ops, the transpose, concatenate or reduce that decides the emission; else the root.
const hlo::HloInstruction& FindHero(const hlo::HloInstruction& root);

/// The outputs of a fused computation: the operands of a tuple root, else the root.
std::vector<const hlo::HloInstruction*> FusionRoots(const hlo::HloComputation& fusion);

/// Everything the emitter choice looked at.
struct FusionAnalysis {
  const hlo::HloComputation* fusion = nullptr;
  std::vector<const hlo::HloInstruction*> roots;
  std::vector<const hlo::HloInstruction*> heroes;  // one per root
  // The emitter XLA:GPU would pick, by the name it is registered under (`loop`,
  // `transpose`, … in compiler/emitters/emitter_registry.cc); a string literal, so the
  // analysis needs no list of the emitters that exist.
  std::string_view emitter = "loop";
  /// Why this emitter was chosen (or why a preferred one was not), for humans.
  std::string reason;
  std::optional<TransposeDescription> transpose;  // for kTranspose
  std::optional<ReductionDimensions> reduction;   // for kReduction
  ReductionVariant reduction_variant = ReductionVariant::kRow;
  int smallest_input_bits = 0;
  int smallest_output_bits = 0;
};

/// Analyses `fusion` and picks its emitter in XLA's order: sub-byte types → loop (or input
/// slices); a real reduction hero → reduction; a transpose hero moving the minor dimension →
/// transpose; several compatible slice roots → input slices; a scatter root → scatter; a
/// single concatenate hero with at most 4 operands → concatenate; a dynamic-update-slice
/// that can write in place → dynamic_update_slice; otherwise loop.
FusionAnalysis AnalyzeFusion(const hlo::HloComputation& fusion);

}  // namespace tilesmith::analysis
