// `tilesmith worker`: the process candidates run in, so that a crash, a hang or a stray
// write kills it and not the tuner. It reads one JSON request per line on stdin and answers
// on stdout (measurer.h is the other end):
//
//   request  {"id", "config", "warmup_ms", "budget_ms", "min_reps", "max_reps",
//             "flush_bytes", "reference": "evaluator" | DIR}
//   answers  {"id", "event": "running"}   — compiled, about to execute (timeouts start here)
//            {"id", "status": "ok", "times_us": [...], "compile_ms", "verification_error"}
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

/// Serves requests for `module`'s fusion on `target` (the host through ORC JIT, a GPU through
/// the dlopen'ed driver) until stdin closes; returns the exit status. A
/// config's `layouts` (layouts.h) are applied to a copy of the module first.
/// `TILESMITH_WORKER_FAULT` (tests only) is a JSON object mapping a fault (`crash`, `hang`,
/// `red_zone`, `wrong_result`) to a config subset: a request whose config holds every field
/// of the subset suffers that fault, so isolation is tested with a real process.
int RunWorker(const hlo::HloModule& module, const emitters::Target& target,
              const emitters::DeviceInfo& device, std::istream& in, std::ostream& out);

}  // namespace tilesmith::tuner
