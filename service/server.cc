#include "service/server.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <filesystem>
#include <optional>
#include <thread>

#include "db/open_store.h"
#include "db/work_lock.h"
#include "service/agent.h"
#include "service/api.h"
#include "service/jobs.h"
#include "service/metrics.h"
#include "support/log.h"
#include "tuner/device.h"

namespace tilesmith::service {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Server::State {
  std::atomic<int> connections = 0;  // first: outlives the connections `io` destroys
  ServerOptions options;
  net::io_context io{2};
  tcp::acceptor acceptor{io};
  std::vector<std::thread> threads;
  std::unique_ptr<db::Store> writer;  // the job threads' (the tuner writes here)
  std::unique_ptr<db::Store> reader;  // the HTTP threads'
  Metrics metrics;
  std::unique_ptr<JobManager> jobs;
  std::unique_ptr<Api> api;
  // Requests that parse or read much (large bodies, batches, splits, listings, reports)
  // are answered here, never on the I/O threads, so /healthz and cached queries stay fast
  // while they run.
  net::thread_pool heavy{2};
  std::atomic<bool> stopped = false;
  int port = 0;
  std::atomic<bool> agent_stop = false;
  std::thread agent;  // claims fleet work units when options.run_agent

  void Accept();
};

namespace {

constexpr int kMaxConnections = 4096;
// Bodies larger than this are parsed off the I/O threads (a cached query is far smaller).
constexpr size_t kHeavyBodyBytes = 64 * 1024;
// After answering a body this large, memory the allocator keeps is handed back to the system.
constexpr size_t kTrimAfterBytes = 4 << 20;

// Large bodies, and routes whose work grows with the request or the whole database:
// batches, splits, the kernel listing and the HTML report.
bool IsHeavy(const HttpRequest& request) {
  return request.body.size() > kHeavyBodyBytes || request.path == "/v1/query:batch" ||
         request.path == "/v1/split" || request.path == "/v1/kernels" ||
         request.path.starts_with("/report");
}
constexpr auto kWriteTimeout = std::chrono::seconds(30);
constexpr auto kLingerTimeout = std::chrono::seconds(5);

std::string SelfPath() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return length > 0 ? std::string(path, length) : "tilesmith";
}

// One client connection: reads requests (each within the read timeout, bodies within the
// limit), hands them to the Api and writes the answers in order. Keep-alive is honoured.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, Server::State& state) : stream_(std::move(socket)), state_(state) {
    ++state_.connections;
  }
  ~Connection() { --state_.connections; }

  void Start() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&Connection::Read, shared_from_this()));
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->body_limit(state_.options.body_limit);
    parser_->header_limit(64 * 1024);
    stream_.expires_after(
        std::chrono::milliseconds(static_cast<int64_t>(state_.options.read_timeout_s * 1000)));
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Connection::OnHeader, shared_from_this()));
  }

  // Answers `Expect: 100-continue` (curl sends it for bodies over 1 KiB and would otherwise
  // wait a second), then reads the body; the read timeout covers the whole request.
  void OnHeader(beast::error_code error, size_t bytes) {
    if (error) return OnRead(error, bytes);
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      auto proceed = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                        parser_->get().version());
      return http::async_write(
          stream_, *proceed, [self = shared_from_this(), proceed](beast::error_code error, size_t) {
            if (error) return self->Close();
            self->ReadBody();
          });
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Connection::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code error, size_t) {
    if (error == http::error::end_of_stream || error == beast::error::timeout ||
        error == net::error::operation_aborted) {
      return Close();  // a timed-out stream is already closed by Beast
    }
    if (error == http::error::body_limit) {
      return Write(ErrorResponse(413, "the request body is over the limit of " +
                                          std::to_string(state_.options.body_limit) + " bytes"),
                   true);
    }
    if (error == http::error::header_limit) {
      return Write(ErrorResponse(431, "the request headers are too large"), true);
    }
    if (error) {
      if (!parser_->got_some()) return Close();
      return Write(ErrorResponse(400, "malformed HTTP request: " + error.message()), true);
    }
    http::request<http::string_body>& message = parser_->get();
    version_ = message.version();
    keep_alive_ = message.keep_alive();
    head_ = message.method() == http::verb::head;
    HttpRequest request;
    request.method = std::string(message.method_string());
    if (!SplitTarget(message.target(), &request.path, &request.query)) {
      return Write(ErrorResponse(400, "malformed percent-encoding in the request target"), true);
    }
    request.authorization = std::string(message[http::field::authorization]);
    request.body = std::move(message.body());
    stream_.expires_never();
    auto self = shared_from_this();
    auto reply = [self](HttpResponse response) {
      // Inline when answered on this connection's strand, else queued onto it.
      net::dispatch(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
        self->Write(std::move(response), false);
      });
    };
    if (!IsHeavy(request)) return state_.api->Handle(request, std::move(reply));
    net::post(state_.heavy, [self, request = std::move(request), reply = std::move(reply)] {
      self->state_.api->Handle(request, reply);
      if (request.body.size() > kTrimAfterBytes) malloc_trim(0);
    });
  }

  void Write(HttpResponse response, bool close) {
    auto message = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), version_ ? version_ : 11);
    message->set(http::field::server, "tilesmith");
    message->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) message->set(name, value);
    message->body() = std::move(response.body);
    message->keep_alive(keep_alive_ && !close && !response.close);
    message->prepare_payload();
    if (head_) message->body().clear();  // HEAD: the GET answer's headers, no body
    head_ = false;
    stream_.expires_after(kWriteTimeout);
    http::async_write(stream_, *message,
                      [self = shared_from_this(), message](beast::error_code error, size_t) {
                        if (error) return self->Close();
                        if (!message->keep_alive()) return self->LingeringClose();
                        self->Read();
                      });
  }

  // Half-closes and drains what the client still sends (the rest of a refused body), so
  // it reads the answer instead of a reset; then closes.
  void LingeringClose() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTimeout);
    Drain();
  }

  void Drain() {
    stream_.async_read_some(net::buffer(drain_),
                            [self = shared_from_this()](beast::error_code error, size_t) {
                              if (error) return self->Close();
                              self->Drain();
                            });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  Server::State& state_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::array<char, 16384> drain_;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool head_ = false;  // the request being answered is a HEAD
};

}  // namespace

