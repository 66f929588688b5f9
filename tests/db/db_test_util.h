// Shared pieces of the results-database tests: a temporary directory that cleans up after
// itself, and records that look like what the tuner writes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "db/records.h"
#include "db/sqlite_store.h"
#include "support/sha256.h"

namespace tilesmith::db::testing {

/// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("tilesmith_db_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline DeviceRecord H100() {
  return {"cuda", "sm_90", "NVIDIA H100 80GB HBM3", 132, 1980, 3352.5, 52428800, "550.54", "12.4"};
}

inline DeviceRecord Host() {
  return {"host", "host", "AMD EPYC 7B13", 16, 2450, 40, 33554432, "", "llvm-16"};
}

/// A kernel whose fingerprint really is the SHA-256 of its text.
inline KernelRecord Kernel(const std::string& name) {
  std::string text = "fusion {\n  tmp_0 = f32[128]{0} parameter(0)  // " + name + "\n}\n";
  return {*Sha256Hex(text), "hlo", name, text};
}

/// A verified trial of `config` with the given median.
inline MeasurementRecord Trial(const KernelRecord& kernel, const DeviceRecord& device,
                               nlohmann::json config, double median_us,
                               const std::string& compiler_version = "tilesmith-test-1") {
  MeasurementRecord m;
  m.key = {kernel.fingerprint, device.Key(), compiler_version};
  m.emitter = "loop";
  m.config = std::move(config);
  m.timing =
      Timing{median_us,        median_us * 0.98, median_us * 1.03,
             median_us * 0.95, median_us * 1.2,  {median_us * 1.01, median_us, median_us * 0.99}};
  m.compile_stats = {
      {"compile_ms", 12.5}, {"registers", 32}, {"shared_bytes", 0}, {"spill_bytes", 0}};
  m.verification_error = 0.0;
  return m;
}

/// A failed trial of `config`.
inline MeasurementRecord Failure(const KernelRecord& kernel, const DeviceRecord& device,
                                 nlohmann::json config, TrialStatus status,
                                 const std::string& message) {
  MeasurementRecord m = Trial(kernel, device, std::move(config), 0);
  m.status = status;
  m.message = message;
  m.timing.reset();
  m.verification_error.reset();
  return m;
}

/// Opens a store, failing the test with the message when it cannot.
inline std::unique_ptr<SqliteStore> OpenStore(const std::string& path,
                                              const SqliteOptions& options = {}) {
  auto store = SqliteStore::Open(path, options);
  EXPECT_TRUE(store.has_value()) << store.error().message;
  return store ? std::move(*store) : nullptr;
}

}  // namespace tilesmith::db::testing
