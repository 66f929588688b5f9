// The transpose emitter: each block moves one tile of the transposed dims through shared
// memory. Phase 1 reads the tile coalesced along the input's minor dim into a padded shared
// array; after the barrier, phase 2 reads it transposed and writes the output coalesced along
// the output's minor dim. Transposes that keep the minor dim carry it whole. The default
// config is XLA's; every field is a Config field the tuner can vary.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/emitter.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/emitters/target.h"
#include "support/status.h"

namespace tilesmith::emitters {

/// How a transpose is tiled. `tile_in` runs along the swapped dim that is minor in the
/// input (read coalesced), `tile_out` along the one minor in the output (written
/// coalesced). A pass of phase 1 covers `rows_per_pass` tile rows, so `threads` is
/// `tile_in * carried / vector * rows_per_pass` (carried: the kept minor dim, else 1).
struct TransposeConfig {
  int64_t tile_in = 32;
  int64_t tile_out = 32;
  int64_t rows_per_pass = 4;
  int64_t threads = 128;
  int64_t vector = 1;          // consecutive elements per thread step, both phases
  int64_t shared_padding = 1;  // extra elements per shared row against bank conflicts
  // Each thread moves vector x vector sub-tiles, transposing them in registers, so both
  // phases touch the shared tile in packed runs of `vector` elements (one 32-bit word for
  // 16-bit types at vector 2, 8-bit at 4): no strided shared accesses, no sub-word banks.
  bool packed = false;

  nlohmann::json ToJson() const;
  /// Reads `{"tile_in": 32, "tile_out": 32, "rows_per_pass": 4, "threads": 128, "vector":
  /// 1, "shared_padding": 1[, "packed": true]}`; missing fields keep `base`'s values, unknown
  /// ones are errors. `packed` is written only when true, so other configs keep their keys.
  static Expected<TransposeConfig> FromJson(const nlohmann::json& json,
                                            const TransposeConfig& base);
  friend bool operator==(const TransposeConfig&, const TransposeConfig&) = default;
};

/// XLA's choice: 32x32 tiles, 4 rows per pass, 128 threads, +1 padding; vector 4 bytes /
/// widest element when the output has at least threads-per-SM x SMs elements and the tiles
/// divide the swapped dims.
TransposeConfig DefaultTransposeConfig(const analysis::FusionAnalysis& analysis,
                                       const DeviceInfo& device);

/// The reason `config` cannot be used for this fusion on `device`, or OK.
Status ValidateTransposeConfig(const TransposeConfig& config,
                               const analysis::FusionAnalysis& analysis, const DeviceInfo& device);

/// The two-phase kernel for `config`: one shared tile per transpose hero; side outputs are
/// written in phase 1 at the input's elements, transposed roots (and their epilogues) in
/// phase 2.
Expected<KernelIR> EmitTransposeKernel(const analysis::FusionAnalysis& analysis,
                                       const TransposeConfig& config, const DeviceInfo& device);

/// The transpose emitter behind the `Emitter` interface. Its space: tile_in and tile_out
/// 16/32/64, rows per pass 1/2/4/8, vector 1/2/4, padding 0/1 (threads follow).
std::unique_ptr<Emitter> MakeTransposeEmitter();

}  // namespace tilesmith::emitters
