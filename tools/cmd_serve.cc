// `tilesmith serve`: the HTTP service (service/server.h) until SIGTERM or SIGINT, which
// stop accepting, let running jobs commit their batch, re-queue them and exit 0.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "db/open_store.h"
#include "service/server.h"
#include "support/log.h"
#include "tools/commands.h"

namespace tilesmith::tools {
namespace {

Expected<std::string> ReadToken(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return MakeError(ErrorCode::kIo, "--token-file: cannot read " + path);
  std::stringstream text;
  text << file.rdbuf();
  std::string token = text.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
    token.pop_back();
  }
  if (token.empty()) return InvalidArgument("--token-file: " + path + " holds no token");
  return token;
}

int RunServe(const cli::Args& args) {
  if (!args.positionals().empty()) {
    ReportError("serve takes no positional arguments");
    return kExitUsage;
  }
  service::ServerOptions options;
  options.bind = args.Get("bind", "127.0.0.1");
  options.db_path = args.Get("db", "tilesmith-data/tilesmith.db");
  options.targets = cli::SplitList(args.Get("targets", "host"));
  auto port = args.GetInteger("port", 8470, 0, 65535);
  auto workers = args.GetInteger("workers", 0, 0, 1024);
  auto http_threads = args.GetInteger("http-threads", 2, 1, 256);
  auto body_mib = args.GetInteger("body-limit-mib", 64, 1, 4096);
  auto batch = args.GetInteger("batch", 4, 1, 1024);
  auto max_space = args.GetInteger("max-space", 1000000, 1, int64_t{1} << 40);
  auto max_instructions = args.GetInteger("max-instructions", 20000, 1, int64_t{1} << 40);
  auto read_timeout = args.GetPositive("read-timeout", 30);
  auto warmup = args.GetPositive("warmup-ms", 10);
  auto reps = args.GetPositive("rep-ms", 40);
  for (const auto* flag :
       {&port, &workers, &http_threads, &body_mib, &batch, &max_space, &max_instructions}) {
    if (!*flag) {
      ReportError(flag->error().message);
      return kExitUsage;
    }
  }
  for (const auto* flag : {&read_timeout, &warmup, &reps}) {
    if (!*flag) {
      ReportError(flag->error().message);
      return kExitUsage;
    }
  }
  options.port = static_cast<int>(*port);
  options.compile_threads = static_cast<int>(*workers);
  options.http_threads = static_cast<int>(*http_threads);
  options.body_limit = static_cast<size_t>(*body_mib) << 20;
  options.batch_size = *batch;
  options.max_space = *max_space;
  options.max_instructions = *max_instructions;
  options.read_timeout_s = *read_timeout;
  options.measure.warmup_ms = *warmup;
  options.measure.budget_ms = *reps;
  options.run_agent =
      args.Has("agent") || (db::IsPostgresLocation(options.db_path) && !args.Has("no-agent"));
  if (args.Has("queue-jobs") && args.Has("local-jobs")) {
    ReportError("--queue-jobs and --local-jobs contradict each other");
    return kExitUsage;
  }
  options.queue_jobs = args.Has("queue-jobs") ||
                       (db::IsPostgresLocation(options.db_path) && !args.Has("local-jobs"));
  if (args.Has("token-file")) {
    auto token = ReadToken(args.Get("token-file"));
    if (!token) return ReportError(token.error().message);
    options.token = *token;
  }
  std::error_code error;
  std::filesystem::path parent = std::filesystem::path(options.db_path).parent_path();
  if (!db::IsPostgresLocation(options.db_path) && !parent.empty()) {
    std::filesystem::create_directories(parent, error);
  }

  // Block the stop signals before any thread starts, so every thread (and each worker
  // process, which inherits the mask) leaves them to the sigwait below: a Ctrl-C reaches
  // the server, never a candidate mid-measurement.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto server = service::Server::Start(options);
  if (!server) return ReportError(server.error().message);
  std::cout << "tilesmith serving on " << (*server)->url() << " (database "
            << db::DescribeLocation(options.db_path) << ", targets " << args.Get("targets", "host")
            << ")" << std::endl;
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  TS_LOG(kInfo) << "got " << (signal_number == SIGTERM ? "SIGTERM" : "SIGINT")
                << ": stopping the running jobs";
  (*server)->Stop();
  server->reset();
  return kExitOk;
}

}  // namespace

Subcommand ServeSubcommand() {
  cli::Command command(
      "serve", "run the HTTP service: query, tune and jobs over a results database",
      "[--bind ADDR] [--port 8470] [--db PATH] [--targets host,cuda:sm_90] [--token-file F] "
      "[--workers N]");
  command.Flag("bind", "ADDR", "address to listen on (default 127.0.0.1, loopback only)")
      .Flag("port", "N", "TCP port (default 8470; 0 picks a free one, printed at start)")
      .Flag("db", "PATH|URL",
            "results database: a SQLite file (default ./tilesmith-data/tilesmith.db) or a "
            "postgresql:// URL")
      .Flag("targets", "T,...",
            "targets served: host, cuda:sm_XX, cuda:0 (the GPU present), or TARGET=DEVICE_ID "
            "for a description in configs/devices (default host)")
      .Flag("token-file", "F", "require `Authorization: Bearer <token>` with the token in F")
      .Flag("workers", "N", "compile threads per tuning batch (default: one per core)")
      .Switch("agent",
              "also claim and tune the fleet's work units for the targets that can tune here "
              "(the default with a postgresql:// database; docs/fleet.md)")
      .Switch("no-agent", "do not claim the fleet's work units (a server that only answers)")
      .Switch("queue-jobs",
              "put POST /v1/tune jobs in the database's work queue for the fleet's agents "
              "(the default with a postgresql:// database; docs/fleet.md)")
      .Switch("local-jobs", "run POST /v1/tune jobs on this server's own job threads")
      .Flag("http-threads", "N", "threads answering requests (default 2)")
      .Flag("batch", "N", "candidates a job compiles and commits together (default 4)")
      .Flag("max-space", "N",
            "largest search space a tune may ask for, larger gets 422 "
            "(default 1000000)")
      .Flag("max-instructions", "N",
            "most instructions in one request's fusion module, more gets 422 (default 20000)")
      .Flag("body-limit-mib", "N", "largest request body, larger gets 413 (default 64)")
      .Flag("read-timeout", "S", "seconds a client has to send one request (default 30)")
      .Flag("warmup-ms", "MS", "warm-up per candidate before timing (default 10)")
      .Flag("rep-ms", "MS", "timed repetitions per candidate for this long (default 40)")
      .Epilog(
          "Prints `tilesmith serving on http://ADDR:PORT` once listening. SIGTERM or SIGINT\n"
          "stops accepting, stops each running job within about a second (committing what\n"
          "it measured), marks it queued again\n"
          "(the next server on this database resumes it) and exits 0. The API is described\n"
          "in docs/api.md.");
  return {std::move(command), &RunServe};
}

}  // namespace tilesmith::tools
