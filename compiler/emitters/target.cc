#include "compiler/emitters/target.h"

#include <charconv>
#include <thread>

namespace tilesmith::emitters {

Expected<Target> Target::Parse(std::string_view text) {
  if (text == "host") return Target::Host();
  constexpr std::string_view kPrefix = "cuda:sm_";
  if (text.starts_with(kPrefix)) {
    std::string_view digits = text.substr(kPrefix.size());
    int version = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
    if (ec == std::errc() && ptr == digits.data() + digits.size() && version >= 50 &&
        version < 200) {
      return Target{Kind::kCuda, version};
    }
  }
  return InvalidArgument("unknown target '" + std::string(text) +
                         "' (expected host or cuda:sm_XX, e.g. cuda:sm_90)");
}

std::string Target::ToString() const {
  return is_cuda() ? "cuda:sm_" + std::to_string(sm_version) : "host";
}

DeviceInfo DeviceInfo::ForTarget(const Target& target) {
  DeviceInfo info;
  if (!target.is_cuda()) {
    info.name = "host";
    info.sm_count = std::max<int64_t>(1, std::thread::hardware_concurrency());
    info.shared_memory_per_block = info.shared_memory_per_block_optin = 1 << 20;
    info.simd_bytes = 32;
    return info;
  }
  // Public datasheet figures of each architecture's flagship data-center part.
  switch (target.sm_version / 10) {
    case 9:  // H100 SXM
      info.name = "H100 SXM";
      info.sm_count = 132;
      info.shared_memory_per_block_optin = 227 * 1024;
      info.clock_ghz = 1.98;
      info.memory_bandwidth_gbs = 3350;
      // Public estimates of an H100's HBM3 load latency: ~600 cycles (~300 ns at 1.98 GHz,
      // fp4-site.pages.dev/silicon/gpu-memory-hierarchy) to ~400 ns (mikamirai.com/blog/
      // gpu-memory-bandwidth); the higher is taken, as latency grows under load. Not yet
      // measured here (docs/gpu.md).
      info.memory_latency_ns = 400;
      break;
    case 8:
      if (target.sm_version == 89) {  // L4
        info.name = "L4";
        info.sm_count = 58;
        info.threads_per_sm = 1536;
        info.shared_memory_per_block_optin = 99 * 1024;
        info.clock_ghz = 2.04;
        info.memory_bandwidth_gbs = 300;
        // Compute capability 8.9 holds at most 24 resident blocks per SM.
        info.max_blocks_per_sm = 24;
      } else {  // A100 SXM
        info.name = "A100 SXM";
        info.sm_count = 108;
        info.shared_memory_per_block_optin = 163 * 1024;
        info.clock_ghz = 1.41;
        info.memory_bandwidth_gbs = 2039;
      }
      break;
    default:
      info.name = "sm_" + std::to_string(target.sm_version);
      info.sm_count = 80;
      break;
  }
  return info;
}

}  // namespace tilesmith::emitters
