// libFuzzer entry point for the .npy reader (built with -DTILESMITH_LIBFUZZER=ON under clang;
// see tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>
#include <span>

#include "tests/fuzz/reader_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tilesmith::fuzz::ReadNpyTarget(std::span<const uint8_t>(data, size));
  return 0;
}
