#include "support/cache_eviction.h"

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace tilesmith {

namespace {

constexpr uintptr_t kLineBytes = 64;

#if defined(__x86_64__)
bool HasClflushopt() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (ebx & (1u << 23)) != 0;
}

// CLFLUSHOPT flushes lines in parallel where CLFLUSH serialises them; only the former needs
// the target attribute, so the choice is made once at run time.
__attribute__((target("clflushopt"))) void EvictOptimized(uintptr_t begin, uintptr_t end) {
  for (uintptr_t line = begin; line < end; line += kLineBytes) {
    _mm_clflushopt(reinterpret_cast<void*>(line));
  }
  _mm_mfence();
}

void EvictSerialized(uintptr_t begin, uintptr_t end) {
  for (uintptr_t line = begin; line < end; line += kLineBytes) {
    _mm_clflush(reinterpret_cast<void*>(line));
  }
  _mm_mfence();
}
#endif

}  // namespace

bool CanEvictFromCaches() {
#if defined(__x86_64__)
  return true;  // CLFLUSH is part of SSE2, which every x86-64 CPU has
#else
  return false;
#endif
}

void EvictFromCaches(const void* data, size_t bytes) {
#if defined(__x86_64__)
  if (bytes == 0) return;
  static const bool optimized = HasClflushopt();
  uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(kLineBytes - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
  if (optimized) {
    EvictOptimized(begin, end);
  } else {
    EvictSerialized(begin, end);
  }
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace tilesmith
