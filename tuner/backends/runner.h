// Runners: what a tune does with a compiled candidate. The worker runner times it in an
// isolated `tilesmith worker` process (measurer.h) and answers a measurement; the predicting
// runner, for a target that cannot be timed here, predicts it with a cost model and the
// resources its compile reported, and answers a prediction that is never stored as a
// measurement. A backend hands out the runners its target supports (backend.h).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "costmodel/cost_model.h"
#include "db/records.h"
#include "tuner/backends/build_stats.h"
#include "tuner/device.h"
#include "tuner/measurer.h"

namespace tilesmith::tuner {

/// One compiled candidate to run.
struct RunRequest {
  const nlohmann::json& config;  ///< The whole config (layouts included), as the worker reads it.
  const analysis::FusionAnalysis& analysis;  ///< The fusion under the config's layouts.
  const nlohmann::json& emitter_config;      ///< The emitter's part of `config`.
  const BuildStats& stats;                   ///< What its compile reported.
};

/// What a runner made of one candidate: a measurement (timing) or a prediction.
struct RunResult {
  /// Stopped before an answer: says nothing of the candidate and is never stored.
  bool cancelled = false;
  db::TrialStatus status = db::TrialStatus::kOk;
  std::string message;
  std::optional<db::Timing> timing;  ///< Measured, verified.
  TimingFigures figures;             ///< How `timing` was taken (CUDA), stored beside it.
  std::optional<double> verification_error;
  std::optional<double> worker_compile_ms;
  std::optional<double> predicted_us;  ///< Predicted (a predicting runner).
  nlohmann::json breakdown;            ///< The prediction's terms.
};

class Runner {
 public:
  virtual ~Runner() = default;
  /// True: results are measurements, committed as trials. False: predictions only.
  virtual bool measures() const = 0;
  virtual RunResult Run(const RunRequest& request) = 0;
  /// Worker processes started so far (0 for a runner without one).
  virtual int64_t worker_starts() const { return 0; }
  /// The measurer a runner times with, for re-timing contenders after the search
  /// (confirm_winner.h); null for a runner that does not measure.
  virtual HostMeasurer* measurer() { return nullptr; }
};

/// Times candidates in a `tilesmith worker` subprocess started with `argv`.
class WorkerRunner : public Runner {
 public:
  /// `should_stop` is asked every 100 ms while waiting on the worker (empty: never).
  WorkerRunner(std::vector<std::string> argv, MeasureOptions options,
               std::function<bool()> should_stop = {});
  bool measures() const override { return true; }
  RunResult Run(const RunRequest& request) override;
  int64_t worker_starts() const override { return measurer_.starts(); }
  HostMeasurer* measurer() override { return &measurer_; }

 private:
  HostMeasurer measurer_;
  MeasureOptions options_;
};

/// Predicts candidates with `model` (borrowed) and their compile's resources.
class PredictingRunner : public Runner {
 public:
  PredictingRunner(const costmodel::CostModel& model, const Device& device);
  bool measures() const override { return false; }
  RunResult Run(const RunRequest& request) override;
  std::string_view model_name() const { return model_.name(); }

 private:
  const costmodel::CostModel& model_;
  costmodel::DeviceFigures figures_;
};

/// The `tilesmith worker` command line for the fusion file `fusion_path` on `device`, started
/// from `binary`; `input_flags` are how the file is read (`--format`, `--sizes` and values).
/// The CLI and the service both start their workers with it.
std::vector<std::string> WorkerCommand(const std::string& binary, const std::string& fusion_path,
                                       const Device& device,
                                       std::span<const std::string> input_flags = {});

}  // namespace tilesmith::tuner
