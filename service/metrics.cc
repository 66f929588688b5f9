#include "service/metrics.h"

#include <cstdio>

namespace tilesmith::service {
namespace {

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

}  // namespace

void Metrics::ObserveRequest(const std::string& route, int status, double seconds) {
  std::lock_guard lock(mutex_);
  ++requests_[{route, status}];
  Histogram& histogram = latency_[route];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++histogram.counts[i];
  }
  ++histogram.count;
  histogram.sum += seconds;
}

void Metrics::AddCandidates(int64_t compiled, int64_t measured, int64_t failed) {
  compiled_ += compiled;
  measured_ += measured;
  failed_ += failed;
}

std::string Metrics::Render(const std::map<std::string, int64_t>& jobs_by_state,
                            int64_t database_bytes, const Fleet& fleet) const {
  std::string out;
  out +=
      "# HELP tilesmith_http_requests_total HTTP requests answered, by route and status.\n"
      "# TYPE tilesmith_http_requests_total counter\n";
  std::lock_guard lock(mutex_);
  for (const auto& [key, count] : requests_) {
    out += "tilesmith_http_requests_total{route=\"" + key.first + "\",status=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(count) + "\n";
  }
  out +=
      "# HELP tilesmith_http_request_duration_seconds Time from a parsed request to its "
      "response, by route.\n"
      "# TYPE tilesmith_http_request_duration_seconds histogram\n";
  for (const auto& [route, histogram] : latency_) {
    std::string label = "route=\"" + route + "\"";
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      out += "tilesmith_http_request_duration_seconds_bucket{" + label + ",le=\"" +
             Number(kBuckets[i]) + "\"} " + std::to_string(histogram.counts[i]) + "\n";
    }
    out += "tilesmith_http_request_duration_seconds_bucket{" + label + ",le=\"+Inf\"} " +
           std::to_string(histogram.count) + "\n";
    out += "tilesmith_http_request_duration_seconds_sum{" + label + "} " + Number(histogram.sum) +
           "\n";
    out += "tilesmith_http_request_duration_seconds_count{" + label + "} " +
           std::to_string(histogram.count) + "\n";
  }
  out +=
      "# HELP tilesmith_jobs Tuning jobs in the database, by state.\n"
      "# TYPE tilesmith_jobs gauge\n";
  for (const auto& [state, count] : jobs_by_state) {
    out += "tilesmith_jobs{state=\"" + state + "\"} " + std::to_string(count) + "\n";
  }
  out +=
      "# HELP tilesmith_candidates_total Tuning candidates since start: compiled, measured "
      "(trials committed) and failed.\n"
      "# TYPE tilesmith_candidates_total counter\n"
      "tilesmith_candidates_total{outcome=\"compiled\"} " +
      std::to_string(compiled_.load()) +
      "\n"
      "tilesmith_candidates_total{outcome=\"measured\"} " +
      std::to_string(measured_.load()) +
      "\n"
      "tilesmith_candidates_total{outcome=\"failed\"} " +
      std::to_string(failed_.load()) + "\n";
  out +=
      "# HELP tilesmith_database_bytes Size of the results database file and its "
      "write-ahead log.\n"
      "# TYPE tilesmith_database_bytes gauge\n"
      "tilesmith_database_bytes " +
      std::to_string(database_bytes) + "\n";
  const db::UnitCounts& units = fleet.units;
  out +=
      "# HELP tilesmith_units Work units of the fleet's queue, by state; `expired` are leased "
      "units whose agent stopped renewing.\n"
      "# TYPE tilesmith_units gauge\n";
  for (const auto& [state, count] : {std::pair<std::string_view, int64_t>{"queued", units.queued},
                                     {"leased", units.leased},
                                     {"done", units.done},
                                     {"failed", units.failed},
                                     {"expired", units.expired}}) {
    out += "tilesmith_units{state=\"" + std::string(state) + "\"} " + std::to_string(count) + "\n";
  }
  out +=
      "# HELP tilesmith_units_reclaimed Leases taken over from an agent that stopped "
      "renewing them.\n"
      "# TYPE tilesmith_units_reclaimed gauge\n"
      "tilesmith_units_reclaimed " +
      std::to_string(units.reclaims) +
      "\n"
      "# HELP tilesmith_agents Agents seen within the last minute.\n"
      "# TYPE tilesmith_agents gauge\n"
      "tilesmith_agents " +
      std::to_string(fleet.agents_seen) + "\n";
  return out;
}

}  // namespace tilesmith::service
