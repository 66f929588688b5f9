// What GET /metrics reports, in the Prometheus text format: requests by route and status,
// request latency histograms by route, tuning candidates, jobs by state, database size.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "db/work_queue.h"

namespace tilesmith::service {

/// Thread-safe counters; cheap enough to update on every request.
class Metrics {
 public:
  /// Upper bounds of the latency histogram buckets, in seconds (+Inf is implied).
  static constexpr std::array<double, 12> kBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                      0.01,   0.025,   0.05,   0.1,   0.5,    2.5};

  /// Counts one finished request. `route` is the route's pattern (`/v1/jobs/{id}`), never
  /// the raw path, so clients cannot grow the label set.
  void ObserveRequest(const std::string& route, int status, double seconds);
  /// Adds candidates a tuning job compiled, measured (committed trials) and saw fail.
  void AddCandidates(int64_t compiled, int64_t measured, int64_t failed);

  /// The fleet's queue as the database holds it, read by the caller at each scrape.
  struct Fleet {
    db::UnitCounts units;
    int64_t agents_seen = 0;  ///< Agents that said they were alive within the last minute.
  };

  /// The exposition text; job counts, the database size and the fleet's queue are read by
  /// the caller.
  std::string Render(const std::map<std::string, int64_t>& jobs_by_state, int64_t database_bytes,
                     const Fleet& fleet) const;

 private:
  struct Histogram {
    std::array<int64_t, kBuckets.size()> counts = {};
    int64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::atomic<int64_t> compiled_ = 0;
  std::atomic<int64_t> measured_ = 0;
  std::atomic<int64_t> failed_ = 0;
};

}  // namespace tilesmith::service
