// libFuzzer entry point for the HLO parser (built with -DTILESMITH_LIBFUZZER=ON under clang;
// see tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/reader_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tilesmith::fuzz::ReadHloTarget(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
