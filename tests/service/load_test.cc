// A bounded load test on loopback: 64 concurrent keep-alive connections asking
// /v1/query for a tuned fusion (cache hits) for two seconds; every answer must be right.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

TEST_F(ServiceTest, SixtyFourConnectionsOfCacheHits) {
  StartServer();
  json tune = {{"fusion", TinyFusion(11)}, {"budget", 2}, {"wait", true}};
  Reply tuned = Post("/v1/tune", tune);
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  std::string expected = tuned.Json()["job"]["result"]["best"]["config"].dump();
  std::string body = json{{"fusion", TinyFusion(11)}, {"target", "host"}}.dump();

  constexpr int kConnections = 64;
  constexpr double kSeconds = 2.0;
  std::atomic<int64_t> ok = 0, wrong = 0;
  std::vector<std::vector<double>> latencies(kConnections);
  std::vector<std::thread> clients;
  auto start = std::chrono::steady_clock::now();
  auto end = start + std::chrono::duration<double>(kSeconds);
  for (int i = 0; i < kConnections; ++i) {
    clients.emplace_back([&, i] {
      try {
        Client client(port());
        while (std::chrono::steady_clock::now() < end) {
          auto sent = std::chrono::steady_clock::now();
          Reply reply = client.Send("POST", "/v1/query", body);
          latencies[i].push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count());
          bool right = reply.status == 200 && reply.Json()["config"].dump() == expected;
          ++(right ? ok : wrong);
        }
      } catch (const std::exception& error) {
        ++wrong;
        ADD_FAILURE() << "connection " << i << ": " << error.what();
      }
    });
  }
  for (std::thread& client : clients) client.join();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (const auto& each : latencies) all.insert(all.end(), each.begin(), each.end());
  std::sort(all.begin(), all.end());
  ASSERT_FALSE(all.empty());
  double p50 = all[all.size() / 2] * 1000, p99 = all[all.size() * 99 / 100] * 1000;
  std::cout << "load: " << ok << " cache hits over " << kConnections << " connections in "
            << elapsed << " s = " << ok / elapsed << " requests/s; p50 " << p50 << " ms, p99 "
            << p99 << " ms (client and server share this machine)\n";
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(ok, 1000) << "under 500 cache hits per second";
  EXPECT_LT(elapsed, 5.0);
  EXPECT_EQ(Get("/healthz").status, 200);
}

}  // namespace
}  // namespace tilesmith::service::testing
