// Data found beside the executable (support/exe_path.h): what lets an unpacked bundle
// (scripts/device-bundle) run from any directory with no source tree behind it. The last
// test copies the real `tilesmith` into a temporary directory next to a configs/devices of
// its own, as the bundle lays it out, and checks the copy reads that one.
#include "support/exe_path.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

namespace tilesmith {
namespace {

namespace fs = std::filesystem;

class ExePathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tilesmith-exe-path-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  // Runs `command` with $TILESMITH_DEVICES_DIR cleared (it would override the lookup);
  // stdout and the exit code.
  static std::pair<int, std::string> Run(const std::string& command) {
    FILE* pipe = popen(("env -u TILESMITH_DEVICES_DIR " + command + " 2>&1").c_str(), "r");
    std::string out;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
    int status = pclose(pipe);
    return {WEXITSTATUS(status), out};
  }

  fs::path dir_;
};

TEST_F(ExePathTest, ExecutablePathIsThisTestBinary) {
  auto self = ExecutablePath();
  ASSERT_TRUE(self.has_value());
  EXPECT_TRUE(self->is_absolute());
  EXPECT_EQ(self->filename(), "support_test");
  EXPECT_TRUE(fs::equivalent(*self, fs::path(TILESMITH_BINARY_DIR) / "bin/support_test"));
}

TEST_F(ExePathTest, FindBesideFindsFilesAndDirectoriesNextToTheExecutable) {
  Write(dir_ / "tilesmith", "");
  Write(dir_ / "configs/devices/host.json", "{}");
  Write(dir_ / "cuda/nvvm/libdevice/libdevice.10.bc", "");
  EXPECT_EQ(FindBeside(dir_ / "tilesmith", "configs/devices"), dir_ / "configs/devices");
  EXPECT_EQ(FindBeside(dir_ / "tilesmith", "cuda/nvvm/libdevice/libdevice.10.bc"),
            dir_ / "cuda/nvvm/libdevice/libdevice.10.bc");
  EXPECT_EQ(FindBeside(dir_ / "tilesmith", "configs/examples"), std::nullopt);
  // Only the executable's own directory counts, not the one above it.
  EXPECT_EQ(FindBeside(dir_ / "configs/tilesmith", "configs/devices"), std::nullopt);
}

TEST_F(ExePathTest, BundledPathOrFallsBackWhenNothingIsBeside) {
  EXPECT_EQ(BundledPathOr("no/such/data", "/fallback/dir"), fs::path("/fallback/dir"));
  EXPECT_EQ(BundledPath("no/such/data"), std::nullopt);
}

// A copied binary reads configs/devices beside itself before the source tree's; the same
// request against the build's own binary (no such description in the source tree) fails.
TEST_F(ExePathTest, CopiedTilesmithReadsDeviceDescriptionsBesideItself) {
  fs::path copy = dir_ / "tilesmith";
  fs::copy_file(TILESMITH_CLI, copy);
  fs::permissions(copy, fs::perms::owner_all, fs::perm_options::add);
  fs::copy_file(fs::path(TILESMITH_SOURCE_DIR) / "configs/examples/gelu.hlo", dir_ / "gelu.hlo");
  std::ifstream gpu_file(fs::path(TILESMITH_SOURCE_DIR) / "configs/devices/h100_sxm.json");
  std::string gpu((std::istreambuf_iterator<char>(gpu_file)), std::istreambuf_iterator<char>());
  // A GPU description: a host one takes its name from this machine's CPU instead.
  const std::string name = "\"name\": \"NVIDIA H100 SXM5 80GB\"";
  size_t at = gpu.find(name);
  ASSERT_NE(at, std::string::npos) << "configs/devices/h100_sxm.json changed its name line";
  gpu.replace(at, name.size(), "\"name\": \"bundle probe GPU\"");
  Write(dir_ / "configs/devices/bundle_probe.json", gpu);

  const std::string arguments = " space " + (dir_ / "gelu.hlo").string() +
                                " --target cuda:sm_90 --device bundle_probe --json";
  auto [code, out] = Run(copy.string() + arguments);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("bundle probe GPU"), std::string::npos) << out;

  auto [source_code, source_out] = Run(std::string(TILESMITH_CLI) + arguments);
  EXPECT_NE(source_code, 0) << source_out;
  EXPECT_NE(source_out.find("bundle_probe"), std::string::npos) << source_out;
}

}  // namespace
}  // namespace tilesmith
