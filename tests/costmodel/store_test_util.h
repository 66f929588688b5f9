// A results database of its own for each test: a fresh SQLite file in a temporary folder,
// removed with the folder afterwards.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "db/sqlite_store.h"

namespace tilesmith::costmodel::testing {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tilesmith_costmodel_store_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    auto store = db::SqliteStore::Open((dir_ / "s.db").string());
    ASSERT_TRUE(store.has_value()) << store.error().message;
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<db::SqliteStore> store_;
};

}  // namespace tilesmith::costmodel::testing
