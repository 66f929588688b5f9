// Random but valid HLO fusions, deterministic from a seed: fusions nobody tuned the cost
// models to, for judging them (bench/model_bench --generated) and for `tilesmith generate`.
// Fusion `index` of `seed` is the same text on every machine: the generator draws from its
// own splitmix64 stream with integer arithmetic only, never from <random>'s distributions,
// whose results are implementation-defined.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "compiler/hlo/primitive_type.h"
#include "support/status.h"

namespace tilesmith::hlo {

/// What a generated fusion may be.
struct FusionGeneratorOptions {
  /// Bytes of every parameter and output together; each fusion's size is drawn
  /// log-uniformly between these and its shapes shrunk or grown until it fits.
  int64_t min_bytes = 1024;
  int64_t max_bytes = int64_t{64} << 20;
  /// Most instructions besides parameters, constants and the output tuple (at least 1).
  int max_ops = 12;
};

/// The smallest `max_bytes` every pattern fits in.
inline constexpr int64_t kMinGeneratedBytes = int64_t{16} << 10;

/// A byte count as a user writes one: `65536`, `64K`, `8M`, `1G` (powers of 1024).
Expected<int64_t> ParseByteCount(std::string_view text);

/// Checks the options: a user's cap below kMinGeneratedBytes or an empty range is refused.
Status ValidateGeneratorOptions(const FusionGeneratorOptions& options);

/// One generated fusion.
struct GeneratedFusion {
  std::string name;     ///< `gen_<seed>_<index>`, also the module's name.
  std::string text;     ///< A module: reducers, the fused computation, an ENTRY calling it.
  std::string pattern;  ///< What it was built as (one of FusionPatterns()).
  PrimitiveType type = PrimitiveType::kF32;  ///< The element type its inputs start from.
  int64_t bytes = 0;                         ///< Parameters and outputs, once each.
  int ops = 0;                               ///< Instructions counted against max_ops.
};

/// The shapes of fusion the generator builds: `loop`, `broadcast`, `slice`,
/// `input_slices`, `concatenate`, `transpose`, `row_reduction`, `column_reduction`,
/// `reduce_window`, `dynamic_update_slice` and `scatter`, one for each of the emitters and
/// of the hero kinds the analysis tells apart.
std::span<const std::string_view> FusionPatterns();

/// The element types inputs are drawn from: f32, bf16, f16, s32, s8.
std::span<const PrimitiveType> GeneratedTypes();

/// Fusion `index` of `seed`; `options` must pass ValidateGeneratorOptions.
GeneratedFusion GenerateFusion(uint64_t seed, int64_t index,
                               const FusionGeneratorOptions& options = {});

}  // namespace tilesmith::hlo
