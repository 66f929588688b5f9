// libFuzzer entry point for the AscGraph reader and lowering: the first byte picks JSON or
// text format (built with -DTILESMITH_LIBFUZZER=ON under clang; see tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/reader_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  (void)tilesmith::fuzz::ReadAscGraphTarget(bytes, (data[0] & 1) != 0);
  return 0;
}
