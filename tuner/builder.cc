#include "tuner/builder.h"

#include "support/thread_pool.h"

namespace tilesmith::tuner {

std::vector<BuildResult> BuildBatch(std::span<const BuildRequest> requests, const Backend& backend,
                                    int threads, const std::function<bool()>& cancelled) {
  std::vector<BuildResult> results(requests.size());
  // Its own pool: the process-wide one runs host kernels' blocks.
  static ThreadPool pool(0);  // one thread per core, the caller included
  pool.ParallelFor(
      static_cast<int64_t>(requests.size()),
      [&](int64_t i) {
        if (cancelled && cancelled()) {
          results[i].message = std::string(kBuildCancelled);
          return;
        }
        results[i] = backend.BuildCandidate(*requests[i].analysis, requests[i].config);
      },
      threads);
  return results;
}

}  // namespace tilesmith::tuner
