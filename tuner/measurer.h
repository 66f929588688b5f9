// The measurer: runs candidates in a `tilesmith worker` subprocess (worker.h; ORC JIT for the
// host, the dlopen'ed driver with `--target cuda:…`) and turns what happens there into a
// trial outcome. A crash (the worker died), a hang (no answer
// within the execution timeout, counted from the worker's "running" line, so compiling and
// queueing never count) or a stray write marks the candidate failed; the worker is then
// restarted for the next candidate.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/records.h"
#include "support/status.h"

namespace tilesmith::tuner {

/// How each candidate is timed.
struct MeasureOptions {
  double warmup_ms = 10;
  double budget_ms = 40;  ///< Repetitions stop once this much time was spent (after min).
  int64_t min_reps = 3;
  int64_t max_reps = 1000;
  /// Before each repetition the kernel's data leaves the caches (0: no flush). Host:
  /// `flush` "buffers" evicts the kernel's own buffers' lines, "cache" overwrites the
  /// last-level cache with this many bytes (also where lines cannot be evicted). CUDA: this
  /// many bytes of device memory are written, whatever `flush` says.
  int64_t flush_bytes = 0;
  std::string flush = "buffers";
  double timeout_ms = 5000;            ///< Execution only: from "running" to the answer.
  double compile_timeout_ms = 120000;  ///< From the request to "running".
  /// "evaluator", or a directory holding (or to hold) the first verified candidate's outputs.
  std::string reference = "evaluator";
  /// CUDA: "kernel" ranks by CUPTI's kernel durations (events where CUPTI cannot record),
  /// "events" by CUDA events around each launch (CUPTI left unloaded). Host: no effect.
  std::string timing = "kernel";
};

/// How a CUDA candidate was timed, beside its times (which are the kernel times when
/// `method` is "cupti-kernel", else the event times): stored with its trial, in
/// `compile_stats`, as `timing_method`, `kernel_us` and `event_us`. Empty for the host,
/// whose times are its own clock's.
struct TimingFigures {
  std::string method;               ///< "cupti-kernel", "cuda-events", or empty.
  std::optional<double> kernel_us;  ///< Median of CUPTI's kernel durations.
  std::optional<double> event_us;   ///< Median of the CUDA-event times of the same launches.
  std::string fallback;             ///< Why events, where kernel time was asked for.

  /// From a worker's answer (worker.h); empty when it names no method.
  static TimingFigures FromAnswer(const nlohmann::json& answer);
  /// From a stored trial's `compile_stats`; empty when they name no method.
  static TimingFigures FromStats(const nlohmann::json& stats);
  /// Adds `timing_method`, `kernel_us`, `event_us` (those known) to `stats`.
  void AddTo(nlohmann::json& stats) const;
  bool operator==(const TimingFigures&) const = default;
};

/// What one candidate did in the worker.
struct WorkerResult {
  db::TrialStatus status = db::TrialStatus::kOk;
  std::string message;
  std::vector<double> times_us;
  TimingFigures figures;  ///< CUDA: how `times_us` were taken, and the other figure.
  double compile_ms = 0;
  std::optional<double> verification_error;
  bool restarted = false;  ///< The worker was killed or died and will be started anew.
  /// Stopped by the measurer's `should_stop` before an answer: says nothing of the
  /// candidate and is never stored.
  bool cancelled = false;
};

/// One worker subprocess, started on first use and after every failure that took it down.
/// (Named for the host, its first target; a `--target cuda:…` worker is driven the same way.)
class HostMeasurer {
 public:
  /// `argv`: the worker's command line (the tilesmith binary, "worker", the fusion file, …).
  explicit HostMeasurer(std::vector<std::string> argv) : argv_(std::move(argv)) {}
  ~HostMeasurer();
  HostMeasurer(const HostMeasurer&) = delete;
  HostMeasurer& operator=(const HostMeasurer&) = delete;

  /// Runs `config` in the worker; a failure of the worker becomes the result, not an error.
  /// A worker killed from outside (SIGKILL, SIGTERM, … that tilesmith did not send: an
  /// operator, the OOM killer) says nothing of the candidate: it is run once more in a new
  /// worker, and a second such death is a `crash`, never a `compile` failure.
  WorkerResult Measure(const nlohmann::json& config, const MeasureOptions& options);

  /// Workers started so far (1 when none ever failed).
  int64_t starts() const { return starts_; }

  /// Asked every 100 ms while waiting on the worker: true kills it and answers `cancelled`,
  /// so a stopped tune never waits for a compile or a measurement to finish.
  void set_should_stop(std::function<bool()> should_stop) { should_stop_ = std::move(should_stop); }

 private:
  Status Start();
  void Stop();
  /// The next line from the worker within `timeout_ms`; nullopt on EOF or timeout
  /// (`*timed_out` says which).
  std::optional<std::string> ReadLine(double timeout_ms, bool* timed_out);
  /// Waits for the dead (or killed) worker and says how it ended.
  std::string Reap();
  WorkerResult MeasureOnce(const nlohmann::json& config, const MeasureOptions& options);

  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  std::string pending_;  // bytes read past the last line
  int64_t next_id_ = 1;
  int64_t starts_ = 0;
  bool killed_from_outside_ = false;  // how the last reaped worker ended
  std::function<bool()> should_stop_;
  bool cancelled_ = false;      // ReadLine gave up because should_stop_ said so
  bool warned_events_ = false;  // the one warning that CUDA events stand in for CUPTI
};

/// Median, p20, p80, min and max of `times_us` (linear interpolation between ranks).
db::Timing Summarize(std::vector<double> times_us);

}  // namespace tilesmith::tuner
