// Evicting lines changes where data lives, never what it holds: the timed kernel reads the
// same inputs after its buffers were evicted. (How much slower a read from memory is, is a
// measurement: the tuner's repetitions and bench/model_bench rely on it.)
#include "support/cache_eviction.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

namespace tilesmith {
namespace {

TEST(CacheEvictionTest, AvailableOnX86) {
#if defined(__x86_64__)
  EXPECT_TRUE(CanEvictFromCaches());
#else
  EXPECT_FALSE(CanEvictFromCaches());
#endif
}

TEST(CacheEvictionTest, EvictedBytesKeepTheirValues) {
  std::vector<uint8_t> bytes(1 << 20);
  std::iota(bytes.begin(), bytes.end(), uint8_t{7});
  std::vector<uint8_t> expected = bytes;
  EvictFromCaches(bytes.data(), bytes.size());
  EXPECT_EQ(bytes, expected);
}

TEST(CacheEvictionTest, UnalignedAndEmptyRangesAreFine) {
  std::vector<uint8_t> bytes(300, 0x5a);
  EvictFromCaches(bytes.data() + 3, 0);
  EvictFromCaches(bytes.data() + 3, 1);     // inside one line
  EvictFromCaches(bytes.data() + 63, 130);  // starts at a line's last byte, spans three lines
  bytes[200] = 1;                           // still writable, and written through
  EvictFromCaches(bytes.data(), bytes.size());
  EXPECT_EQ(bytes[200], 1);
  EXPECT_EQ(bytes[199], 0x5a);
}

}  // namespace
}  // namespace tilesmith
