// Best results as the query routes answer them: rendered once from the store and kept in
// memory for a short time, so a repeated query costs no SQL and no JSON rendering.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/result_store.h"
#include "support/status.h"

namespace tilesmith::service {

/// A best result and its answer, rendered once.
struct CachedBest {
  nlohmann::json answer;  ///< The /v1/query answer without "target".
  std::string body;       ///< `answer` serialised, without its closing brace.
};

/// The /v1/query answer of a best result (source "measured"), without "target". With the
/// key's newest noise-aware verdict, when it judged this best: the verdict's answer (the
/// default when the best was not significantly faster), its speedup and interval; without
/// one (tuned before verdicts were kept, or a verdict of an earlier best), `significant`
/// null and a verdict whose status is "unknown".
nlohmann::json BestJson(const db::BestResult& best,
                        const std::optional<db::VerdictRecord>& verdict = std::nullopt);

/// `value`, or JSON null when there is none.
inline nlohmann::json NumberOrNull(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

/// Best results from the store, kept in memory for `ttl` and dropped when a job commits
/// under their key, so a hit costs no SQL and no JSON rendering.
class BestCache {
 public:
  explicit BestCache(double ttl_s) : ttl_(std::chrono::duration<double>(ttl_s)) {}
  /// The key's best result, or null when it has none.
  Expected<std::shared_ptr<const CachedBest>> Get(db::ResultStore& store, const db::ResultKey& key);
  /// Get for each of `keys`, in order: what is cached comes from memory, the rest from one
  /// ResultStore::BestMany. A batch of new fusions pays one lookup, not one per fusion.
  Expected<std::vector<std::shared_ptr<const CachedBest>>> GetMany(
      db::ResultStore& store, std::span<const db::ResultKey> keys);
  void Invalidate(const db::ResultKey& key);

 private:
  struct Entry {
    std::shared_ptr<const CachedBest> best;
    std::chrono::steady_clock::time_point loaded;
    /// One request is reloading this expired entry; the others answer from it meanwhile,
    /// so a reload's round trip (milliseconds on a remote database) never stalls them all.
    bool refreshing = false;
  };
  // The cached entry of `cache_key` while it is fresh; null otherwise. Holds mutex_.
  const Entry* Fresh(const std::string& cache_key) const;
  // Remembers what the store answered at `loaded` (a null `best`: nothing). Holds mutex_.
  void Remember(std::string cache_key, std::shared_ptr<const CachedBest> best,
                std::chrono::steady_clock::time_point loaded);

  std::chrono::duration<double> ttl_;
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace tilesmith::service
