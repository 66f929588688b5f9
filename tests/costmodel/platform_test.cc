// Platform descriptions: the shipped 910B files, custom files, and the errors for bad ones.
#include "costmodel/ascend/platform.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace tilesmith::costmodel::ascend {
namespace {

const std::string kDevices = std::string(TILESMITH_SOURCE_DIR) + "/configs/devices";

TEST(PlatformTest, ShippedFilesCarryThePublicNumbers) {
  for (const std::string& name : KnownPlatformNames()) {
    auto platform = LoadPlatform(name, kDevices);
    ASSERT_TRUE(platform) << platform.error().message;
    EXPECT_EQ(platform->name, name);
    // Spec: 48 vector cores on 910B1/B2, 40 on 910B3/B4; 196,352 bytes of UB usable.
    EXPECT_EQ(platform->vector_cores, name <= "910b2" ? 48 : 40) << name;
    EXPECT_EQ(platform->ub_bytes, 196352) << name;
  }
  EXPECT_EQ(KnownPlatformNames().size(), 4u);
}

TEST(PlatformTest, NamesAreForgiving) {
  for (const char* spelling : {"910B3", "ascend:910b3", "Ascend910B3", "ascend_910b3"}) {
    auto platform = LoadPlatform(spelling, kDevices);
    ASSERT_TRUE(platform) << spelling << ": " << platform.error().message;
    EXPECT_EQ(platform->vector_cores, 40) << spelling;
  }
}

TEST(PlatformTest, CustomFilesAndTheirErrors) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ts_platform_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream((dir / name).string()) << text;
    return (dir / name).string();
  };
  auto custom =
      LoadPlatform(write("half.json", R"({"vector_cores": 24, "ub_bytes": 98304})"), kDevices);
  ASSERT_TRUE(custom) << custom.error().message;
  EXPECT_EQ(custom->name, "half");  // the file's stem when the file has no name
  EXPECT_EQ(custom->vector_cores, 24);
  EXPECT_EQ(custom->ub_bytes, 98304);

  struct Bad {
    const char* text;
    const char* says;
  };
  for (const Bad& bad :
       {Bad{R"({"ub_bytes": 98304})", "missing 'vector_cores'"},
        Bad{R"({"vector_cores": 0, "ub_bytes": 98304})", "'vector_cores' is 0"},
        Bad{R"({"vector_cores": 4, "ub_bytes": 192})", "'ub_bytes' is 192"},
        Bad{R"({"vector_cores": "48", "ub_bytes": 98304})", "must be an integer"},
        Bad{R"({"vector_cores": 4, "ub_bytes": 98304, "ub": 1})", "unknown key 'ub'"},
        Bad{R"({"vector_cores": 4, "ub_bytes": 98304, "ub_total_bytes": 1})",
            "'ub_total_bytes' is 1"},
        Bad{R"([1, 2])", "expected a JSON object"}, Bad{R"({"vector_cores": )", "not JSON"}}) {
    auto platform = LoadPlatform(write("bad.json", bad.text), kDevices);
    ASSERT_FALSE(platform) << bad.text;
    EXPECT_NE(platform.error().message.find(bad.says), std::string::npos)
        << bad.text << " -> " << platform.error().message;
    EXPECT_NE(platform.error().message.find("bad.json"), std::string::npos);
  }
  std::filesystem::remove_all(dir);

  auto unknown = LoadPlatform("910c", kDevices);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown platform '910c'"), std::string::npos);
  auto missing = LoadPlatform("/nonexistent/x.json", kDevices);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace tilesmith::costmodel::ascend
