// The HTTP server: Boost.Beast on Boost.Asio, a few threads answering requests (service/
// api.h) and one job thread per device that tunes (service/jobs.h). Safe by default:
// loopback only, request bodies and read times bounded, an optional bearer token.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/status.h"
#include "tuner/measurer.h"

namespace tilesmith::service {

/// Everything `tilesmith serve` can set; the defaults are the embedded ones.
struct ServerOptions {
  std::string bind = "127.0.0.1";
  int port = 8470;  ///< 0: an ephemeral port (see Server::port()).
  /// The results database: a SQLite file (created when missing) or a PostgreSQL URL.
  std::string db_path;
  /// Job files live here; default: the SQLite database's folder, ./tilesmith-data for a URL.
  std::string data_dir;
  std::vector<std::string> targets = {"host"};
  std::string devices_dir;  ///< Device descriptions; default tuner::DefaultDevicesDir().
  std::string token;        ///< Bearer token; empty: none required.
  int http_threads = 2;
  int compile_threads = 0;        ///< Per job batch (0: one per core).
  int64_t batch_size = 4;         ///< Candidates a job compiles and commits together.
  tuner::MeasureOptions measure;  ///< Warm-up, repetition budget, timeouts per candidate.
  std::string worker_binary;      ///< `tilesmith` for workers; default /proc/self/exe.
  std::string compiler_version;   ///< The result key's compiler part.
  size_t body_limit = 64u << 20;  ///< Bytes; larger bodies get 413.
  double read_timeout_s = 30;     ///< Time to send one request, headers and body.
  int64_t max_batch = 10000;
  int64_t max_space = 1000000;
  int64_t max_instructions = 20000;  ///< Per request's fusion module; more gets 422.
  double cache_ttl_s = 1;
  /// Also run as a fleet agent (service/agent.h): claim work units of the database's queue
  /// for the targets that can tune here.
  bool run_agent = false;
  /// Put POST /v1/tune jobs in the database's work queue for the fleet's agents (this
  /// server's own agent included) instead of running them on this server's job threads.
  bool queue_jobs = false;
  double agent_lease_s = 30;
};

class Server {
 public:
  /// Opens the database, resumes its queued jobs, binds and starts serving. Errors name
  /// the address, the database or the target that failed.
  static Expected<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();

  /// The bound port (the ephemeral one when asked for 0).
  int port() const;
  /// `http://ADDR:PORT`.
  std::string url() const;
  /// Stops accepting, lets running jobs commit their batch and re-queues them, then ends
  /// every connection and thread. Idempotent.
  void Stop();

  struct State;

 private:
  explicit Server(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace tilesmith::service
