// Stored cost models on every store (store_factories.h): written and read back byte for
// byte, the newest answering for its exact key, bad records refused.
#include <gtest/gtest.h>

#include "tests/db/store_factories.h"

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

class ModelStoreContract : public StoreContractTest {};

TEST_P(ModelStoreContract, AModelRoundTripsAndTheNewestAnswersForItsKey) {
  Store* store = NewStore();
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

TEST_P(ModelStoreContract, IncompleteModelsAreRefusedNamingTheField) {
  Store* store = NewStore();
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

INSTANTIATE_TEST_SUITE_P(Stores, ModelStoreContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db::testing
