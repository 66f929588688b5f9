// Shared pieces of the service tests: a temp dir, a real server on an ephemeral loopback
// port over a real SQLite file, and a real HTTP client (Boost.Beast, synchronous).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "service/server.h"
#include "tests/db/db_test_util.h"

namespace tilesmith::service::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;

using db::testing::TempDir;

/// One answer as the client saw it.
struct Reply {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
  json Json() const {
    json parsed = json::parse(body, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << "not JSON: " << body;
    return parsed;
  }
};

/// A keep-alive HTTP/1.1 connection to 127.0.0.1:`port`.
class Client {
 public:
  explicit Client(int port) : stream_(io_) {
    stream_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  }
  Reply Send(const std::string& method, const std::string& target, const std::string& body = "",
             const std::map<std::string, std::string>& headers = {}) {
    http::request<http::string_body> request(http::string_to_verb(method), target, 11);
    request.set(http::field::host, "127.0.0.1");
    if (!body.empty()) request.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = body;
    request.prepare_payload();
    stream_.expires_after(std::chrono::seconds(120));
    http::write(stream_, request);
    http::response_parser<http::string_body> parser;
    parser.body_limit(1u << 30);
    parser.skip(method == "HEAD");  // an answer to HEAD has no body, whatever its length says
    http::read(stream_, buffer_, parser);
    Reply reply;
    reply.status = static_cast<int>(parser.get().result_int());
    reply.body = parser.get().body();
    for (const auto& field : parser.get()) {
      reply.headers[std::string(field.name_string())] = std::string(field.value());
    }
    return reply;
  }

 private:
  net::io_context io_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

/// A tiny elementwise loop fusion; `variant` changes a constant, hence the fingerprint.
inline std::string TinyFusion(int variant = 0) {
  std::string constant = std::to_string(1.5 + variant);
  return "HloModule tiny_" + std::to_string(variant) +
         "\n\ntiny {\n  p = f32[16,64] parameter(0)\n  c = f32[] constant(" + constant +
         ")\n  b = f32[16,64] broadcast(c), dimensions={}\n  a = f32[16,64] add(p, b)\n"
         "  ROOT e = f32[16,64] exponential(a)\n}\n\nENTRY main {\n"
         "  p = f32[16,64] parameter(0)\n"
         "  ROOT fusion = f32[16,64] fusion(p), kind=kLoop, calls=tiny\n}\n";
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// Polls `done` every 20 ms for up to `seconds`; true once it held.
inline bool WaitFor(const std::function<bool()>& done, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

/// A test with a real server over a database in its own temp dir.
class ServiceTest : public ::testing::Test {
 protected:
  ServerOptions Options() const {
    ServerOptions options;
    options.port = 0;
    options.db_path = dir_.File("data/tilesmith.db");
    options.worker_binary = TILESMITH_CLI;
    options.compile_threads = 1;
    options.batch_size = 2;
    options.measure.warmup_ms = 1;
    options.measure.budget_ms = 2;
    options.body_limit = 1u << 20;
    options.read_timeout_s = 1;
    options.max_space = 100;
    return options;
  }
  void StartServer(const ServerOptions& options) {
    auto server = Server::Start(options);
    ASSERT_TRUE(server.has_value()) << server.error().message;
    server_ = std::move(*server);
  }
  void StartServer() { StartServer(Options()); }
  void StopServer() {
    if (server_) server_->Stop();
    server_.reset();
  }
  int port() const { return server_->port(); }

  Reply Get(const std::string& target) { return Client(port()).Send("GET", target); }
  Reply Delete(const std::string& target) { return Client(port()).Send("DELETE", target); }
  Reply Post(const std::string& target, const json& body) {
    return Client(port()).Send("POST", target, body.dump());
  }
  /// Polls GET /v1/jobs/{id} until `done(job)` holds; the last job seen.
  json WaitForJob(const std::string& id, const std::function<bool(const json&)>& done,
                  double seconds = 60) {
    json job;
    WaitFor(
        [&] {
          job = Get("/v1/jobs/" + id).Json();
          return done(job);
        },
        seconds);
    return job;
  }

  TempDir dir_;
  std::unique_ptr<Server> server_;
};

}  // namespace tilesmith::service::testing
