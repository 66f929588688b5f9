// Malformed input of every kind gets its documented 4xx, and the server keeps serving.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

// Raw bytes to the server; returns what came back before it closed (or `wait` passed).
std::string RawExchange(int port, const std::string& bytes, double wait_s = 5) {
  net::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  boost::system::error_code error;
  net::write(socket, net::buffer(bytes), error);
  std::string received;
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  socket.non_blocking(true);
  while (std::chrono::steady_clock::now() < end) {
    char buffer[4096];
    size_t n = socket.read_some(net::buffer(buffer), error);
    if (error == net::error::would_block) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (error) break;
    received.append(buffer, n);
  }
  return received;
}

class ErrorsTest : public ServiceTest {
 protected:
  void SetUp() override { StartServer(); }
  void ExpectStillServing() {
    Reply health = Get("/healthz");
    EXPECT_EQ(health.status, 200) << "the server stopped serving";
  }
};

TEST_F(ErrorsTest, BadJsonIs400WithLineAndColumn) {
  Reply reply = Client(port()).Send("POST", "/v1/query", "{\"fusion\": \n  \"x\",, }");
  ASSERT_EQ(reply.status, 400) << reply.body;
  EXPECT_NE(reply.Json()["error"].get<std::string>().find("line 2, column"), std::string::npos)
      << reply.body;
  EXPECT_EQ(Client(port()).Send("POST", "/v1/query", "").status, 400);
  EXPECT_EQ(Client(port()).Send("POST", "/v1/query", "[1, 2]").status, 400);
  EXPECT_EQ(Client(port()).Send("POST", "/v1/query", "\"\xff\xfe\"").status, 400);
  EXPECT_EQ(Client(port()).Send("POST", "/v1/query", std::string(100000, '[')).status, 400);
  ExpectStillServing();
}

TEST_F(ErrorsTest, HloParseErrorsAre400WithTheParsersLocation) {
  Reply reply = Post("/v1/query", {{"fusion",
                                    "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                                    "  ROOT t = f32[4] tanhh(p)\n}"}});
  ASSERT_EQ(reply.status, 400) << reply.body;
  EXPECT_EQ(reply.Json()["error"], "fusion:4:19: error: unknown opcode 'tanhh'");
  EXPECT_EQ(Post("/v1/query", {{"fusion", 42}}).status, 400);
  EXPECT_EQ(Post("/v1/query", {{"target", "host"}}).status, 400) << "no fusion";
  EXPECT_EQ(Post("/v1/query", {{"fusion", "x"}, {"ascgraph", "y"}}).status, 400);
  EXPECT_EQ(Post("/v1/query", {{"fusion", std::string(5000, '(')}}).status, 400);
  EXPECT_EQ(Post("/v1/query", {{"ascgraph", "asc_node { garbage"}}).status, 400);
  EXPECT_EQ(Post("/v1/tune", {{"fusion", "ENTRY e { ROOT x = f32[2] nope() }"}}).status, 400);
  ExpectStillServing();
}

TEST_F(ErrorsTest, UnknownTargetsStrategiesAndOptionsAre400) {
  Reply reply = Post("/v1/query", {{"fusion", TinyFusion()}, {"target", "tpu:v5"}});
  ASSERT_EQ(reply.status, 400) << reply.body;
  EXPECT_NE(reply.body.find("unknown target 'tpu:v5'"), std::string::npos) << reply.body;
  EXPECT_EQ(Post("/v1/tune", {{"fusion", TinyFusion()}, {"strategy", "magic"}}).status, 400);
  EXPECT_EQ(Post("/v1/tune", {{"fusion", TinyFusion()}, {"budget", -1}}).status, 400);
  EXPECT_EQ(Post("/v1/tune", {{"fusion", TinyFusion()}, {"free_layouts", "out7"}}).status, 400);
  EXPECT_EQ(Post("/v1/tune", {{"fusion", TinyFusion()}, {"wait", "yes"}}).status, 400);
  EXPECT_EQ(Post("/v1/tune", {{"fusion", TinyFusion()}, {"timeout_s", 1e9}}).status, 400);
  ExpectStillServing();
}

TEST_F(ErrorsTest, ASearchSpaceOverTheCapIs422) {
  // The tiny fusion has 72 configs, 216 with its output layout free; the test cap is 100.
  Reply reply = Post("/v1/tune", {{"fusion", TinyFusion()}, {"free_layouts", {"out0"}}});
  ASSERT_EQ(reply.status, 422) << reply.body;
  EXPECT_NE(reply.body.find("216 configs"), std::string::npos) << reply.body;
  // A tensor too large to tune here is refused before any job exists.
  std::string huge = TinyFusion();
  for (size_t at = huge.find("[16,64]"); at != std::string::npos; at = huge.find("[16,64]")) {
    huge.replace(at, 7, "[65536,65536]");
  }
  reply = Post("/v1/tune", {{"fusion", huge}});
  ASSERT_EQ(reply.status, 422) << reply.body;
  EXPECT_NE(reply.body.find("4294967296 elements"), std::string::npos) << reply.body;
  EXPECT_EQ(Post("/v1/query", {{"fusion", huge}}).status, 404) << "queries are not limited";
  ExpectStillServing();
}

TEST_F(ErrorsTest, RoutesAndMethods) {
  EXPECT_EQ(Get("/v2/query").status, 404);
  EXPECT_EQ(Get("/v1/jobs/not-a-job").status, 404);
  EXPECT_EQ(Get("/v1/jobs/" + std::string(32, 'a')).status, 404);
  EXPECT_EQ(Delete("/v1/jobs/" + std::string(32, 'a')).status, 404);
  Reply wrong = Get("/v1/query");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.headers["Allow"], "POST");
  EXPECT_EQ(Client(port()).Send("PUT", "/v1/jobs/" + std::string(32, 'a')).status, 405);
  EXPECT_EQ(Client(port()).Send("POST", "/healthz", "{}").status, 405);
  EXPECT_EQ(Get("/v1/kernels?target=%zz").status, 400) << "bad percent-encoding";
  ExpectStillServing();
}

TEST_F(ErrorsTest, BodiesOverTheLimitAre413) {
  std::string body = "{\"fusion\": \"" + std::string(2u << 20, 'x') + "\"}";
  std::string request =
      "POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  std::string answer = RawExchange(port(), request);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 413")) << answer.substr(0, 200);
  // Chunked bodies are counted too.
  std::string chunked = "POST /v1/query HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 40; ++i) chunked += "10000\r\n" + std::string(0x10000, 'y') + "\r\n";
  chunked += "0\r\n\r\n";
  answer = RawExchange(port(), chunked);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 413")) << answer.substr(0, 200);
  ExpectStillServing();
}

