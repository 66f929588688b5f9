// `tilesmith worker`: the process candidates run in, so that a crash, a hang or a stray
// write kills it and not the tuner. It reads one JSON request per line on stdin and answers
// on stdout (measurer.h is the other end):
//
//   request  {"id", "config", "warmup_ms", "budget_ms", "min_reps", "max_reps",
//             "flush_bytes", "flush": "buffers" | "cache", "reference": "evaluator" | DIR,
//             "timing": "kernel" | "events"}
//   answers  {"id", "event": "running"}   — compiled, about to execute (timeouts start here)
//            {"id", "status": "ok", "times_us": [...], "compile_ms", "verification_error"}
//            (CUDA also "timing_method": "cupti-kernel" | "cuda-events", "event_times_us",
//            "kernel_times_us" with CUPTI, and "timing_fallback": why not CUPTI, when kernel
//            time was asked for; times_us are the kernel times with CUPTI, else the events')
//            {"id", "status": "compile" | "wrong_result" | "red_zone" | "launch", "message"}
//            ("exit": true when the worker ends after this answer: a broken CUDA context)
//
// With "reference": DIR the outputs are compared with the .npy files in DIR; when DIR holds
// none yet, this candidate's outputs become the reference ("reference": true in the answer).
#pragma once

#include <iosfwd>

#include "compiler/emitters/target.h"
#include "compiler/hlo/hlo_module.h"

namespace tilesmith::tuner {

/// Guard bytes before and after every buffer; their pattern is checked after each run.
inline constexpr int64_t kRedZoneBytes = 4096;

/// Where a timed host kernel's buffer starts within its page, by its position in the
/// kernel's buffer list: 17 cache lines per position, modulo a page (distinct for the
/// first 64 buffers). Where the heap put a buffer otherwise decided how its accesses aliased
/// another's (4 KiB apart, or in one cache set), so two runs timed one config differently:
/// two full runs of bench/model_bench (30 fusions, 48 configs each) ranked configs alike at
/// a mean Spearman of 0.84 with heap-placed buffers, 0.86 placed this way. Every buffer at
/// page offset 0 agreed as well, but made an input and an output of one shape alias 4 KiB
/// apart on every access: the host model's ranking of `reduce_row/side_output` (an exp
/// written beside the reduced input) fell from 0.77 to 0.37. The worker and bench/ place
/// buffers this way.
inline constexpr int64_t kBufferPageBytes = 4096;
constexpr int64_t BufferPageOffset(int64_t position) {
  return position * 17 * 64 % kBufferPageBytes;
}
/// `bytes` rounded up to whole pages: what a buffer placed this way allocates.
constexpr int64_t RoundUpToPages(int64_t bytes) {
  return (bytes + kBufferPageBytes - 1) / kBufferPageBytes * kBufferPageBytes;
}

/// Serves requests for `module`'s fusion on `target` (the host through ORC JIT, a GPU through
/// the dlopen'ed driver) until stdin closes; returns the exit status. A
/// config's `layouts` (layouts.h) are applied to a copy of the module first.
/// `TILESMITH_WORKER_FAULT` (tests only) is a JSON object mapping a fault (`crash`, `hang`,
/// `red_zone`, `wrong_result`) to a config subset: a request whose config holds every field
/// of the subset suffers that fault, so isolation is tested with a real process.
int RunWorker(const hlo::HloModule& module, const emitters::Target& target,
              const emitters::DeviceInfo& device, std::istream& in, std::ostream& out);

}  // namespace tilesmith::tuner
