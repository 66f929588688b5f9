// The HTTP API's routes (docs/api.md): query, batch query, tune, jobs, kernels, devices,
// health and metrics. Handlers only read the database and parse requests; tuning happens on
// the JobManager's threads, so no request waits on a compiler or a measurement.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/store.h"
#include "service/best_cache.h"
#include "service/fusion_input.h"
#include "service/http.h"
#include "service/jobs.h"
#include "service/metrics.h"
#include "service/predictions.h"
#include "service/store_pool.h"
#include "service/targets.h"
#include "support/thread_pool.h"

namespace tilesmith::service {

/// Limits and identity of one server's API.
struct ApiOptions {
  std::string compiler_version;
  std::string token;                               ///< Bearer token; empty: no authentication.
  std::string db_path;                             ///< For the database size metric.
  int64_t max_batch = 10000;                       ///< Queries in one /v1/query:batch.
  int64_t max_space = 1000000;                     ///< Configs a tune may search (422 beyond).
  int64_t max_tensor_elements = int64_t{1} << 30;  ///< Largest tensor a tune may hold (422).
  /// Instructions in one request's module (422 beyond): bounds parsing, analysis and tuning.
  int64_t max_instructions = 20000;
  int max_nesting = 256;       ///< Bracket depth of JSON and fusion text (400 beyond).
  double default_wait_s = 30;  ///< /v1/tune `wait` without `timeout_s`.
  double max_wait_s = 600;
  double cache_ttl_s = 1;  ///< How long a best result is served from memory.
};

/// Runs `work` after `seconds` on a server thread (the server's timer).
using Scheduler = std::function<void(double seconds, std::function<void()> work)>;

class Api {
 public:
  /// `open_reader` opens more read connections to `store`'s database for batch queries,
  /// one per batch thread, all at once here; without it batches read through `store`.
  Api(ApiOptions options, std::vector<ServedTarget> targets, db::Store& store, JobManager& jobs,
      Metrics& metrics, Scheduler scheduler, StorePool::Opener open_reader = {});

  /// Answers `request` through `reply`, now or later (a tune with `wait`), exactly once.
  /// Never throws; a bug surfaces as a 500.
  void Handle(const HttpRequest& request, Reply reply);

  /// Forgets cached best results of `key` (a job committed a batch under it).
  void Invalidate(const db::ResultKey& key) { cache_.Invalidate(key); }

 private:
  void Route(const HttpRequest& request, const Reply& reply, std::string* route);
  HttpResponse Devices();
  HttpResponse Query(const nlohmann::json& body);
  HttpResponse QueryBatch(const nlohmann::json& body);  // api_batch.cc
  HttpResponse Kernels(const HttpRequest& request);
  HttpResponse Kernel(const std::string& fingerprint);
  HttpResponse MetricsText();
  void Tune(const nlohmann::json& body, const Reply& reply);
  HttpResponse Split(const nlohmann::json& body);  // api_split.cc
  HttpResponse GetJob(const std::string& id);
  HttpResponse CancelJob(const std::string& id);

  // One query looked up: the cached hit, or the whole answer (404, 400, 500) with a
  // "status" field.
  struct Found {
    std::shared_ptr<const CachedBest> hit;
    const ServedTarget* target = nullptr;
    nlohmann::json answer;
  };
  Found Find(const nlohmann::json& query, const nlohmann::json& defaults);
  // A query's target and fingerprint, or (`error` set) its answer when it has none: the
  // part of Find before the best result is looked up.
  struct Resolved {
    const ServedTarget* target = nullptr;
    FingerprintCache::Entry fusion;
    nlohmann::json error;  ///< {"status", "error"}; null when resolved.
    db::ResultKey Key(const std::string& compiler_version) const {
      return {fusion.fingerprint, target->device.record.Key(), compiler_version};
    }
  };
  Resolved Resolve(const nlohmann::json& query, const nlohmann::json& defaults);
  // The answer to a resolved query without a best result: 404, or a prediction with
  // `predict`, and a job with `tune_if_missing`.
  Found AnswerMissing(const nlohmann::json& query, const nlohmann::json& defaults,
                      const Resolved& resolved);
  const ServedTarget* FindTarget(const std::string& name) const;
  Expected<const ServedTarget*> TargetOf(const nlohmann::json& body,
                                         const nlohmann::json& defaults) const;
  // A tune request's options ({budget, strategy, seed, free_layouts}), checked.
  Expected<nlohmann::json> TuneOptionsOf(const nlohmann::json& body) const;
  // Queues (or joins) the job for a parsed request; errors carry their HTTP status.
  Expected<Submitted> SubmitJob(const nlohmann::json& body, const nlohmann::json& defaults,
                                int* error_status);
  bool Authorized(const HttpRequest& request) const;

  ApiOptions options_;
  std::vector<ServedTarget> targets_;
  db::Store& store_;
  JobManager& jobs_;
  Metrics& metrics_;
  Scheduler scheduler_;
  BestCache cache_;
  FingerprintCache fingerprints_;
  PredictionCache predictions_;
  // Parses a batch's new fusions side by side; only batch queries use it, so a request
  // never waits on compilation (the tuner compiles on pools of its own).
  ThreadPool batch_pool_;
  StorePool batch_readers_;  // a store per batch thread: chunks read side by side
  std::string token_digest_;
};

/// A JSON response; `error` responses are {"error": message, …extra}.
HttpResponse JsonResponse(int status, const nlohmann::json& body);
HttpResponse ErrorResponse(int status, const std::string& message,
                           nlohmann::json extra = nlohmann::json::object());
/// The HTTP status for an error of the library's kind (400, 404, 422, 500, …).
int StatusFor(const Error& error);
/// Parses a request body; errors name the line and column. Depth beyond `max_nesting` is
/// refused before parsing.
Expected<nlohmann::json> ParseBody(const std::string& body, int max_nesting);
/// Checks the types of a query's (or a batch's) `predict` and `tune_if_missing`.
Status CheckQueryFlags(const nlohmann::json& query);
/// Deepest bracket nesting of `text` ((, [, {), strings in JSON quotes skipped.
int NestingDepth(std::string_view text);

}  // namespace tilesmith::service
