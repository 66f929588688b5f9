#include "tuner/backends/runner.h"

#include "compiler/emitters/emitter_registry.h"

namespace tilesmith::tuner {

WorkerRunner::WorkerRunner(std::vector<std::string> argv, MeasureOptions options,
                           std::function<bool()> should_stop)
    : measurer_(std::move(argv)), options_(std::move(options)) {
  measurer_.set_should_stop(std::move(should_stop));
}

RunResult WorkerRunner::Run(const RunRequest& request) {
  WorkerResult run = measurer_.Measure(request.config, options_);
  RunResult result;
  result.cancelled = run.cancelled;
  result.status = run.status;
  result.message = run.message;
  result.verification_error = run.verification_error;
  result.worker_compile_ms = run.compile_ms;
  if (run.status == db::TrialStatus::kOk && !run.cancelled) {
    result.timing = Summarize(run.times_us);
    result.figures = run.figures;
  }
  return result;
}

PredictingRunner::PredictingRunner(const costmodel::CostModel& model, const Device& device)
    : model_(model), figures_{device.info, device.cache_bytes} {}

RunResult PredictingRunner::Run(const RunRequest& request) {
  // The kernel is emitted again (cheap beside the compile) and predicted with what the
  // compiler assigned to it.
  RunResult result;
  result.status = db::TrialStatus::kCompile;
  auto kernel = emitters::EmitKernel(request.analysis, request.emitter_config, figures_.info);
  if (!kernel) {
    result.message = kernel.error().message;
    return result;
  }
  costmodel::ResourceUsage usage = request.stats.usage;
  auto predicted = model_.Predict(*kernel, figures_, &usage);
  if (!predicted) {
    result.message = "compiled, but the model could not predict it: " + predicted.error().message;
    return result;
  }
  result.status = db::TrialStatus::kOk;
  result.predicted_us = predicted->microseconds;
  result.breakdown = std::move(predicted->breakdown);
  return result;
}

std::vector<std::string> WorkerCommand(const std::string& binary, const std::string& fusion_path,
                                       const Device& device,
                                       std::span<const std::string> input_flags) {
  std::vector<std::string> argv = {binary,
                                   "--log-level",
                                   "warning",
                                   "worker",
                                   fusion_path,
                                   "--target",
                                   device.target.ToString(),
                                   "--device",
                                   device.id};
  argv.insert(argv.end(), input_flags.begin(), input_flags.end());
  return argv;
}

}  // namespace tilesmith::tuner
