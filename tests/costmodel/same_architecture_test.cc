// Which stored devices stand in for a GPU with no measurements of its own: the same
// architecture only, the same card under another driver first, then the nearest by
// bandwidth and SM count; never for the host.
#include <gtest/gtest.h>

#include "costmodel/model_selection.h"
#include "tests/costmodel/store_test_util.h"

namespace tilesmith::costmodel {
namespace {

db::DeviceRecord Gpu(const std::string& capability, const std::string& name, int64_t cores,
                     double bandwidth, const std::string& driver) {
  return {.target = "cuda",
          .compute_capability = capability,
          .name = name,
          .cores = cores,
          .clock_mhz = 1980,
          .memory_bandwidth_gbps = bandwidth,
          .cache_bytes = 50 << 20,
          .driver_version = driver,
          .toolkit_version = "CUDA 13.0"};
}

class SameArchitectureTest : public testing::StoreTest {};

TEST_F(SameArchitectureTest, TheSameCardUnderAnotherDriverComesFirst) {
  db::DeviceRecord here = Gpu("sm_90", "NVIDIA H100 SXM5 80GB", 132, 3352, "");
  db::DeviceRecord timed = Gpu("sm_90", "NVIDIA H100 SXM5 80GB", 132, 3352, "580.159.04");
  db::DeviceRecord pcie = Gpu("sm_90", "NVIDIA H100 PCIe", 114, 2039, "580.159.04");
  db::DeviceRecord ampere = Gpu("sm_80", "NVIDIA A100-SXM4-80GB", 108, 2039, "580.159.04");
  db::DeviceRecord host{.target = "host",
                        .compute_capability = "host",
                        .name = "a CPU",
                        .cores = 2,
                        .clock_mhz = 2000,
                        .memory_bandwidth_gbps = 30,
                        .cache_bytes = 32 << 20,
                        .driver_version = "",
                        .toolkit_version = "LLVM 16.0.6"};
  for (const db::DeviceRecord& device : {here, pcie, ampere, host, timed}) {
    ASSERT_TRUE(store_->PutDevice(device).has_value());
  }
  auto nearest = SameArchitectureDevices(*store_, here);
  ASSERT_TRUE(nearest.has_value()) << nearest.error().message;
  ASSERT_EQ(nearest->size(), 2u) << "itself, sm_80 and the host are left out";
  EXPECT_EQ((*nearest)[0].Key(), timed.Key());
  EXPECT_EQ((*nearest)[1].Key(), pcie.Key());
  EXPECT_DOUBLE_EQ(DeviceDistance(timed, here), 0.0) << "the driver is no distance";
  EXPECT_GT(DeviceDistance(pcie, here), 0.0);

  auto from_host = SameArchitectureDevices(*store_, host);
  ASSERT_TRUE(from_host.has_value());
  EXPECT_TRUE(from_host->empty()) << "one CPU's timings say little about another's";
}

}  // namespace
}  // namespace tilesmith::costmodel
