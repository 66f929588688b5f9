// One Backend per kind of target: it owns the device description, compiles a candidate as
// far as its target goes before running (Build → typed BuildStats), and hands out the
// runners that can run candidates for it (runner.h). The tuner, the CLI and the service ask
// the backend instead of branching on the target; a remote fleet runner or a model-only
// backend is one more implementation of the same interface.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/emitters/kernel_ir.h"
#include "compiler/hlo/hlo_module.h"
#include "costmodel/cost_model.h"
#include "support/status.h"
#include "tuner/backends/build_stats.h"
#include "tuner/backends/runner.h"
#include "tuner/cuda_driver.h"
#include "tuner/device.h"

namespace tilesmith::tuner {

class Backend {
 public:
  explicit Backend(Device device) : device_(std::move(device)) {}
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  /// `host`, `cuda`: what kind of target this backend compiles for.
  virtual std::string_view kind() const = 0;
  const Device& device() const { return device_; }

  /// Compiles an emitted kernel as far as the target goes before running (the cubin and its
  /// resources; the host's optimised code and what it executes). `compile_ms`,
  /// `threads_per_block` and `blocks` are BuildCandidate's to fill.
  virtual Expected<BuildStats> Build(const emitters::KernelIR& kernel) const = 0;

  /// Emits `config` for `analysis` and builds it, timing both; a failure is the result's
  /// message, never an error.
  BuildResult BuildCandidate(const analysis::FusionAnalysis& analysis,
                             const nlohmann::json& config) const;

  /// Whether candidates can be timed on this machine (the host always; a GPU only with a
  /// driver that sees one).
  virtual bool CanMeasure(const CudaDriverProbe& driver) const = 0;
  /// Whether timing needs no device found at run time (the host): a tune times such a
  /// target unless told otherwise, and predicts any other unless told it may time it.
  virtual bool MeasuresWithoutDevice() const = 0;

  /// A refusal before measuring a fusion that cannot run here (the host's memory); ok else.
  virtual Status CheckRunnable(const hlo::HloComputation& fusion) const;

  /// The runner that times candidates in an isolated `tilesmith worker` (WorkerCommand).
  std::unique_ptr<Runner> MakeWorkerRunner(std::vector<std::string> argv, MeasureOptions options,
                                           std::function<bool()> should_stop = {}) const;
  /// The runner that predicts candidates with `model` (borrowed) instead of timing them.
  std::unique_ptr<Runner> MakePredictingRunner(const costmodel::CostModel& model) const;

 private:
  Device device_;
};

/// The host CPU: kernels through ORC JIT; Build counts what the optimised code executes.
class HostBackend : public Backend {
 public:
  using Backend::Backend;
  std::string_view kind() const override { return "host"; }
  Expected<BuildStats> Build(const emitters::KernelIR& kernel) const override;
  bool CanMeasure(const CudaDriverProbe&) const override { return true; }
  bool MeasuresWithoutDevice() const override { return true; }
  Status CheckRunnable(const hlo::HloComputation& fusion) const override;
};

/// A CUDA GPU: LLVM NVPTX → PTX → cubin; Build reports the cubin's registers, shared memory
/// and spills. Compiling needs only the toolkit; timing needs a driver with a GPU.
class CudaBackend : public Backend {
 public:
  using Backend::Backend;
  std::string_view kind() const override { return "cuda"; }
  Expected<BuildStats> Build(const emitters::KernelIR& kernel) const override;
  bool CanMeasure(const CudaDriverProbe& driver) const override {
    return driver.loaded && driver.device_count > 0;
  }
  bool MeasuresWithoutDevice() const override { return false; }
};

/// The backend of `device`'s target.
std::unique_ptr<Backend> MakeBackend(const Device& device);

/// What `kernel`'s optimised host code executes per block, for the host model.
Expected<costmodel::ResourceUsage> CountHostUsage(const emitters::KernelIR& kernel);

}  // namespace tilesmith::tuner
