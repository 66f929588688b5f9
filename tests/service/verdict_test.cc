// The noise-aware verdict in /v1/query answers, on a real server over a real SQLite file: a
// tuned key answers with its speedup's interval and whether it is significant (the default
// when its best was within noise), and a key tuned before verdicts were kept still answers,
// saying its verdict is unknown.
#include <gtest/gtest.h>

#include "db/sqlite_connection.h"
#include "db/sqlite_store.h"
#include "service_test_util.h"

namespace tilesmith::service::testing {
namespace {

json Query() { return {{"fusion", TinyFusion(3)}, {"target", "host"}}; }

TEST_F(ServiceTest, AMeasuredAnswerCarriesItsVerdictAndOldKeysSayItIsUnknown) {
  StartServer();
  json tune = Query();
  tune["budget"] = 4;
  tune["wait"] = true;
  tune["timeout_s"] = 120;
  Reply tuned = Post("/v1/tune", tune);
  ASSERT_EQ(tuned.status, 200) << tuned.body;
  json result = tuned.Json()["job"]["result"];
  ASSERT_TRUE(result["verdict"].is_object()) << result.dump(2);

  Reply hit = Post("/v1/query", Query());
  ASSERT_EQ(hit.status, 200) << hit.body;
  json answer = hit.Json();
  EXPECT_EQ(answer["source"], "measured");
  ASSERT_EQ(answer["verdict"]["status"], "confirmed") << answer.dump(2);
  ASSERT_TRUE(answer["significant"].is_boolean());
  EXPECT_EQ(answer["significant"], result["verdict"]["significant"]);
  EXPECT_EQ(answer["confidence"], 0.95);
  EXPECT_EQ(answer["speedup"], result["speedup"]);
  EXPECT_LE(answer["speedup_low"].get<double>(), answer["speedup_high"].get<double>());
  EXPECT_EQ(answer["verdict"]["rounds"], result["verdict"]["rounds"]);
  EXPECT_EQ(answer["verdict"]["reason"], result["verdict"]["reason"]);
  // The service answers with the config the tune reported.
  EXPECT_EQ(answer["config"], result["best"]["config"]);
  if (answer["significant"] == false) {
    EXPECT_EQ(answer["speedup"], 1.0);
    EXPECT_EQ(answer["is_default"], true);
    EXPECT_EQ(answer["config"], result["default"]["config"]);
  }
  // The best_results view still names the search's winner; the answer keeps it beside.
  auto store = db::SqliteStore::Open(Options().db_path);
  ASSERT_TRUE(store.has_value());
  auto best = (*store)->Best({answer["fingerprint"], answer["device"], answer["compiler_version"]});
  ASSERT_TRUE(best.has_value() && best->has_value());
  if ((*best)->measurement.config != answer["config"]) {
    EXPECT_EQ(answer["searched_best"]["config"], (*best)->measurement.config);
  } else {
    EXPECT_FALSE(answer.contains("searched_best"));
  }
  store->reset();

  // A key tuned before verdicts were kept: its trials stay, its verdict rows are not there.
  StopServer();
  {
    auto connection =
        db::sqlite::Connection::Open(Options().db_path, db::sqlite::OpenMode::kReadWrite, 1000);
    ASSERT_TRUE(connection.has_value()) << connection.error().message;
    ASSERT_TRUE((*connection)->Execute("DELETE FROM verdicts").has_value());
  }
  StartServer();
  Reply old = Post("/v1/query", Query());
  ASSERT_EQ(old.status, 200) << old.body;
  json unknown = old.Json();
  EXPECT_EQ(unknown["verdict"]["status"], "unknown");
  EXPECT_FALSE(unknown["verdict"]["reason"].get<std::string>().empty());
  EXPECT_TRUE(unknown["significant"].is_null());
  EXPECT_EQ(unknown["config"], (*best)->measurement.config);
  EXPECT_GT(unknown["median_us"].get<double>(), 0);
}

}  // namespace
}  // namespace tilesmith::service::testing
