// `tilesmith agent --db URL --targets host,cuda:0`: the long-running process on each host
// of a fleet. It claims work units for the device keys of its targets from the shared
// database's queue (service/agent.h), tunes them under a lease and commits each with its
// measurements. SIGINT or SIGTERM stops it: the unit in progress is given back to the queue.
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <thread>

#include "db/open_store.h"
#include "db/work_lock.h"
#include "service/agent.h"
#include "support/log.h"
#include "tools/commands.h"
#include "tools/tune_support.h"
#include "tuner/device.h"

namespace tilesmith::tools {
namespace {

int RunAgentCommand(const cli::Args& args) {
  if (!args.positionals().empty()) {
    ReportError("agent takes no positional arguments");
    return kExitUsage;
  }
  auto lease_s = args.GetPositive("lease-s", 30);
  auto poll_s = args.GetPositive("poll-s", 1);
  auto workers = args.GetInteger("workers", 0, 0, 1024);
  for (const Error* bad : {lease_s ? nullptr : &lease_s.error(), poll_s ? nullptr : &poll_s.error(),
                           workers ? nullptr : &workers.error()}) {
    if (bad != nullptr) {
      ReportError(bad->message);
      return kExitUsage;
    }
  }
  std::string db_location = ResolveDbPath(args.Get("db"));
  auto targets = service::ResolveTargets(cli::SplitList(args.Get("targets", "host")),
                                         tuner::DefaultDevicesDir());
  if (!targets) return ReportError(targets.error().message);

  service::AgentOptions options;
  options.name = args.Get("name");
  options.targets = std::move(*targets);
  options.worker_binary = SelfPath();
  options.compiler_version = TILESMITH_COMPILER_VERSION;
  options.lease_ms = static_cast<int64_t>(*lease_s * 1000);
  options.poll_s = *poll_s;
  options.exit_when_idle = args.Has("exit-when-idle");
  options.compile_threads = static_cast<int>(*workers);
  std::error_code error;
  std::string data_dir = args.Get("data-dir");
  if (data_dir.empty()) {
    data_dir = (std::filesystem::temp_directory_path(error) /
                ("tilesmith-agent-" + std::to_string(getpid())))
                   .string();
  }
  options.data_dir = data_dir;
  bool quiet = args.Has("quiet");
  options.log = [quiet](const std::string& line) {
    if (!quiet) std::cerr << line << std::endl;
  };
  if (options.name.empty()) options.name = db::ProcessOwnerName("agent");

  // The stop signals go to a sigwait thread; every other thread, and each worker process
  // (the mask is inherited), leaves them alone, so no candidate is killed mid-measurement.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::atomic<bool> stop = false;
  std::atomic<bool> finished = false;
  std::thread watcher([&] {
    timespec tick = {0, 100'000'000};
    while (!finished) {
      if (sigtimedwait(&stop_signals, nullptr, &tick) < 0) continue;
      if (!quiet) std::cerr << options.name << ": stopping" << std::endl;
      stop = true;
    }
  });
  if (!quiet) {
    std::string keys;
    for (const service::ServedTarget& target : options.targets) {
      keys += "\n  " + target.name + (target.can_tune ? ": " : " (cannot tune: ") +
              (target.can_tune ? target.device.record.Key() : target.note + ")");
    }
    std::cerr << "tilesmith agent " << options.name << " on " << db::DescribeLocation(db_location)
              << ", lease " << *lease_s << " s, claiming units for:" << keys << std::endl;
  }
  auto stats = service::RunAgent(db_location, options, stop);
  finished = true;
  watcher.join();
  std::filesystem::remove_all(std::filesystem::path(data_dir) / "units", error);
  if (!stats) return ReportError(stats.error().message);
  if (!quiet) {
    std::cerr << options.name << ": " << stats->claimed << " units claimed, " << stats->done
              << " done, " << stats->failed << " given back as failed, " << stats->lost
              << " lost to an expired lease" << std::endl;
  }
  return kExitOk;
}

}  // namespace

Subcommand AgentSubcommand() {
  cli::Command command("agent", "claim and tune work units from a shared database's queue",
                       "[--db PATH|URL] [--targets host,cuda:0] [--name NAME] [--lease-s 30] "
                       "[--exit-when-idle]");
  command
      .Flag("db", "PATH|URL",
            "the fleet's database: a postgresql:// URL (or a SQLite file shared on one host; "
            "default $TILESMITH_DB, else ./tilesmith.db)")
      .Flag("targets", "T,...",
            "targets whose units this agent runs (default host): host, cuda:0, cuda:sm_90, "
            "TARGET=DEVICE_ID")
      .Flag("name", "NAME",
            "this agent's name in the queue (default `agent HOST:PID`; must be unique)")
      .Flag("lease-s", "S",
            "how long a claimed unit stays this agent's without a heartbeat (default 30; the "
            "heartbeat renews it every third of that)")
      .Flag("poll-s", "S", "wait between claims when the queue is empty (default 1)")
      .Flag("workers", "N", "compile threads per tuning batch (default: one per core)")
      .Flag("data-dir", "DIR", "where claimed fusions are written (default a temporary folder)")
      .Switch("exit-when-idle", "exit once the queue has nothing for this agent")
      .Switch("quiet", "no progress lines on stderr")
      .Epilog(
          "Units come from `tilesmith sweep FILE --distribute` (docs/fleet.md). An agent\n"
          "claims only units for the exact device keys of its targets (or the whole\n"
          "architecture, where the sweep allowed it), and commits each unit's measurements\n"
          "with its completion in one transaction. A unit whose lease expires (its agent\n"
          "died or was cut off) is claimed by another agent; the late commit is refused.\n"
          "An unreachable database is waited out with backoff. Ctrl-C or SIGTERM stops the\n"
          "agent; the unit in progress is given back to the queue for another agent.");
  return {std::move(command), &RunAgentCommand};
}

}  // namespace tilesmith::tools
