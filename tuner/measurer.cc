#include "tuner/measurer.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "support/log.h"

namespace tilesmith::tuner {
namespace {

using Clock = std::chrono::steady_clock;

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double rank = q * static_cast<double>(sorted.size() - 1);
  size_t low = static_cast<size_t>(rank);
  size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - static_cast<double>(low));
}

db::TrialStatus StatusFromName(const std::string& name) {
  auto status = db::ParseTrialStatus(name);
  return status ? *status : db::TrialStatus::kLaunch;
}

std::optional<double> MedianOf(const nlohmann::json& list) {
  if (!list.is_array() || list.empty()) return std::nullopt;
  std::vector<double> times;
  for (const nlohmann::json& time : list) {
    if (!time.is_number()) return std::nullopt;
    times.push_back(time.get<double>());
  }
  std::sort(times.begin(), times.end());
  return Quantile(times, 0.5);
}

std::optional<double> NumberAt(const nlohmann::json& stats, const char* field) {
  auto found = stats.find(field);
  if (found == stats.end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

}  // namespace

TimingFigures TimingFigures::FromAnswer(const nlohmann::json& answer) {
  TimingFigures figures;
  auto method = answer.find("timing_method");
  if (method == answer.end() || !method->is_string()) return figures;
  figures.method = method->get<std::string>();
  if (auto kernel = answer.find("kernel_times_us"); kernel != answer.end()) {
    figures.kernel_us = MedianOf(*kernel);
  }
  if (auto events = answer.find("event_times_us"); events != answer.end()) {
    figures.event_us = MedianOf(*events);
  }
  figures.fallback = answer.value("timing_fallback", "");
  return figures;
}

TimingFigures TimingFigures::FromStats(const nlohmann::json& stats) {
  TimingFigures figures;
  if (!stats.is_object()) return figures;
  auto method = stats.find("timing_method");
  if (method == stats.end() || !method->is_string()) return figures;
  figures.method = method->get<std::string>();
  figures.kernel_us = NumberAt(stats, "kernel_us");
  figures.event_us = NumberAt(stats, "event_us");
  return figures;
}

void TimingFigures::AddTo(nlohmann::json& stats) const {
  if (method.empty()) return;
  stats["timing_method"] = method;
  if (kernel_us) stats["kernel_us"] = *kernel_us;
  if (event_us) stats["event_us"] = *event_us;
}

db::Timing Summarize(std::vector<double> times_us) {
  db::Timing timing;
  timing.times_us = times_us;
  std::sort(times_us.begin(), times_us.end());
  timing.median_us = Quantile(times_us, 0.5);
  timing.p20_us = Quantile(times_us, 0.2);
  timing.p80_us = Quantile(times_us, 0.8);
  timing.min_us = times_us.empty() ? 0 : times_us.front();
  timing.max_us = times_us.empty() ? 0 : times_us.back();
  return timing;
}

HostMeasurer::~HostMeasurer() { Stop(); }

Status HostMeasurer::Start() {
  int in_pipe[2];
  int out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    return MakeError(ErrorCode::kIo, std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> argv;
  for (std::string& arg : argv_) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return MakeError(ErrorCode::kIo, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(in_pipe[0], STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  pid_ = pid;
  to_worker_ = in_pipe[1];
  from_worker_ = out_pipe[0];
  pending_.clear();
  ++starts_;
  return OkStatus();
}

void HostMeasurer::Stop() {
  if (pid_ < 0) return;
  kill(pid_, SIGKILL);
  Reap();
  killed_from_outside_ = false;  // our own kill
}

std::string HostMeasurer::Reap() {
  if (to_worker_ >= 0) close(to_worker_);
  if (from_worker_ >= 0) close(from_worker_);
  to_worker_ = from_worker_ = -1;
  int status = 0;
  std::string how = "the worker ended";
  killed_from_outside_ = false;
  if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
    if (WIFSIGNALED(status)) {
      int signal = WTERMSIG(status);
      killed_from_outside_ = signal == SIGKILL || signal == SIGTERM || signal == SIGINT ||
                             signal == SIGHUP || signal == SIGQUIT;
      how = "the worker died of signal " + std::to_string(WTERMSIG(status)) + " (" +
            sigabbrev_np(WTERMSIG(status)) + ")";
    } else if (WIFEXITED(status)) {
      how = "the worker exited with status " + std::to_string(WEXITSTATUS(status));
    }
  }
  pid_ = -1;
  return how;
}

std::optional<std::string> HostMeasurer::ReadLine(double timeout_ms, bool* timed_out) {
  *timed_out = false;
  auto deadline = Clock::now() + std::chrono::duration<double, std::milli>(timeout_ms);
  for (;;) {
    if (size_t end = pending_.find('\n'); end != std::string::npos) {
      std::string line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      return line;
    }
    double left = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
    if (left <= 0) {
      *timed_out = true;
      return std::nullopt;
    }
    if (should_stop_ && should_stop_()) {
      cancelled_ = true;
      return std::nullopt;
    }
    pollfd fd = {from_worker_, POLLIN, 0};
    int ready = poll(&fd, 1, static_cast<int>(std::min(left, 100.0)) + 1);
    if (ready < 0 && errno != EINTR) return std::nullopt;
    if (ready <= 0) continue;
    char buffer[65536];
    ssize_t got = read(from_worker_, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return std::nullopt;  // EOF: the worker is gone
    pending_.append(buffer, got);
  }
}

WorkerResult HostMeasurer::Measure(const nlohmann::json& config, const MeasureOptions& options) {
  WorkerResult result = MeasureOnce(config, options);
  if (!killed_from_outside_) return result;
  killed_from_outside_ = false;
  TS_LOG(kWarning) << result.message << " (killed from outside); running the candidate again";
  WorkerResult retried = MeasureOnce(config, options);
  retried.restarted = true;
  if (killed_from_outside_) {
    killed_from_outside_ = false;
    retried.status = db::TrialStatus::kCrash;
    retried.message += " (killed from outside twice; not the candidate's fault)";
  }
  return retried;
}

WorkerResult HostMeasurer::MeasureOnce(const nlohmann::json& config,
                                       const MeasureOptions& options) {
  WorkerResult result;
  auto fail = [&](db::TrialStatus status, std::string message) {
    result.status = status;
    result.message = std::move(message);
    return result;
  };
  if (pid_ < 0) {
    if (auto started = Start(); !started)
      return fail(db::TrialStatus::kLaunch, started.error().message);
  }
  int64_t id = next_id_++;
  nlohmann::json request = {{"id", id},
                            {"config", config},
                            {"warmup_ms", options.warmup_ms},
                            {"budget_ms", options.budget_ms},
                            {"min_reps", options.min_reps},
                            {"max_reps", options.max_reps},
                            {"flush_bytes", options.flush_bytes},
                            {"flush", options.flush},
                            {"reference", options.reference},
                            {"timing", options.timing}};
  std::string line = request.dump() + "\n";
  // A worker that died between candidates makes this write fail (SIGPIPE is ignored).
  signal(SIGPIPE, SIG_IGN);
  if (write(to_worker_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    result.restarted = true;
    return fail(db::TrialStatus::kCrash, Reap() + " before the candidate was sent");
  }
  bool timed_out = false;
  double timeout = options.compile_timeout_ms;
  bool running = false;
  for (;;) {
    std::optional<std::string> answer_line = ReadLine(timeout, &timed_out);
    if (!answer_line && cancelled_) {
      cancelled_ = false;
      Stop();
      result.restarted = true;
      result.cancelled = true;
      return fail(db::TrialStatus::kCrash, "stopped before the worker answered");
    }
    if (!answer_line) {
      result.restarted = true;
      if (timed_out) {
        kill(pid_, SIGKILL);
        Reap();
        killed_from_outside_ = false;  // our own kill
        return fail(db::TrialStatus::kTimeout,
                    running ? "no answer " + std::to_string(static_cast<int64_t>(timeout)) +
                                  " ms after execution started; the worker was killed"
                            : "compiling took longer than " +
                                  std::to_string(static_cast<int64_t>(timeout)) + " ms");
      }
      std::string how = Reap();
      return fail(running ? db::TrialStatus::kCrash : db::TrialStatus::kCompile,
                  how + (running ? " while running the candidate" : " while compiling it"));
    }
    nlohmann::json answer = nlohmann::json::parse(*answer_line, nullptr, false);
    if (!answer.is_object() || answer.value("id", int64_t{-1}) != id) continue;  // stray output
    if (answer.value("event", "") == "running") {
      running = true;
      timeout = options.timeout_ms;
      continue;
    }
    result.status = StatusFromName(answer.value("status", std::string("launch")));
    result.message = answer.value("message", "");
    result.compile_ms = answer.value("compile_ms", 0.0);
    if (answer.contains("verification_error") && answer["verification_error"].is_number()) {
      result.verification_error = answer["verification_error"].get<double>();
    }
    if (answer.contains("times_us"))
      result.times_us = answer["times_us"].get<std::vector<double>>();
    result.figures = TimingFigures::FromAnswer(answer);
    if (!result.figures.fallback.empty() && !warned_events_) {
      warned_events_ = true;
      TS_LOG(kWarning) << "kernels are timed with CUDA events, not CUPTI's kernel durations "
                          "(what XLA reports; events add ~2 us of launch to small kernels): "
                       << result.figures.fallback;
    }
    if (answer.value("exit", false)) {  // the worker cannot go on (a broken CUDA context)
      Stop();
      result.restarted = true;
    }
    return result;
  }
}

}  // namespace tilesmith::tuner