TEST_F(ErrorsTest, GarbageAndSlowClientsAreCutOff) {
  std::string answer = RawExchange(port(), "HELLO THERE\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 400")) << answer;
  // A client that sends half a request and stalls is closed after the read timeout (1 s).
  auto start = std::chrono::steady_clock::now();
  answer = RawExchange(port(), "POST /v1/query HTTP/1.1\r\nContent-Length: 100\r\n\r\n{", 10);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5) << "the connection was held open";
  EXPECT_EQ(answer.find("200 OK"), std::string::npos);
  ExpectStillServing();
}

TEST_F(ErrorsTest, ExpectContinueIsAnsweredBeforeTheBody) {
  std::string body = json{{"fusion", TinyFusion(30)}}.dump();
  net::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port()));
  net::write(socket, net::buffer("POST /v1/query HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                                 "Content-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n"));
  std::string interim(25, '\0');
  net::read(socket, net::buffer(interim));
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  net::write(socket, net::buffer(body));
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  EXPECT_EQ(response.result_int(), 404u) << response.body();
  ExpectStillServing();
}

TEST_F(ErrorsTest, MutatedRequestsNeverStopTheServer) {
  std::mt19937 random(7);
  std::string valid = json{{"fusion", TinyFusion(40)}, {"target", "host"}}.dump();
  auto mutate = [&](std::string text) {
    int edits = 1 + static_cast<int>(random() % 8);
    for (int i = 0; i < edits && !text.empty(); ++i) {
      size_t at = random() % text.size();
      switch (random() % 4) {
        case 0:
          text[at] = static_cast<char>(random() % 256);
          break;
        case 1:
          text.erase(at, 1 + random() % 16);
          break;
        case 2:
          text.insert(at, std::string(1 + random() % 4, "{[(\"\\,:}])"[random() % 11]));
          break;
        default:
          text.resize(at);
      }
    }
    return text;
  };
  // Bodies that reach the JSON, HLO and AscGraph readers through well-formed HTTP.
  std::map<int, int> statuses;
  Client client(port());
  for (int i = 0; i < 300; ++i) {
    std::string body = mutate(valid);
    std::string target = i % 3 == 0 ? "/v1/query:batch" : (i % 3 == 1 ? "/v1/query" : "/v1/tune");
    if (i % 3 == 0) body = "{\"queries\": [" + body + "]}";
    Reply reply = client.Send("POST", target, body);
    ++statuses[reply.status];
    EXPECT_LT(reply.status, 500) << body;
  }
  // Broken HTTP itself.
  std::string request =
      "POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(valid.size()) +
      "\r\n\r\n" + valid;
  for (int i = 0; i < 60; ++i) RawExchange(port(), mutate(request), 0.05);
  ExpectStillServing();
  EXPECT_EQ(Post("/v1/query", json::parse(valid)).status, 404) << "answers as before";
  EXPECT_GT(statuses[400], 100);
}

using TokenTest = ServiceTest;

TEST_F(TokenTest, ABearerTokenIsRequiredWhenConfigured) {
  ServerOptions options = Options();
  options.token = "s3cret-token";
  StartServer(options);
  EXPECT_EQ(Get("/healthz").status, 200) << "health needs no token";
  Reply denied = Get("/v1/devices");
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.headers["WWW-Authenticate"], "Bearer");
  auto devices = [&](const std::string& authorization) {
    return Client(port()).Send("GET", "/v1/devices", "", {{"Authorization", authorization}});
  };
  EXPECT_EQ(devices("Bearer wrong").status, 401);
  EXPECT_EQ(devices("Bearer s3cret-token").status, 200);
  EXPECT_EQ(devices("s3cret-token").status, 401) << "the Bearer scheme is required";
  EXPECT_EQ(devices("Bearer s3cret-tokem").status, 401);
  EXPECT_EQ(devices("Bearer ").status, 401);
  EXPECT_EQ(Get("/metrics").status, 401);
}

}  // namespace
}  // namespace tilesmith::service::testing
