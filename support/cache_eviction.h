// Evicting a range of memory from every level of the CPU's caches, so that the next access
// reads it from memory. A host kernel timed "from memory" needs its own buffers out of the
// caches, not the whole last-level cache overwritten: evicting the lines it will touch costs
// a few hundred microseconds for a small kernel where writing 96 MiB costs several
// milliseconds, so the same time budget holds many more repetitions.
#pragma once

#include <cstddef>

namespace tilesmith {

/// Whether EvictFromCaches works on this CPU (x86-64: CLFLUSHOPT or CLFLUSH).
bool CanEvictFromCaches();

/// Writes back and evicts every cache line of [data, data + bytes) from all cache levels,
/// and waits until that is done. A no-op where CanEvictFromCaches() is false.
void EvictFromCaches(const void* data, size_t bytes);

}  // namespace tilesmith
