#include "service/best_cache.h"

#include "db/export.h"

namespace tilesmith::service {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string CacheKey(const db::ResultKey& key) {
  return key.fingerprint + '\n' + key.device_key + '\n' + key.compiler_version;
}

std::shared_ptr<const CachedBest> Render(const db::BestResult& best,
                                         const std::optional<db::VerdictRecord>& verdict) {
  auto cached = std::make_shared<CachedBest>();
  cached->answer = BestJson(best, verdict);
  cached->body = cached->answer.dump(-1, ' ', false, json::error_handler_t::replace);
  cached->body.pop_back();  // the closing brace: the route adds "target"
  return cached;
}

}  // namespace

json BestJson(const db::BestResult& best, const std::optional<db::VerdictRecord>& verdict) {
  const db::MeasurementRecord& m = best.measurement;
  json out = {{"source", "measured"},
              {"fingerprint", m.key.fingerprint},
              {"name", best.kernel_name},
              {"device", m.key.device_key},
              {"compiler_version", m.key.compiler_version},
              {"emitter", m.emitter},
              {"config", m.config},
              {"is_default", m.is_default},
              {"compile_stats", m.compile_stats},
              {"measured_at", m.measured_at},
              {"default_median_us", NumberOrNull(best.default_median_us)}};
  if (m.timing) {
    out.update(db::TimingSummaryJson(*m.timing));
    if (best.default_median_us && m.timing->median_us > 0) {
      out["speedup"] = *best.default_median_us / m.timing->median_us;
    }
  }
  if (!m.job_id.empty()) out["job_id"] = m.job_id;
  out["significant"] = nullptr;
  if (!verdict) {
    out["verdict"] = {{"status", "unknown"},
                      {"reason",
                       "no noise-aware verdict was stored for this key (tuned before "
                       "verdicts were kept, or with --confirm-top 0)"}};
    return out;
  }
  if (verdict->best_config_hash != m.config_hash) {
    out["verdict"] = {{"status", "unknown"},
                      {"reason", "the stored verdict judged an earlier best config, not this one"},
                      {"decided_at", verdict->decided_at}};
    return out;
  }
  json judged = db::VerdictJson(*verdict);
  judged["status"] = "confirmed";
  for (const char* field :
       {"speedup", "speedup_low", "speedup_high", "confidence", "significant"}) {
    out[field] = judged[field];
  }
  if (verdict->chosen_config_hash != m.config_hash) {
    // The answer is not the search's best (the default, when the best was within noise):
    // its config and confirmed median answer; the search's best is kept beside it.
    json searched = {{"config", m.config}, {"compile_stats", m.compile_stats}};
    if (m.timing) searched.update(db::TimingSummaryJson(*m.timing));
    out["searched_best"] = std::move(searched);
    out["config"] = verdict->chosen_config;
    out["is_default"] = verdict->chosen_is_default;
    out["median_us"] = verdict->chosen_median_us;
    for (const char* field : {"p20_us", "p80_us", "min_us", "max_us"}) out[field] = nullptr;
    out["compile_stats"] = json::object();
  }
  out["verdict"] = std::move(judged);
  return out;
}

const BestCache::Entry* BestCache::Fresh(const std::string& cache_key) const {
  auto hit = entries_.find(cache_key);
  if (hit == entries_.end() || Clock::now() - hit->second.loaded >= ttl_) return nullptr;
  return &hit->second;
}

void BestCache::Remember(std::string cache_key, std::shared_ptr<const CachedBest> best,
                         Clock::time_point loaded) {
  if (!best) {
    entries_.erase(cache_key);
    return;
  }
  if (entries_.size() > 20000) entries_.clear();  // bounded: hot keys come back at once
  entries_[std::move(cache_key)] = {std::move(best), loaded};
}

Expected<std::shared_ptr<const CachedBest>> BestCache::Get(db::ResultStore& store,
                                                           const db::ResultKey& key) {
  std::string cache_key = CacheKey(key);
  {
    std::lock_guard lock(mutex_);
    if (const Entry* fresh = Fresh(cache_key)) return fresh->best;
    auto expired = entries_.find(cache_key);
    if (expired != entries_.end()) {
      if (expired->second.refreshing) return expired->second.best;
      expired->second.refreshing = true;  // this request reloads it
    }
  }
  auto loaded_at = Clock::now();
  auto loaded = [&]() -> Expected<std::shared_ptr<const CachedBest>> {
    TS_ASSIGN_OR_RETURN(std::optional<db::BestResult> best, store.Best(key));
    if (!best) return std::shared_ptr<const CachedBest>();
    TS_ASSIGN_OR_RETURN(auto verdicts, store.Verdicts(std::span<const db::ResultKey>(&key, 1)));
    return Render(*best, verdicts[0]);
  }();
  std::lock_guard lock(mutex_);
  if (!loaded) {
    auto expired = entries_.find(cache_key);
    if (expired != entries_.end()) expired->second.refreshing = false;
    return std::unexpected(loaded.error());
  }
  std::shared_ptr<const CachedBest> cached = std::move(*loaded);
  Remember(std::move(cache_key), cached, loaded_at);
  return cached;
}

Expected<std::vector<std::shared_ptr<const CachedBest>>> BestCache::GetMany(
    db::ResultStore& store, std::span<const db::ResultKey> keys) {
  std::vector<std::shared_ptr<const CachedBest>> results(keys.size());
  // The keys to load, each once, and which results each one answers.
  std::vector<db::ResultKey> missing;
  std::vector<std::string> missing_cache_keys;
  std::vector<std::vector<size_t>> answers;
  {
    std::unordered_map<std::string, size_t> position;
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < keys.size(); ++i) {
      std::string cache_key = CacheKey(keys[i]);
      if (const Entry* fresh = Fresh(cache_key)) {
        results[i] = fresh->best;
        continue;
      }
      auto [at, added] = position.emplace(cache_key, missing.size());
      if (added) {
        missing.push_back(keys[i]);
        missing_cache_keys.push_back(std::move(cache_key));
        answers.emplace_back();
      }
      answers[at->second].push_back(i);
    }
  }
  if (missing.empty()) return results;
  auto loaded_at = Clock::now();
  TS_ASSIGN_OR_RETURN(std::vector<std::optional<db::BestResult>> loaded, store.BestMany(missing));
  TS_ASSIGN_OR_RETURN(std::vector<std::optional<db::VerdictRecord>> verdicts,
                      store.Verdicts(missing));
  std::vector<std::shared_ptr<const CachedBest>> rendered(missing.size());
  for (size_t m = 0; m < missing.size(); ++m) {
    if (loaded[m]) rendered[m] = Render(*loaded[m], verdicts[m]);
  }
  std::lock_guard lock(mutex_);
  for (size_t m = 0; m < missing.size(); ++m) {
    for (size_t i : answers[m]) results[i] = rendered[m];
    Remember(std::move(missing_cache_keys[m]), std::move(rendered[m]), loaded_at);
  }
  return results;
}

void BestCache::Invalidate(const db::ResultKey& key) {
  std::lock_guard lock(mutex_);
  entries_.erase(CacheKey(key));
}

}  // namespace tilesmith::service
