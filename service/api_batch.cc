// POST /v1/query:batch: many /v1/query answers in one response, in the request's order.
// A build sends a whole module's fusions at once, most of them new to the server, so the
// batch does in bulk what a single query does one at a time: the queries are split into
// chunks that the batch pool answers side by side, and each chunk reads the best results
// it does not hold in memory with one Store::BestMany, not one SQL lookup per fusion.
// Each chunk reads through a database connection of its own (StorePool), so the threads'
// lookups run side by side rather than queueing on one store's mutex.
#include <algorithm>
#include <optional>

#include "service/api.h"

namespace tilesmith::service {

using nlohmann::json;

HttpResponse Api::QueryBatch(const json& body) {
  auto queries = body.find("queries");
  if (queries == body.end() || !queries->is_array()) {
    return ErrorResponse(400, "\"queries\" must be an array of queries");
  }
  if (static_cast<int64_t>(queries->size()) > options_.max_batch) {
    return ErrorResponse(413, "a batch holds at most " + std::to_string(options_.max_batch) +
                                  " queries, not " + std::to_string(queries->size()));
  }
  // The batch's own fields apply to every query: a malformed one refuses the whole batch.
  if (auto flags = CheckQueryFlags(body); !flags) return ErrorResponse(400, flags.error().message);
  if (body.contains("target")) {
    if (auto target = TargetOf(body, json::object()); !target) {
      return ErrorResponse(400, target.error().message);
    }
  }
  json defaults = json::object();
  for (const char* field : {"target", "tune_if_missing", "predict"}) {
    if (body.contains(field)) defaults[field] = body[field];
  }
  const json& batch = *queries;
  size_t count = batch.size();

  // 1. Per chunk: each query's target and fingerprint (or its error), new fusions parsed
  // here, then the chunk's best results in one lookup.
  std::vector<Resolved> resolved(count);
  std::vector<std::shared_ptr<const CachedBest>> hits(count);
  std::vector<std::optional<std::string>> lookup_errors(count);  // the store failed
  // Small enough that the last chunk's lookup adds little after the parsing ends, large
  // enough that a lookup's fixed cost is shared by many fusions.
  constexpr size_t kChunk = 100;
  auto answer_chunk = [&](int64_t chunk) {
    size_t begin = static_cast<size_t>(chunk) * kChunk;
    size_t end = std::min(count, begin + kChunk);
    std::vector<db::ResultKey> keys;
    std::vector<size_t> keyed;  // the query of each key
    for (size_t i = begin; i < end; ++i) {
      resolved[i] = Resolve(batch[i], defaults);
      if (!resolved[i].error.is_null()) continue;
      keys.push_back(resolved[i].Key(options_.compiler_version));
      keyed.push_back(i);
    }
    StorePool::Lease reader = batch_readers_.Borrow();
    auto bests = cache_.GetMany(reader.store(), keys);
    for (size_t k = 0; k < keyed.size(); ++k) {
      if (bests) {
        hits[keyed[k]] = std::move((*bests)[k]);
      } else {
        lookup_errors[keyed[k]] = bests.error().message;
      }
    }
  };
  int64_t chunks = static_cast<int64_t>((count + kChunk - 1) / kChunk);
  if (chunks > 1) {
    batch_pool_.ParallelFor(chunks, answer_chunk);
  } else if (chunks == 1) {
    answer_chunk(0);
  }

  // 2. The answers, in order. A hit splices its cached serialised answer, as /v1/query
  // does; only the other answers are serialised here (copying and re-serialising 1,000
  // hits was most of a warm batch). Misses are answered here, one at a time, since a
  // prediction or a tuning job may follow.
  std::string results;
  results.reserve(count * 640);
  int64_t found = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) results += ',';
    const Resolved& query = resolved[i];
    json answer;
    if (!query.error.is_null()) {
      answer = query.error;
    } else if (lookup_errors[i]) {
      answer = {{"status", 500}, {"error", *lookup_errors[i]}};
    } else if (hits[i]) {
      ++found;
      results += hits[i]->body;
      results += ",\"status\":200,\"target\":" + json(query.target->name).dump() + "}";
      continue;
    } else {
      answer = std::move(AnswerMissing(batch[i], defaults, query).answer);
      found += answer.value("status", 0) == 200;  // a prediction answers too
    }
    results += answer.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  HttpResponse response;
  response.body = "{\"count\":" + std::to_string(count) + ",\"found\":" + std::to_string(found) +
                  ",\"results\":[" + results + "]}\n";
  return response;
}

}  // namespace tilesmith::service
