// The cost-model front door: a model predicts a kernel's time on a device before anything
// is measured, and says how it got there. The analytic GPU and host models implement it
// (gpu_model.h, host_model.h); a learned model plugs in behind the same interface.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "compiler/emitters/kernel_ir.h"
#include "compiler/emitters/target.h"
#include "support/status.h"

namespace tilesmith::costmodel {

/// What the compiled code of one kernel uses and does, where it was compiled; absent
/// (zero), a model estimates it and says so.
/// CUDA: the cubin's figures, per thread unless said otherwise.
/// Host: what the optimised LLVM IR executes per block (codegen/code_counts.h): each
/// instruction weighted by the trip counts of its loops and the probability of its
/// branches (bounds checks weighted by the share of runs in which they hold). This is the index
/// arithmetic the compiler could not fold and the loops it vectorised, which an element count
/// cannot see.
struct ResourceUsage {
  int64_t registers = 0;
  int64_t shared_bytes = 0;          ///< Static shared memory per block.
  int64_t spill_bytes = 0;           ///< Spill stores + loads per thread.
  double executed_instructions = 0;  ///< Host, per block: IR instructions (phis aside).
  double executed_divisions = 0;     ///< Of them: divisions and remainders.
  double executed_memory = 0;        ///< Of them: loads and stores.
  double executed_vector = 0;        ///< Of them: those producing vectors.
  double executed_branches = 0;      ///< Of them: conditional branches and switches.
  /// Of the divisions: integer ones by a constant, which the target turns into a
  /// multiply-high and shifts (compile stats recorded before it was counted lack it: 0,
  /// every division priced as a division by a variable).
  double executed_constant_divisions = 0;
  /// Of the divisions: floating-point ones (compile stats recorded before they were
  /// counted lack it: 0, every division that is not by a constant priced as an integer
  /// division by a variable).
  double executed_float_divisions = 0;
  /// The lanes of gathers and scatters: element-by-element loads and stores that one
  /// vectorised instruction stands for.
  double executed_gather_lanes = 0;
  /// The lanes of f16 and bf16 arithmetic, compares and conversions, each converted to f32
  /// and back by the target.
  double executed_half_lanes = 0;
  /// The machine instructions the target's code generator made of it, each weighted by
  /// its IR block's runs: a promoted f16 lane's conversions, spills and shuffles, which the
  /// IR counts as one instruction or none (0 in stats recorded before they were counted).
  double executed_machine_instructions = 0;
  /// Of the machine instructions: those moving single lanes between vector, mask and
  /// general registers (0 where not counted).
  double executed_lane_moves = 0;
  bool has_cubin() const { return registers > 0; }
  bool has_host_code() const { return executed_instructions > 0; }
  bool known() const { return has_cubin() || has_host_code(); }
};

/// The resources of a compile's statistics (`registers`, `shared_bytes`, `spill_bytes`,
/// `executed_instructions`, … as the builder and the database record them); absent or
/// non-numeric fields count 0.
ResourceUsage ResourceUsageFromStats(const nlohmann::json& stats);

/// Adds `usage`'s known figures to compile statistics (ResourceUsageFromStats' inverse).
void AddResourceUsageToStats(const ResourceUsage& usage, nlohmann::json& stats);

/// A device as the models see it: the emitters' limits and clocks, plus the cache size
/// (GPU L2 or the host's last-level cache) from its description file.
struct DeviceFigures {
  emitters::DeviceInfo info;
  int64_t cache_bytes = 0;
};

/// A predicted time and its explanation (terms in microseconds, the figures they came from).
struct Prediction {
  double microseconds = 0;
  nlohmann::json breakdown = nlohmann::json::object();
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  /// `analytic-gpu`, `analytic-host`, …: what `predict` reports as the model that answered.
  virtual std::string_view name() const = 0;
  /// The predicted time of `kernel` on `device`; `usage` null when no cubin was made.
  virtual Expected<Prediction> Predict(const emitters::KernelIR& kernel,
                                       const DeviceFigures& device,
                                       const ResourceUsage* usage) const = 0;
};

struct HostCalibration;

/// The analytic model of a target: `analytic-gpu` for `cuda:*`, `analytic-host` (calibrated
/// on this machine once per process, with `cache_bytes` sizing the copies) for `host`.
std::unique_ptr<CostModel> AnalyticModelFor(const emitters::Target& target, int64_t cache_bytes);
/// The same with the host's figures given (a calibration stored in the results database:
/// model_selection.h's HostCalibrationFor); `host` is unused for GPU targets.
std::unique_ptr<CostModel> AnalyticModelFor(const emitters::Target& target,
                                            const HostCalibration& host);
/// The same with the host's figures asked of `host` only when the target is the host (a
/// calibration may be measured, or read from a database).
std::unique_ptr<CostModel> AnalyticModelFor(const emitters::Target& target,
                                            const std::function<HostCalibration()>& host);

}  // namespace tilesmith::costmodel
