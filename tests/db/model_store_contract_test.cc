// Stored cost models (schema version 3): written and read back byte for byte, the newest
// answering for its exact key, bad records refused, and a version-2 file migrated with its
// results kept.
#include <gtest/gtest.h>

#include "db/schema.h"
#include "tests/db/db_test_util.h"

namespace tilesmith::db::testing {
namespace {

ModelRecord Model(const std::string& data, const std::string& compiler = "tilesmith-test-1",
                  int64_t schema = 1) {
  ModelRecord model;
  model.name = "learned-xgboost";
  model.device_key = Host().Key();
  model.compiler_version = compiler;
  model.feature_schema = schema;
  model.format = "xgboost-json";
  model.data = data;
  model.training_rows = 240;
  model.fusions = 6;
  model.meta = {{"objective", "reg:squarederror"}};
  return model;
}

TEST(ModelsTest, AModelRoundTripsAndTheNewestAnswersForItsKey) {
  TempDir dir;
  auto store = OpenStore(dir.File("models.db"));
  ASSERT_NE(store, nullptr);
  auto none = store->LatestModel("learned-xgboost", Host().Key(), "tilesmith-test-1", 1);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());

  std::string big(200000, 'x');
  big[1000] = '"';  // arbitrary text survives
  auto first = store->PutModel(Model("{\"learner\":1}"));
  auto second = store->PutModel(Model(big));
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_GT(*second, *first);
  ASSERT_TRUE(store->PutModel(Model("{\"other\":1}", "tilesmith-older")).has_value());
  ASSERT_TRUE(store->PutModel(Model("{\"schema\":2}", "tilesmith-test-1", 2)).has_value());

  auto latest = store->LatestModel("learned-xgboost", Host().Key(), "tilesmith-test-1", 1);
  ASSERT_TRUE(latest.has_value() && latest->has_value());
  const ModelRecord& model = **latest;
  EXPECT_EQ(model.id, *second);
  EXPECT_EQ(model.data, big);
  EXPECT_EQ(model.training_rows, 240);
  EXPECT_EQ(model.fusions, 6);
  EXPECT_EQ(model.meta["objective"], "reg:squarederror");
  EXPECT_FALSE(model.created_at.empty());
  EXPECT_EQ((*store->LatestModel("learned-xgboost", Host().Key(), "tilesmith-test-1", 2))->data,
            "{\"schema\":2}");
  EXPECT_FALSE(
      store->LatestModel("learned-xgboost", H100().Key(), "tilesmith-test-1", 1)->has_value());
}

TEST(ModelsTest, IncompleteModelsAreRefusedNamingTheField) {
  TempDir dir;
  auto store = OpenStore(dir.File("models.db"));
  ModelRecord empty = Model("");
  auto refused = store->PutModel(empty);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("empty model data"), std::string::npos);
  ModelRecord no_device = Model("{}");
  no_device.device_key.clear();
  EXPECT_FALSE(store->PutModel(no_device).has_value());
  ModelRecord no_schema = Model("{}", "tilesmith-test-1", 0);
  EXPECT_FALSE(store->PutModel(no_schema).has_value());
}

TEST(ModelsTest, AVersionTwoFileGainsTheModelsTableAndKeepsItsResults) {
  TempDir dir;
  std::string path = dir.File("v2.db");
  KernelRecord gelu = Kernel("gelu");
  {
    auto connection = sqlite::Connection::Open(path, sqlite::OpenMode::kCreate, 1000);
    ASSERT_TRUE(connection.has_value());
    ASSERT_TRUE(Migrate(**connection, Migrations().first(2)).has_value());
    EXPECT_EQ(*ReadSchemaVersion(**connection), 2);
    EXPECT_EQ(*(*connection)->QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'models'"),
              0);
  }
  {
    // A result written by version-2 code, row by row as it wrote them.
    auto connection = sqlite::Connection::Open(path, sqlite::OpenMode::kReadWrite, 1000);
    ASSERT_TRUE(connection.has_value());
    std::string hash(64, 'a');
    ASSERT_TRUE((*connection)
                    ->Execute("INSERT INTO devices VALUES ('" + Host().Key() +
                              "', 'host', 'host', 'cpu', 16, 2450, 40, 33554432, '', 'llvm');"
                              "INSERT INTO kernels VALUES ('" +
                              gelu.fingerprint + "', 'hlo', 'gelu', 'text', '2024-01-01');" +
                              "INSERT INTO configs VALUES ('" + gelu.fingerprint + "', '" + hash +
                              "', 'loop', '{\"v\":1}');" +
                              "INSERT INTO measurements (uid, fingerprint, config_hash, "
                              "device_key, compiler_version, status, median_us, measured_at) "
                              "VALUES ('u1', '" +
                              gelu.fingerprint + "', '" + hash + "', '" + Host().Key() +
                              "', 'tilesmith-test-1', 'ok', 3.0, '2024-01-01T00:00:00.000Z');")
                    .has_value());
  }
  auto store = OpenStore(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Stats()->schema_version, kSchemaVersion);
  auto best = store->ListBest({});
  ASSERT_TRUE(best.has_value());
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].measurement.timing->median_us, 3.0);
  ASSERT_TRUE(store->PutModel(Model("{}")).has_value());
  EXPECT_TRUE((*store->LatestModel("learned-xgboost", Host().Key(), "tilesmith-test-1", 1)));
}

}  // namespace
}  // namespace tilesmith::db::testing
