// What the host benchmarks share: page-touched aligned buffers, best-of timing, the
// machine's copy bandwidth over the same thread pool the kernels use, and a compiled kernel
// with its buffers filled from random arguments.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/analysis/fusion_analysis.h"
#include "compiler/codegen/host_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/hlo/buffer.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/tiling.h"
#include "support/cache_eviction.h"
#include "support/thread_pool.h"
#include "tuner/worker.h"

namespace tilesmith::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A timed kernel's buffer, placed as the tuner's worker places them: page-aligned, then
/// tuner::BufferPageOffset(position) further.
struct Buffer {
  explicit Buffer(size_t bytes, size_t position = 0)
      : base(static_cast<char*>(std::aligned_alloc(
            tuner::kBufferPageBytes,
            tuner::RoundUpToPages(Offset(position) + static_cast<int64_t>(bytes))))),
        data(base + Offset(position)),
        size(bytes) {
    std::memset(data, 1, size);  // touch every page before timing
  }
  ~Buffer() { std::free(base); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  static int64_t Offset(size_t position) {
    return tuner::BufferPageOffset(static_cast<int64_t>(position));
  }
  char* base;
  char* data;
  size_t size;
};

/// Best of `repetitions` timings of `fn`.
template <typename Fn>
double Best(int repetitions, Fn&& fn) {
  double best = 1e30;
  for (int i = 0; i < repetitions; ++i) {
    auto start = Clock::now();
    fn();
    best = std::min(best, Seconds(start));
  }
  return best;
}

/// Bytes per second (read + write) of a parallel memcpy of `bytes` on the default pool.
inline double CopyBandwidth(size_t bytes, int repetitions) {
  Buffer from(bytes), to(bytes);
  ThreadPool& pool = ThreadPool::Default();
  int64_t tasks = pool.size() * 4;
  double seconds = Best(repetitions, [&] {
    pool.ParallelFor(tasks, [&](int64_t task) {
      size_t begin = bytes * task / tasks;
      size_t end = bytes * (task + 1) / tasks;
      std::memcpy(to.data + begin, from.data + begin, end - begin);
    });
  });
  return 2.0 * static_cast<double>(bytes) / seconds;
}

[[noreturn]] inline void Fail(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::exit(1);
}

/// Writes over more bytes than any last-level cache here, in parallel on the default pool.
inline void FlushCaches(int value) {
  static Buffer flush(size_t{96} << 20);
  ThreadPool& pool = ThreadPool::Default();
  int64_t tasks = pool.size() * 4;
  pool.ParallelFor(tasks, [&](int64_t task) {
    size_t begin = flush.size * task / tasks;
    size_t end = flush.size * (task + 1) / tasks;
    std::memset(flush.data + begin, value, end - begin);
  });
}

/// A fusion compiled for the host with `config` (null: the default), its buffers holding
/// random arguments (default layouts: the literals' bytes are the buffers' bytes).
struct PreparedKernel {
  std::unique_ptr<codegen::HostKernel> kernel;
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<void*> pointers;
  double bytes = 0;  // every buffer once: what a memory-bound kernel must move
  // TimeFromMemory evicts these buffers from the caches, as the tuner's worker does
  // (tuner/worker.h), rather than overwriting the whole last-level cache.
  bool evict_buffers = false;

  double Time(int repetitions) {
    kernel->Run(pointers);  // warm-up
    return Best(repetitions, [&] { kernel->Run(pointers); });
  }

  /// As Time, with the caches flushed before each repetition (untimed), so inputs smaller
  /// than the cache still come from memory, as the copy bandwidth's do: `evict_buffers`
  /// evicts this kernel's buffers, otherwise more bytes than any last-level cache here are
  /// written on the kernel's pool (so when the pool polls, ThreadPool::set_spin, its workers
  /// are awake when the kernel starts).
  double TimeFromMemory(int repetitions) {
    kernel->Run(pointers);  // warm-up
    double best = 1e30;
    for (int i = 0; i < repetitions; ++i) {
      if (evict_buffers) {
        for (const auto& buffer : buffers) EvictFromCaches(buffer->data, buffer->size);
      } else {
        FlushCaches(i);
      }
      auto start = Clock::now();
      kernel->Run(pointers);
      best = std::min(best, Seconds(start));
    }
    return best;
  }
};

/// As Prepare, with what went wrong as an error instead of exiting: for fusions that may
/// not build (model_bench's generated ones), which are skipped and counted.
inline Expected<PreparedKernel> TryPrepare(const hlo::HloComputation& fusion,
                                           const analysis::FusionAnalysis& analysis,
                                           const std::vector<hlo::Literal>& arguments,
                                           const nlohmann::json& config) {
  auto device = emitters::DeviceInfo::ForTarget(emitters::Target::Host());
  auto kernel = emitters::EmitKernel(analysis, config, device);
  if (!kernel) {
    return MakeError(kernel.error().code,
                     fusion.name() + " " + config.dump() + ": " + kernel.error().message);
  }
  TS_ASSIGN_OR_RETURN(auto compiled, codegen::CompileForHost(std::move(*kernel)));
  PreparedKernel prepared;
  prepared.kernel = std::move(compiled);
  for (const auto& buffer : prepared.kernel->kernel().buffers) {
    TS_ASSIGN_OR_RETURN(auto physical, hlo::PhysicalLayout::Create(buffer.shape));
    prepared.buffers.push_back(
        std::make_unique<Buffer>(physical.byte_size(), prepared.buffers.size()));
    prepared.pointers.push_back(prepared.buffers.back()->data);
    prepared.bytes += static_cast<double>(physical.byte_size());
    if (buffer.is_parameter()) {
      std::span<const uint8_t> source = arguments[buffer.index].bytes();
      std::memcpy(prepared.buffers.back()->data, source.data(),
                  std::min<size_t>(source.size(), physical.byte_size()));
    } else if (buffer.fill) {
      // Atomic outputs and arrival counters start where the kernel expects them.
      TS_ASSIGN_OR_RETURN(auto filled, hlo::FilledPhysicalBuffer(buffer.shape, *buffer.fill));
      std::memcpy(prepared.buffers.back()->data, filled.data(),
                  std::min<size_t>(filled.size(), physical.byte_size()));
    }
  }
  return prepared;
}

inline PreparedKernel Prepare(const hlo::HloComputation& fusion,
                              const analysis::FusionAnalysis& analysis,
                              const std::vector<hlo::Literal>& arguments,
                              const nlohmann::json& config) {
  auto prepared = TryPrepare(fusion, analysis, arguments, config);
  if (!prepared) Fail(prepared.error().message);
  return std::move(*prepared);
}

}  // namespace tilesmith::bench
