// POST /v1/split on a real server: the same ranking as `tilesmith split`, the mesh inline
// or by name, and client input that can never name a file outside the configuration.
#include <gtest/gtest.h>

#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

std::string Matmul() { return ReadFile(TILESMITH_TEST_DATA_DIR "/split_matmul.hlo"); }

TEST_F(ServiceTest, SplitRanksTheSpecExampleWithItsPsum) {
  StartServer();
  json request = {{"fusion", Matmul()},
                  {"mesh", "host-4x2"},
                  {"in_specs", {"P('i','j')", "P('j',None)"}},
                  {"out_specs", {"P('i',None)"}},
                  {"top", 1}};
  Reply reply = Post("/v1/split", request);
  ASSERT_EQ(reply.status, 200) << reply.body;
  json answer = reply.Json();
  EXPECT_EQ(answer["kernel_times"], "predicted");
  EXPECT_EQ(answer["mesh"]["shape"], "(4,2) ('i','j')");
  ASSERT_EQ(answer["top"].size(), 1u);
  const json& best = answer["top"][0];
  ASSERT_EQ(best["collectives"].size(), 1u) << best;
  EXPECT_EQ(best["collectives"][0]["op"], "psum");
  EXPECT_EQ(best["collectives"][0]["axis"], "j");
  EXPECT_GT(best["total_us"].get<double>(), best["kernel_us"].get<double>());

  // The same mesh inline, with free output specs in JSON form: more strategies.
  request["mesh"] = json::parse(ReadFile(TILESMITH_SOURCE_DIR "/configs/meshes/host-4x2.json"));
  request["in_specs"] = {json::array({"i", "j"}), nullptr};
  request.erase("out_specs");
  request["top"] = 0;
  Reply inline_mesh = Post("/v1/split", request);
  ASSERT_EQ(inline_mesh.status, 200) << inline_mesh.body;
  EXPECT_GT(inline_mesh.Json()["strategies"].get<int64_t>(), 1);
  EXPECT_EQ(inline_mesh.Json()["top"].size(), inline_mesh.Json()["strategies"].get<size_t>());
}

TEST_F(ServiceTest, SplitRejectsBadMeshesAndSpecsWithTheReason) {
  StartServer();
  json request = {{"fusion", Matmul()}, {"mesh", "host-4x2"}};
  auto status_and_error = [&](const json& body) {
    Reply reply = Post("/v1/split", body);
    return std::make_pair(reply.status, reply.Json().value("error", std::string()));
  };
  json no_mesh = request;
  no_mesh.erase("mesh");
  EXPECT_EQ(status_and_error(no_mesh).first, 400);
  json escape = request;
  escape["mesh"] = "../devices/host";
  auto [escape_status, escape_error] = status_and_error(escape);
  EXPECT_EQ(escape_status, 400);
  EXPECT_NE(escape_error.find("mesh name"), std::string::npos) << escape_error;
  json unknown = request;
  unknown["mesh"] = "no_such_mesh";
  EXPECT_EQ(status_and_error(unknown).first, 400);
  json device_path = request;
  device_path["mesh"] = {
      {"name", "m"},
      {"device", "/etc/passwd"},
      {"axes", {{{"name", "i"}, {"size", 2}, {"bandwidth_gbps", 1}, {"latency_us", 1}}}}};
  EXPECT_EQ(status_and_error(device_path).first, 400);
  json bad_spec = request;
  bad_spec["in_specs"] = {"P('k')"};
  auto [spec_status, spec_error] = status_and_error(bad_spec);
  EXPECT_EQ(spec_status, 400);
  EXPECT_NE(spec_error.find("'k'"), std::string::npos) << spec_error;
  json bad_top = request;
  bad_top["top"] = "all";
  EXPECT_EQ(status_and_error(bad_top).first, 400);
  EXPECT_EQ(Get("/v1/split").status, 405);
}

}  // namespace
}  // namespace tilesmith::service::testing
