#include "tuner/host_memory.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "compiler/emitters/kernel_ir.h"

namespace tilesmith::tuner {
namespace {

// Inputs once as evaluator literals and once as kernel buffers; outputs as kernel buffers,
// the evaluator's result and the compared copy.
constexpr int64_t kCopiesHeld = 3;

int64_t LeafBytes(const hlo::Shape& shape) {
  int64_t total = 0;
  for (const hlo::Shape* leaf : emitters::ArrayLeaves(shape)) {
    total += (leaf->ElementCount() * hlo::DefaultStorageBits(leaf->element_type()) + 7) / 8;
  }
  return total;
}

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

}  // namespace

int64_t FusionBufferBytes(const hlo::HloComputation& fusion) {
  int64_t total = LeafBytes(fusion.root()->shape());
  for (const hlo::HloInstruction* parameter : fusion.parameters()) {
    total += LeafBytes(parameter->shape());
  }
  return total;
}

int64_t HostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size : 0;
}

Status CheckFitsHostMemory(const hlo::HloComputation& fusion, int64_t memory_bytes) {
  if (memory_bytes <= 0) memory_bytes = HostMemoryBytes();
  if (memory_bytes <= 0) return OkStatus();
  int64_t buffers = FusionBufferBytes(fusion);
  // Overflow-safe: a fusion with more than memory/3 bytes of buffers does not fit.
  if (buffers <= memory_bytes / kCopiesHeld) return OkStatus();
  return MakeError(ErrorCode::kFailedPrecondition,
                   fusion.name() + ": its inputs and outputs take " + HumanBytes(double(buffers)) +
                       " and running it holds them about " + std::to_string(kCopiesHeld) +
                       " times, more than this machine's " + HumanBytes(double(memory_bytes)) +
                       " of memory; it cannot run on the host (compiling it for a target works)");
}

}  // namespace tilesmith::tuner