void Server::State::Accept() {
  acceptor.async_accept(net::make_strand(io), [this](beast::error_code error, tcp::socket socket) {
    if (error == net::error::operation_aborted || !acceptor.is_open()) return;
    if (!error) {
      if (connections >= kMaxConnections) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        std::make_shared<Connection>(std::move(socket), *this)->Start();
      }
    }
    Accept();
  });
}

Expected<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  namespace fs = std::filesystem;
  if (options.db_path.empty()) return InvalidArgument("no database path");
  if (options.port < 0 || options.port > 65535) {
    return InvalidArgument("port " + std::to_string(options.port) + " is not in 0..65535");
  }
  if (options.worker_binary.empty()) options.worker_binary = SelfPath();
  if (options.devices_dir.empty()) options.devices_dir = tuner::DefaultDevicesDir();
  if (options.compiler_version.empty()) options.compiler_version = TILESMITH_COMPILER_VERSION;
  if (options.data_dir.empty() && db::IsPostgresLocation(options.db_path)) {
    options.data_dir = "tilesmith-data";
  } else if (options.data_dir.empty()) {
    fs::path parent = fs::path(options.db_path).parent_path();
    options.data_dir = parent.empty() ? "." : parent.string();
  }
  std::error_code fs_error;
  fs::create_directories(options.data_dir, fs_error);
  if (fs_error) {
    return MakeError(ErrorCode::kIo, "cannot create data directory " + options.data_dir + ": " +
                                         fs_error.message());
  }
  TS_ASSIGN_OR_RETURN(std::vector<ServedTarget> targets,
                      ResolveTargets(options.targets, options.devices_dir));

  auto state = std::make_unique<State>();
  State& s = *state;
  s.options = options;
  TS_ASSIGN_OR_RETURN(s.writer, db::OpenStore(options.db_path));
  TS_ASSIGN_OR_RETURN(s.reader, db::OpenStore(options.db_path, db::StoreAccess::kReadWrite));

  JobEnvironment environment{options.data_dir,         options.worker_binary,
                             options.compiler_version, options.compile_threads,
                             options.batch_size,       options.measure};
  auto invalidate = [&s](const db::ResultKey& key) {
    if (s.api) s.api->Invalidate(key);
  };
  s.jobs = options.queue_jobs
               ? MakeQueuedJobManager(*s.writer, environment, targets, invalidate)
               : MakeLocalJobManager(*s.writer, environment, targets, s.metrics, invalidate);
  ApiOptions api_options{.compiler_version = options.compiler_version,
                         .token = options.token,
                         .db_path = options.db_path,
                         .max_batch = options.max_batch,
                         .max_space = options.max_space,
                         .max_instructions = options.max_instructions,
                         .cache_ttl_s = options.cache_ttl_s};
  s.api = std::make_unique<Api>(
      api_options, targets, *s.reader, *s.jobs, s.metrics,
      [&s](double seconds, std::function<void()> work) {
        auto timer = std::make_shared<net::steady_timer>(
            s.io, std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
        timer->async_wait([timer, work](beast::error_code error) {
          if (!error) work();
        });
      },
      [path = options.db_path]() -> Expected<std::unique_ptr<db::Store>> {
        return db::OpenStore(path, db::StoreAccess::kReadWrite);
      });

  beast::error_code error;
  net::ip::address address = net::ip::make_address(options.bind, error);
  if (error) return InvalidArgument("--bind: '" + options.bind + "' is not an IP address");
  tcp::endpoint endpoint(address, static_cast<uint16_t>(options.port));
  std::string where = options.bind + ":" + std::to_string(options.port);
  s.acceptor.open(endpoint.protocol(), error);
  if (!error) s.acceptor.set_option(net::socket_base::reuse_address(true), error);
  if (!error) s.acceptor.bind(endpoint, error);
  if (!error) s.acceptor.listen(net::socket_base::max_listen_connections, error);
  if (error) return MakeError(ErrorCode::kIo, "cannot listen on " + where + ": " + error.message());
  s.port = s.acceptor.local_endpoint().port();

  TS_RETURN_IF_ERROR(s.jobs->Start());
  bool can_tune = std::any_of(targets.begin(), targets.end(),
                              [](const ServedTarget& target) { return target.can_tune; });
  if (options.run_agent && can_tune) {
    AgentOptions agent;
    agent.name = db::ProcessOwnerName("serve");
    agent.targets = targets;
    agent.worker_binary = options.worker_binary;
    agent.data_dir = options.data_dir;
    agent.compiler_version = options.compiler_version;
    agent.lease_ms = static_cast<int64_t>(options.agent_lease_s * 1000);
    agent.compile_threads = options.compile_threads;
    agent.log = [](const std::string& line) { TS_LOG(kInfo) << line; };
    agent.on_commit = [&s](const db::ResultKey& key) {
      if (s.api) s.api->Invalidate(key);
    };
    s.agent = std::thread([&s, agent] {
      auto stats = RunAgent(s.options.db_path, agent, s.agent_stop);
      if (!stats) {
        TS_LOG(kError) << "the server's agent stopped: " << stats.error().message;
      }
    });
  }
  s.Accept();
  for (int i = 0; i < std::max(1, options.http_threads); ++i) {
    s.threads.emplace_back([&s] { s.io.run(); });
  }
  TS_LOG(kInfo) << "serving on http://" << options.bind << ":" << s.port << " (database "
                << db::DescribeLocation(options.db_path) << ")";
  return std::unique_ptr<Server>(new Server(std::move(state)));
}

Server::Server(std::unique_ptr<State> state) : state_(std::move(state)) {}

Server::~Server() { Stop(); }

int Server::port() const { return state_->port; }

std::string Server::url() const {
  return "http://" + state_->options.bind + ":" + std::to_string(state_->port);
}

void Server::Stop() {
  State& s = *state_;
  if (s.stopped.exchange(true)) return;
  net::post(s.acceptor.get_executor(), [&s] {
    beast::error_code ignored;
    s.acceptor.close(ignored);
  });
  s.jobs->Stop();       // running jobs commit what they measured and are queued again
  s.agent_stop = true;  // a unit in progress goes to another agent when its lease expires
  if (s.agent.joinable()) s.agent.join();
  s.heavy.stop();  // requests not yet started are dropped with their connections
  s.heavy.join();
  s.io.stop();
  for (std::thread& thread : s.threads) thread.join();
  s.threads.clear();
  TS_LOG(kInfo) << "stopped serving on port " << s.port;
}

}  // namespace tilesmith::service
