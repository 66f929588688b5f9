// The loop emitter: every thread computes a few output elements (a vector of them, a few
// times) in an order that keeps consecutive threads on consecutive memory. The default
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

/// How the loop emitter maps threads to elements. Thread t of block b handles, for each
/// chunk c and lane v, the element at linear position
/// `((b * threads + t) * vector) + c * vector * total_threads + v` in the output's
/// physical order.
struct LoopConfig {
  int64_t threads_per_block = 128;
  int64_t vector = 1;    // consecutive elements per thread step (unroll / vector width)
  int64_t chunks = 1;    // steps per thread: elements per thread = vector * chunks
  int64_t blocks_y = 1;  // the grid's y extent, when x alone cannot cover the blocks

  nlohmann::json ToJson() const;
  /// Reads `{"threads_per_block": 128, "vector": 4, "chunks": 1, "blocks_y": 1}`; missing
  /// fields keep `base`'s values (callers pass the fusion's default), unknown fields are
  /// errors.
  static Expected<LoopConfig> FromJson(const nlohmann::json& json, const LoopConfig& base);
  static Expected<LoopConfig> FromJson(const nlohmann::json& json);
  friend bool operator==(const LoopConfig&, const LoopConfig&) = default;
};

/// XLA's choice: 128 threads; vector 4 or 2 (the largest dividing the element count) when
/// there are at least threads-per-SM x SMs elements and no op prevents vectorisation; at
/// least ceil(8 / smallest output bits) so packed outputs fill whole bytes; a y grid
/// extent when x would exceed its limit.
LoopConfig DefaultLoopConfig(const analysis::FusionAnalysis& analysis, const DeviceInfo& device);

/// XLA's loop rule for a loop over `elements` (the largest operand of a concatenate, the
/// update of a dynamic-update-slice): as DefaultLoopConfig, the vector width further
/// limited to a divisor of `vector_divides` when that is positive.
LoopConfig DefaultLoopConfigFor(const analysis::FusionAnalysis& analysis, const DeviceInfo& device,
                                int64_t elements, int64_t vector_divides);

/// The reason `config` cannot be used on `device` (threads over the limit or not a multiple
/// of the warp, vector not 1/2/4/8 — or 16 where every element is at most a byte —, grid
/// too large, …), or OK.
Status ValidateLoopConfig(const LoopConfig& config, const analysis::FusionAnalysis& analysis,
                          const DeviceInfo& device);

/// As ValidateLoopConfig, for a loop over `elements` instead of the largest output.
Status ValidateLoopConfigFor(const LoopConfig& config, const analysis::FusionAnalysis& analysis,
                             const DeviceInfo& device, int64_t elements);

/// The kernel for `config`: one loop per group of fusion outputs with the same dims, each
/// calling the partitioned function of its roots and storing the values.
Expected<KernelIR> EmitLoopKernel(const analysis::FusionAnalysis& analysis,
                                  const LoopConfig& config, const DeviceInfo& device);

/// What differs between emitters configured by a LoopConfig (loop, concatenate, input
/// slices, in-place dynamic-update-slice): name, default, validation and emission.
struct LoopConfigHooks {
  std::string_view name;
  LoopConfig (*default_config)(const analysis::FusionAnalysis&, const DeviceInfo&);
  Status (*validate)(const LoopConfig&, const analysis::FusionAnalysis&, const DeviceInfo&);
  Expected<KernelIR> (*emit)(const analysis::FusionAnalysis&, const LoopConfig&, const DeviceInfo&);
};

/// Such an emitter behind the `Emitter` interface: partial configs overlay `default_config`;
/// its space is threads 32…1024 (powers of two) x vector 1/2/4/8 (and 16 where every element
/// is at most a byte) x chunks 1/2/4 over the default's blocks_y, each entry pruned by
/// `validate` with its reason.
std::unique_ptr<Emitter> MakeLoopConfigEmitter(LoopConfigHooks hooks);

/// The loop emitter behind the `Emitter` interface. Its space: threads 32…1024 (powers of
/// two), vector 1/2/4/8 (16 for 1-byte elements), chunks 1/2/4, over the default's
/// blocks_y; then the launch shapes whose bytes in flight cover the memory latency
/// (LatencyCoveringLoopConfigs, loop_launch.h) that are not among them.
std::unique_ptr<Emitter> MakeLoopEmitter();

}  // namespace tilesmith::emitters
