// GET /report and GET /report/{fingerprint}: the tuning report (report/report.h) served as
// HTML by a real server over the database its own tune job wrote.
#include <gtest/gtest.h>

#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

int Occurrences(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST_F(ServiceTest, ServesTheReportAsHtml) {
  StartServer();
  Reply empty = Get("/report");
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_TRUE(empty.headers["Content-Type"].starts_with("text/html"))
      << empty.headers["Content-Type"];
  EXPECT_NE(empty.body.find("No measurements match."), std::string::npos);

  std::string fingerprints[2];
  for (int variant : {0, 1}) {
    json query = {{"fusion", TinyFusion(variant)}, {"target", "host"}};
    Reply miss = Post("/v1/query", query);
    ASSERT_EQ(miss.status, 404) << miss.body;
    fingerprints[variant] = miss.Json()["fingerprint"];
    json tune = query;
    tune["budget"] = 2;
    tune["wait"] = true;
    tune["timeout_s"] = 60;
    Reply tuned = Post("/v1/tune", tune);
    ASSERT_EQ(tuned.status, 200) << tuned.body;
    EXPECT_EQ(tuned.Json()["job"]["state"], "done") << tuned.body;
  }

  Reply all = Get("/report");
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_TRUE(all.body.starts_with("<!DOCTYPE html>"));
  EXPECT_EQ(Occurrences(all.body, "<section class=\"fusion\""), 2);
  for (const std::string& fingerprint : fingerprints) {
    EXPECT_NE(all.body.find("id=\"f-" + fingerprint + "\""), std::string::npos);
  }
  EXPECT_GE(Occurrences(all.body, "<svg "), 1 + 2 * 2);
  EXPECT_EQ(all.body.find("http://"), std::string::npos);

  // One fusion, by a prefix of its fingerprint; the page names only it.
  Reply one = Get("/report/" + fingerprints[1].substr(0, 10));
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_TRUE(one.headers["Content-Type"].starts_with("text/html"));
  EXPECT_EQ(Occurrences(one.body, "<section class=\"fusion\""), 1);
  EXPECT_NE(one.body.find("id=\"f-" + fingerprints[1] + "\""), std::string::npos);
  EXPECT_EQ(one.body.find(fingerprints[0]), std::string::npos);

  EXPECT_EQ(Get("/report/" + std::string(64, '0')).status, 404);
  EXPECT_EQ(Get("/report/not-hex").status, 400);
  EXPECT_EQ(Get("/report/abc").status, 400) << "too short a prefix";
  EXPECT_EQ(Post("/report", json::object()).status, 405);
}

}  // namespace
}  // namespace tilesmith::service::testing
