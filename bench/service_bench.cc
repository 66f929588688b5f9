// The service's query path under load: a real `Server` on loopback over a real SQLite file.
// Reports /v1/query cache-hit latency (p50, p99) and requests/s with 64 concurrent
// keep-alive connections, and the time of a 1,000-fusion /v1/query:batch (cold: every
// fusion parsed; warm: fingerprints remembered). The client runs on this machine too.
//
//   service_bench [--quick] [--seconds S] [--connections N] [--http-threads N] [--tune-all]
//                 [--cold-runs N] [--keep] [--db URL] [--json OUT]
//
// `--db postgresql://…` runs the server on that PostgreSQL database (it should be empty:
// the bench's fusions are written into it) instead of a fresh SQLite file.
//
// `--cold-runs N` times N cold batches, each of its own 1,000 fusions (N x 1,000 written),
// for a spread on a noisy machine; the warm batches repeat the last one's fusions.
//
// The queried fusion is tuned for real through POST /v1/tune. The 1,000 batch fusions are
// distinct fusions whose trial is written through the Store (a copy of the tuned fusion's
// best trial under each fingerprint): a lookup costs the same whatever the timing says, and
// tuning 1,000 fusions would take minutes. `--tune-all` tunes every one for real instead.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_output.h"
#include "compiler/hlo/canonical.h"
#include "compiler/hlo/parser.h"
#include "db/open_store.h"
#include "service/server.h"
#include "tuner/device.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string Fusion(int variant) {
  return "HloModule bench_" + std::to_string(variant) +
         "\n\nfused {\n  p = f32[64,256] parameter(0)\n  c = f32[] constant(" +
         std::to_string(variant) +
         ")\n  b = f32[64,256] broadcast(c), dimensions={}\n  a = f32[64,256] add(p, b)\n"
         "  ROOT t = f32[64,256] tanh(a)\n}\n\nENTRY main {\n  p = f32[64,256] parameter(0)\n"
         "  ROOT fusion = f32[64,256] fusion(p), kind=kLoop, calls=fused\n}\n";
}

struct Answer {
  int status = 0;
  std::string body;
};

Answer Send(int port, const std::string& method, const std::string& target,
            const std::string& body) {
  net::io_context io;
  beast::tcp_stream stream(io);
  stream.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  http::request<http::string_body> request(http::string_to_verb(method), target, 11);
  request.set(http::field::host, "127.0.0.1");
  request.body() = body;
  request.prepare_payload();
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(1u << 30);
  http::read(stream, buffer, parser);
  return {static_cast<int>(parser.get().result_int()), parser.get().body()};
}

// One keep-alive connection sending the same request until `end`: back to back (closed
// loop), or with a fixed `interval` from `first` on (open loop). An open-loop request that
// the previous one delays is sent at once, and its latency counts from when it was due, so
// the figures include the waiting a slow answer causes (no coordinated omission).
class LoadConnection : public std::enable_shared_from_this<LoadConnection> {
 public:
  LoadConnection(net::io_context& io, const std::string& body, Clock::time_point end,
                 std::vector<double>* latencies, int64_t* errors,
                 Clock::duration interval = Clock::duration::zero(),
                 Clock::time_point first = Clock::time_point())
      : stream_(io),
        timer_(io),
        end_(end),
        interval_(interval),
        due_(first),
        latencies_(latencies),
        errors_(errors) {
    request_ = {http::verb::post, "/v1/query", 11};
    request_.set(http::field::host, "127.0.0.1");
    request_.set(http::field::content_type, "application/json");
    request_.body() = body;
    request_.prepare_payload();
  }
  void Start(int port) {
    stream_.async_connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
                          [self = shared_from_this()](beast::error_code error) {
                            if (error) return self->Fail();
                            self->Next();
                          });
  }

 private:
  void Next() {
    if (interval_ == Clock::duration::zero()) {
      if (Clock::now() >= end_) return;
      sent_ = Clock::now();
      return Send();
    }
    if (due_ >= end_) return;
    sent_ = due_;
    due_ += interval_;
    if (Clock::now() >= sent_) return Send();
    timer_.expires_at(sent_);
    timer_.async_wait([self = shared_from_this()](beast::error_code error) {
      if (error) return self->Fail();
      self->Send();
    });
  }
  void Send() {
    http::async_write(
        stream_, request_, [self = shared_from_this()](beast::error_code error, size_t) {
          if (error) return self->Fail();
          self->response_ = {};
          http::async_read(self->stream_, self->buffer_, self->response_,
                           [self](beast::error_code error, size_t) {
                             if (error) return self->Fail();
                             self->latencies_->push_back(
                                 std::chrono::duration<double>(Clock::now() - self->sent_).count());
                             if (self->response_.result_int() != 200) {
                               ++*self->errors_;
                             }
                             self->Next();
                           });
        });
  }
  void Fail() { ++*errors_; }

  beast::tcp_stream stream_;
  net::steady_timer timer_;
  Clock::time_point end_;
  Clock::duration interval_;
  Clock::time_point due_;
  Clock::time_point sent_;
  std::vector<double>* latencies_;
  int64_t* errors_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  beast::flat_buffer buffer_;
};

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "service_bench: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int connections = 64;
  int batch_size = 1000;
  int cold_runs = 1;  // cold batches, each of its own fusions
  bool tune_all = false;
  int http_threads = 2;
  double rate = 10000;  // the open-loop phase's offered requests/s: the goal's throughput
  bool keep = false;    // leave the database behind, for a look with sqlite3
  std::string json_path;
  std::string db_location;  // empty: a fresh SQLite file; else a postgresql:// URL or a path
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick") {
      seconds = 2;
    } else if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::stod(argv[++i]);
    } else if (arg == "--connections" && i + 1 < argc) {
      connections = std::stoi(argv[++i]);
    } else if (arg == "--rate" && i + 1 < argc) {
      rate = std::stod(argv[++i]);
    } else if (arg == "--http-threads" && i + 1 < argc) {
      http_threads = std::stoi(argv[++i]);
    } else if (arg == "--cold-runs" && i + 1 < argc) {
      cold_runs = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--tune-all") {
      tune_all = true;
    } else if (arg == "--keep") {
      keep = true;
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--db" && i + 1 < argc) {
      db_location = argv[++i];
    } else {
      return Fail(
          "usage: service_bench [--quick] [--seconds S] [--connections N] [--rate R] "
          "[--http-threads N] [--tune-all] [--cold-runs N] [--keep] [--db URL] [--json OUT]");
    }
  }
  namespace fs = std::filesystem;
  fs::path dir =
      fs::temp_directory_path() / ("tilesmith_service_bench_" + std::to_string(getpid()));
  fs::create_directories(dir);
  tilesmith::service::ServerOptions options;
  options.port = 0;
  options.db_path = db_location.empty() ? (dir / "tilesmith.db").string() : db_location;
  options.worker_binary = TILESMITH_CLI;
  options.measure.warmup_ms = 1;
  options.measure.budget_ms = 5;
  options.http_threads = http_threads;
  auto server = tilesmith::service::Server::Start(options);
  if (!server) return Fail(server.error().message);
  int port = (*server)->port();

  // The queried fusion, tuned for real.
  json tune = {{"fusion", Fusion(0)}, {"target", "host"}, {"budget", 4}, {"wait", true}};
  Answer tuned = Send(port, "POST", "/v1/tune", tune.dump());
  if (tuned.status != 200) return Fail("tuning the benchmark fusion: " + tuned.body);
  json job = json::parse(tuned.body)["job"];

  // The batch's fusions: tuned, or their trial written through the Store.
  std::vector<std::string> fusions;
  for (int i = 1; i <= batch_size * cold_runs; ++i) fusions.push_back(Fusion(i));
  if (tune_all) {
    for (const std::string& fusion : fusions) {
      json request = {{"fusion", fusion}, {"budget", 1}, {"wait", true}, {"timeout_s", 600}};
      if (Send(port, "POST", "/v1/tune", request.dump()).status != 200) return Fail("tune-all");
    }
  } else {
    auto store = tilesmith::db::OpenStore(options.db_path);
    if (!store) return Fail(store.error().message);
    auto trials = (*store)->Measurements({job["fingerprint"].get<std::string>()});
    if (!trials || trials->empty()) return Fail("no trials for the tuned fusion");
    tilesmith::db::MeasurementRecord model = trials->front();
    std::vector<tilesmith::db::MeasurementRecord> batch;
    for (const std::string& fusion : fusions) {
      auto module = tilesmith::hlo::ParseHloModule(fusion);
      if (!module) return Fail(module.error().message);
      std::string fingerprint = *tilesmith::hlo::FusionFingerprint(**module);
      if (!(*store)->PutKernel({fingerprint, "hlo", (*module)->fusion()->name(),
                                tilesmith::hlo::CanonicalFusionText(**module)})) {
        return Fail("PutKernel");
      }
      tilesmith::db::MeasurementRecord trial = model;
      trial.uid.clear();
      trial.key.fingerprint = fingerprint;
      trial.job_id.clear();
      batch.push_back(std::move(trial));
    }
    auto written = (*store)->RecordBatch(batch);
    if (!written) return Fail(written.error().message);
  }

  // 1. Cache hits under load: as fast as the connections go (closed loop), then at the
  // offered rate (open loop). Closed loop, every connection always has a request waiting,
  // so p50 is about connections / throughput (Little's law): the latency of saturation, not
  // of a given load.
  std::string body = json{{"fusion", Fusion(0)}, {"target", "host"}}.dump();
  if (Send(port, "POST", "/v1/query", body).status != 200) return Fail("the query missed");
  int64_t errors = 0;
  struct Load {
    double rps = 0, p50_ms = 0, p99_ms = 0, elapsed = 0;
  };
  auto run_load = [&](double offered) {
    net::io_context io;
    std::vector<std::vector<double>> latencies(connections);
    auto start = Clock::now();
    auto to_duration = [](double s) {
      return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    };
    auto end = start + to_duration(seconds);
    Clock::duration interval =
        offered > 0 ? to_duration(connections / offered) : Clock::duration::zero();
    for (int i = 0; i < connections; ++i) {
      // Open loop: the connections' schedules interleave evenly.
      Clock::time_point first = start + to_duration(0.01) + interval * i / connections;
      std::make_shared<LoadConnection>(io, body, end, &latencies[i], &errors, interval, first)
          ->Start(port);
    }
    io.run();
    Load load;
    load.elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> all;
    for (const auto& each : latencies) all.insert(all.end(), each.begin(), each.end());
    load.rps = all.size() / load.elapsed;
    load.p50_ms = Percentile(all, 0.50) * 1e3;
    load.p99_ms = Percentile(all, 0.99) * 1e3;
    return load;
  };
  Load saturated = run_load(0);
  Load offered = run_load(rate);
  double elapsed = saturated.elapsed, rps = saturated.rps;
  double p50_ms = saturated.p50_ms, p99_ms = saturated.p99_ms;

  // 2. One 1,000-fusion batch: cold (parsed), then warm (median of 10). With --cold-runs,
  // more cold batches first, each of fusions the server has not seen; the reported cold
  // batch is the last, whose fusions the warm batches repeat.
  std::vector<std::string> batch_bodies;
  for (int run = 0; run < cold_runs; ++run) {
    json queries = json::array();
    for (int i = 0; i < batch_size; ++i) {
      queries.push_back({{"fusion", fusions[run * batch_size + i]}});
    }
    batch_bodies.push_back(json{{"target", "host"}, {"queries", queries}}.dump());
  }
  std::string batch_body = batch_bodies.front();
  // CPU time of this process (server and client), which on a loaded machine says more than
  // the wall time: the share of the cores other processes leave varies from run to run.
  auto cpu_ms = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
    return ms(usage.ru_utime) + ms(usage.ru_stime);
  };
  auto timed_batch = [&](int64_t* found, double* cpu = nullptr) {
    double cpu_before = cpu_ms();
    auto sent = Clock::now();
    Answer answer = Send(port, "POST", "/v1/query:batch", batch_body);
    // Answered when the last byte is in; the client's own parse of it is not the server's.
    double ms = std::chrono::duration<double>(Clock::now() - sent).count() * 1e3;
    if (cpu != nullptr) *cpu = cpu_ms() - cpu_before;
    *found = answer.status == 200 ? json::parse(answer.body)["found"].get<int64_t>() : -1;
    return ms;
  };
  int64_t found = 0;
  std::vector<double> colds, cold_cpus;
  for (int run = cold_runs - 1; run >= 0; --run) {  // the first set last: it stays warm
    batch_body = batch_bodies[run];
    double cpu = 0;
    colds.push_back(timed_batch(&found, &cpu));
    cold_cpus.push_back(cpu);
    if (found != batch_size) break;
  }
  double cold_ms = colds.back();
  std::vector<double> warm;
  for (int i = 0; i < 10; ++i) warm.push_back(timed_batch(&found));
  double warm_ms = Percentile(warm, 0.5);

  std::printf(
      "/v1/query cache hits, %d connections, %.1f s, closed loop (saturation): %.0f "
      "requests/s, p50 %.3f ms, p99 %.3f ms\n",
      connections, elapsed, rps, p50_ms, p99_ms);
  std::printf(
      "/v1/query cache hits, %d connections, %.1f s, open loop at %.0f requests/s offered: "
      "%.0f requests/s, p50 %.3f ms, p99 %.3f ms (from when each request was due); %lld "
      "errors in all\n",
      connections, offered.elapsed, rate, offered.rps, offered.p50_ms, offered.p99_ms,
      static_cast<long long>(errors));
  std::printf(
      "/v1/query:batch of %d fusions: cold %.1f ms (each parsed), warm %.1f ms "
      "(median of 10), %lld found\n",
      batch_size, cold_ms, warm_ms, static_cast<long long>(found));
  bool rate_met = offered.rps >= 0.98 * rate && rate >= 10000;
  if (cold_runs > 1) {
    std::string each;
    for (double ms : colds) {
      char figure[32];
      std::snprintf(figure, sizeof figure, "%s%.1f", each.empty() ? "" : ", ", ms);
      each += figure;
    }
    std::printf("cold batches (%d, in order): %s ms; median %.1f ms\n", cold_runs, each.c_str(),
                Percentile(colds, 0.5));
    each.clear();
    for (double ms : cold_cpus) {
      char figure[32];
      std::snprintf(figure, sizeof figure, "%s%.0f", each.empty() ? "" : ", ", ms);
      each += figure;
    }
    std::printf(
        "cold batches' CPU time, server and client (this process, while timed): "
        "%s ms; median %.0f ms\n",
        each.c_str(), Percentile(cold_cpus, 0.5));
  }
  std::printf(
      "goals: >= 10000 requests/s %s (saturation), p99 <= 2 ms at %.0f requests/s %s, "
      "batch <= 50 ms %s (warm), %s (cold)\n",
      rps >= 10000 ? "met" : "missed", rate, offered.p99_ms <= 2 && rate_met ? "met" : "missed",
      warm_ms <= 50 ? "met" : "missed", cold_ms <= 50 ? "met" : "missed");
  std::printf("cold 1,000-fusion batch: %.1f ms (goal <= 50 ms): %s\n", cold_ms,
              cold_ms <= 50 ? "met" : "missed");
  if (!json_path.empty()) {
    json figures{{"connections", connections},
                 {"seconds", elapsed},
                 {"requests_per_s", rps},
                 {"p50_ms", p50_ms},
                 {"p99_ms", p99_ms},
                 {"errors", errors},
                 {"offered_requests_per_s", rate},
                 {"open_loop_requests_per_s", offered.rps},
                 {"open_loop_p50_ms", offered.p50_ms},
                 {"open_loop_p99_ms", offered.p99_ms},
                 {"batch_size", batch_size},
                 {"batch_cold_ms", cold_ms},
                 {"batch_warm_ms", warm_ms},
                 {"batch_found", found}};
    tilesmith::bench::WriteOutput(json_path, figures.dump(2) + "\n", "figures");
  }
  (*server)->Stop();
  std::error_code ignored;
  if (keep) {
    std::printf("database kept at %s\n", options.db_path.c_str());
  } else {
    fs::remove_all(dir, ignored);
  }
  return errors == 0 && found == batch_size ? 0 : 1;
}
