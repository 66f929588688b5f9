#include "service/api.h"

#include <openssl/crypto.h>

#include <cctype>
#include <string_view>

#include "db/export.h"
#include "report/report.h"
#include "support/log.h"
#include "support/sha256.h"

namespace tilesmith::service {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

json MeasurementJson(const db::MeasurementRecord& m) {
  json out = {{"uid", m.uid},
              {"device", m.key.device_key},
              {"compiler_version", m.key.compiler_version},
              {"emitter", m.emitter},
              {"config", m.config},
              {"config_hash", m.config_hash},
              {"is_default", m.is_default},
              {"status", db::TrialStatusName(m.status)},
              {"message", m.message},
              {"compile_stats", m.compile_stats},
              {"verification_error", NumberOrNull(m.verification_error)},
              {"measured_at", m.measured_at},
              {"job_id", m.job_id}};
  if (m.timing) {
    out.update(db::TimingSummaryJson(*m.timing));
    out["times_us"] = m.timing->times_us;
  }
  return out;
}

bool IsHex(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// GET /report (`text` empty) and /report/{fingerprint}: the HTML tuning report, rendered from
// the store on each request (report/report.h).
HttpResponse ReportPage(db::ResultStore& store, const std::string& text) {
  report::ReportOptions options;
  if (!text.empty()) {
    if (text.size() < 6 || text.size() > 64 || !IsHex(text)) {
      return ErrorResponse(
          400, "a fingerprint is 6 to 64 lowercase hex digits, not '" + text.substr(0, 80) + "'");
    }
    auto fingerprint = db::ResolveFingerprint(store, text);
    if (!fingerprint) {
      return ErrorResponse(StatusFor(fingerprint.error()), fingerprint.error().message);
    }
    options.fingerprint = *fingerprint;
  }
  auto page = report::RenderReport(store, options);
  if (!page) return ErrorResponse(StatusFor(page.error()), page.error().message);
  HttpResponse response;
  response.content_type = "text/html; charset=utf-8";
  response.body = std::move(*page);
  return response;
}

}  // namespace

Status CheckQueryFlags(const json& query) {
  if (auto predict = query.find("predict"); predict != query.end() && !predict->is_boolean()) {
    return InvalidArgument("\"predict\" must be true or false");
  }
  if (auto tune = query.find("tune_if_missing");
      tune != query.end() && !tune->is_boolean() && !tune->is_object()) {
    return InvalidArgument("\"tune_if_missing\" must be true, false or an object");
  }
  return OkStatus();
}

HttpResponse JsonResponse(int status, const json& body) {
  HttpResponse response;
  response.status = status;
  response.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  response.body += "\n";
  return response;
}

HttpResponse ErrorResponse(int status, const std::string& message, json extra) {
  extra["error"] = message;
  return JsonResponse(status, extra);
}

int StatusFor(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kUnimplemented:
    case ErrorCode::kOutOfRange:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kFailedPrecondition:
      return 409;
    case ErrorCode::kResourceExhausted:
      return 422;
    case ErrorCode::kIo:
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

int NestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[' || c == '(') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']' || c == ')') {
      --depth;
    }
  }
  return deepest;
}

Expected<json> ParseBody(const std::string& body, int max_nesting) {
  if (body.empty()) return InvalidArgument("the request body is empty; expected a JSON object");
  if (NestingDepth(body) > max_nesting) {
    return InvalidArgument("the request nests deeper than " + std::to_string(max_nesting) +
                           " levels");
  }
  try {
    json parsed = json::parse(body);
    if (!parsed.is_object()) return InvalidArgument("the request body must be a JSON object");
    return parsed;
  } catch (const json::exception& error) {
    // Syntax errors, and numbers past a double's range (`1e999`): both the client's JSON.
    std::string message = error.what();
    if (size_t bracket = message.find("] "); message.starts_with("[json") && bracket != 0) {
      message = message.substr(bracket + 2);
    }
    return InvalidArgument("invalid JSON: " + message);
  }
}

Api::Api(ApiOptions options, std::vector<ServedTarget> targets, db::Store& store, JobManager& jobs,
         Metrics& metrics, Scheduler scheduler, StorePool::Opener open_reader)
    : options_(std::move(options)),
      targets_(std::move(targets)),
      store_(store),
      jobs_(jobs),
      metrics_(metrics),
      scheduler_(std::move(scheduler)),
      cache_(options_.cache_ttl_s),
      fingerprints_(options_.max_instructions),
      batch_readers_(std::move(open_reader), static_cast<size_t>(batch_pool_.size()), store_) {
  if (!options_.token.empty()) token_digest_ = *Sha256Hex(options_.token);
  batch_readers_.Fill();
}

bool Api::Authorized(const HttpRequest& request) const {
  if (token_digest_.empty()) return true;
  // `Bearer <token>`, the scheme in any case (RFC 7235) and spaces around the token allowed.
  std::string_view given = request.authorization;
  constexpr std::string_view kBearer = "bearer";
  if (given.size() <= kBearer.size() || given[kBearer.size()] != ' ') return false;
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(given[i])) != kBearer[i]) return false;
  }
  given.remove_prefix(kBearer.size());
  while (!given.empty() && (given.front() == ' ' || given.front() == '\t')) given.remove_prefix(1);
  while (!given.empty() && (given.back() == ' ' || given.back() == '\t')) given.remove_suffix(1);
  // Digests have one length, so the comparison's time says nothing about the token.
  auto digest = Sha256Hex(given);
  return digest && CRYPTO_memcmp(digest->data(), token_digest_.data(), token_digest_.size()) == 0;
}

const ServedTarget* Api::FindTarget(const std::string& name) const {
  return FindServedTarget(targets_, name);
}

Expected<const ServedTarget*> Api::TargetOf(const json& body, const json& defaults) const {
  const json* value = nullptr;
  if (body.contains("target")) {
    value = &body["target"];
  } else if (defaults.contains("target")) {
    value = &defaults["target"];
  }
  if (value == nullptr) {
    if (targets_.size() == 1) return &targets_.front();
    return InvalidArgument("\"target\" is required (this server serves several)");
  }
  if (!value->is_string()) return InvalidArgument("\"target\" must be a string");
  const ServedTarget* target = FindTarget(value->get<std::string>());
  if (target == nullptr) {
    std::string served;
    for (const ServedTarget& t : targets_) served += (served.empty() ? "" : ", ") + t.name;
    return InvalidArgument("unknown target '" + value->get<std::string>() +
                           "' (this server serves: " + served + ")");
  }
  return target;
}

void Api::Handle(const HttpRequest& request, Reply reply) {
  auto start = Clock::now();
  auto route = std::make_shared<std::string>("other");
  Reply observed = [this, start, route, reply = std::move(reply)](HttpResponse response) {
    metrics_.ObserveRequest(*route, response.status,
                            std::chrono::duration<double>(Clock::now() - start).count());
    reply(std::move(response));
  };
  try {
    Route(request, observed, route.get());
  } catch (const std::exception& error) {
    TS_LOG(kError) << request.method << " " << request.path << ": " << error.what();
    observed(ErrorResponse(500, std::string("internal error: ") + error.what()));
  }
}

void Api::Route(const HttpRequest& request, const Reply& reply, std::string* route) {
  const std::string& path = request.path;
  const std::string& method = request.method;
  // The route table: pattern, methods, and whether the path matches.
  std::string id;
  std::string allowed;
  if (path == "/healthz" || path == "/metrics" || path == "/v1/devices" || path == "/v1/kernels") {
    allowed = "GET";
    *route = path;
  } else if (path == "/v1/query" || path == "/v1/query:batch" || path == "/v1/tune" ||
             path == "/v1/split") {
    allowed = "POST";
    *route = path;
  } else if (path.starts_with("/v1/jobs/") && path.size() > 9 &&
             path.find('/', 9) == std::string::npos) {
    allowed = "GET, DELETE";
    *route = "/v1/jobs/{id}";
    id = path.substr(9);
  } else if (path.starts_with("/v1/kernels/") && path.size() > 12 &&
             path.find('/', 12) == std::string::npos) {
    allowed = "GET";
    *route = "/v1/kernels/{fingerprint}";
    id = path.substr(12);
  } else if (path == "/report" || path == "/report/") {
    allowed = "GET";
    *route = "/report";
  } else if (path.starts_with("/report/") && path.find('/', 8) == std::string::npos) {
    allowed = "GET";
    *route = "/report/{fingerprint}";
    id = path.substr(8);
  } else {
    return reply(ErrorResponse(404, "no route " + path));
  }
  // HEAD is GET without the body (RFC 9110): the route answers as for GET and the server
  // sends the headers only.
  if (allowed.starts_with("GET")) allowed.insert(3, ", HEAD");
  const std::string& routed = method == "HEAD" ? std::string("GET") : method;
  if (method.empty() || (", " + allowed + ",").find(", " + method + ",") == std::string::npos) {
    HttpResponse response = ErrorResponse(405, "method " + method + " is not allowed on " + *route);
    response.headers["Allow"] = allowed;
    return reply(std::move(response));
  }
  if (*route != "/healthz" && !Authorized(request)) {
    HttpResponse response = ErrorResponse(401, "a valid bearer token is required");
    response.headers["WWW-Authenticate"] = "Bearer";
    return reply(std::move(response));
  }
  if (*route == "/healthz") {
    return reply(
        JsonResponse(200, {{"status", "ok"}, {"compiler_version", options_.compiler_version}}));
  }
  if (*route == "/metrics") return reply(MetricsText());
  if (*route == "/v1/devices") return reply(Devices());
  if (*route == "/v1/kernels") return reply(Kernels(request));
  if (*route == "/v1/kernels/{fingerprint}") return reply(Kernel(id));
  if (*route == "/report" || *route == "/report/{fingerprint}") {
    return reply(ReportPage(store_, id));
  }
  if (*route == "/v1/jobs/{id}") return reply(routed == "GET" ? GetJob(id) : CancelJob(id));
  auto body = ParseBody(request.body, options_.max_nesting);
  if (!body) return reply(ErrorResponse(400, body.error().message));
  if (*route == "/v1/query") return reply(Query(*body));
  if (*route == "/v1/query:batch") return reply(QueryBatch(*body));
  if (*route == "/v1/split") return reply(Split(*body));
  Tune(*body, reply);
}

HttpResponse Api::Devices() {
  json devices = json::array();
  for (const ServedTarget& target : targets_) {
    const db::DeviceRecord& record = target.device.record;
    devices.push_back({{"target", target.name},
                       {"id", target.device.id},
                       {"device", record.Key()},
                       {"name", record.name},
                       {"cores", record.cores},
                       {"clock_mhz", record.clock_mhz},
                       {"memory_bandwidth_gbps", record.memory_bandwidth_gbps},
                       {"cache_bytes", record.cache_bytes},
                       {"can_tune", target.can_tune},
                       {"note", target.note}});
    if (!target.alias.empty()) devices.back()["alias"] = target.alias;
  }
  return JsonResponse(200, {{"devices", devices}, {"compiler_version", options_.compiler_version}});
}

Api::Resolved Api::Resolve(const json& query, const json& defaults) {
  Resolved resolved;
  auto fail = [&](int status, const std::string& message) {
    resolved.error = {{"status", status}, {"error", message}};
    return resolved;
  };
  if (!query.is_object()) return fail(400, "a query must be a JSON object");
  // Checked before the database is read, so a malformed query is refused whatever the
  // database holds.
  if (auto flags = CheckQueryFlags(query); !flags) return fail(400, flags.error().message);
  auto target = TargetOf(query, defaults);
  if (!target) return fail(400, target.error().message);
  resolved.target = *target;
  auto fusion = query.find("fusion");
  if (fusion != query.end() && fusion->is_string() &&
      NestingDepth(fusion->get_ref<const std::string&>()) > options_.max_nesting) {
    return fail(400,
                "the fusion nests deeper than " + std::to_string(options_.max_nesting) + " levels");
  }
  auto entry = fingerprints_.Lookup(query);
  if (!entry) return fail(StatusFor(entry.error()), entry.error().message);
  resolved.fusion = std::move(*entry);
  return resolved;
}

Api::Found Api::Find(const json& query, const json& defaults) {
  Resolved resolved = Resolve(query, defaults);
  Found found;
  found.target = resolved.target;
  if (!resolved.error.is_null()) {
    found.answer = std::move(resolved.error);
    return found;
  }
  auto best = cache_.Get(store_, resolved.Key(options_.compiler_version));
  if (!best) {
    found.answer = {{"status", 500}, {"error", best.error().message}};
    return found;
  }
  if (*best) {
    found.hit = std::move(*best);
    return found;
  }
  return AnswerMissing(query, defaults, resolved);
}

Api::Found Api::AnswerMissing(const json& query, const json& defaults, const Resolved& resolved) {
  Found found;
  found.target = resolved.target;
  auto fail = [&](int status, const std::string& message) {
    found.answer = {{"status", status}, {"error", message}};
    return found;
  };
  const ServedTarget* target = resolved.target;
  const FingerprintCache::Entry& entry = resolved.fusion;
  found.answer = {{"status", 404},
                  {"error", "no verified result for this fusion on " + target->name + " under " +
                                options_.compiler_version},
                  {"fingerprint", entry.fingerprint},
                  {"name", entry.name},
                  {"target", target->name}};
  json predict =
      query.contains("predict") ? query["predict"] : defaults.value("predict", json(false));
  if (!predict.is_boolean()) return fail(400, "\"predict\" must be true or false");
  if (predict.get<bool>()) {
    // Nothing measured here: the nearest tuned device of the same architecture answers,
    // else the target's cost model, each marked as such.
    auto transferred = NearestTunedDevice(store_, entry.fingerprint, options_.compiler_version,
                                          target->device.record);
    if (transferred && *transferred) {
      json answer = BestJson(**transferred);
      answer["source"] = "nearest-device";
      answer["measured_on"] = answer["device"];
      answer["fallback"] = "measured on the nearest tuned device of the same architecture (" +
                           target->device.record.compute_capability + "), not on " + target->name;
      answer["status"] = 200;
      answer["target"] = target->name;
      found.answer = std::move(answer);
      return found;
    }
    auto input = ReadFusion(query, options_.max_instructions);
    auto predicted = input
                         ? predictions_.Predict(*input, *target, store_, options_.compiler_version)
                         : Expected<json>(std::unexpected(input.error()));
    if (predicted) {
      json answer = std::move(*predicted);
      answer["status"] = 200;
      answer["fingerprint"] = entry.fingerprint;
      answer["name"] = entry.name;
      answer["target"] = target->name;
      found.answer = std::move(answer);
    } else {
      found.answer["prediction_error"] = predicted.error().message;
    }
  }
  json tune = query.contains("tune_if_missing") ? query["tune_if_missing"]
                                                : defaults.value("tune_if_missing", json(false));
  if (tune.is_boolean() && !tune.get<bool>()) return found;
  if (!tune.is_boolean() && !tune.is_object()) {
    return fail(400, "\"tune_if_missing\" must be true, false or an object");
  }
  json tune_request = tune.is_object() ? tune : json::object();
  for (const char* field : {"fusion", "ascgraph", "sizes"}) {
    if (query.contains(field)) tune_request[field] = query[field];
  }
  tune_request["target"] = target->name;
  int status = 500;
  auto submitted = SubmitJob(tune_request, json::object(), &status);
  if (!submitted) {
    found.answer["job_error"] = submitted.error().message;
  } else {
    found.answer["job"] = {{"id", submitted->job.id},
                           {"state", db::JobStateName(submitted->job.state)},
                           {"shared", submitted->shared},
                           {"url", "/v1/jobs/" + submitted->job.id}};
  }
  return found;
}

HttpResponse Api::Query(const json& body) {
  Found found = Find(body, json::object());
  if (found.hit) {
    HttpResponse response;
    response.body = found.hit->body + ",\"target\":" + json(found.target->name).dump() + "}\n";
    return response;
  }
  int status = found.answer["status"].get<int>();
  found.answer.erase("status");
  return JsonResponse(status, found.answer);
}

HttpResponse Api::Kernels(const HttpRequest& request) {
  db::ResultFilter filter;
  auto target_param = request.query.find("target");
  const ServedTarget* target = nullptr;
  if (target_param != request.query.end()) {
    auto resolved = TargetOf({{"target", target_param->second}}, json::object());
    if (!resolved) return ErrorResponse(400, resolved.error().message);
    target = *resolved;
    filter.device_key = target->device.record.Key();
    filter.compiler_version = options_.compiler_version;
  }
  auto kernels = store_.ListKernels(filter);
  if (!kernels) return ErrorResponse(500, kernels.error().message);
  std::map<std::string, json> best_by_fingerprint;
  if (target != nullptr) {
    auto best = store_.ListBest(filter);
    if (!best) return ErrorResponse(500, best.error().message);
    for (const db::BestResult& result : *best) {
      best_by_fingerprint[result.measurement.key.fingerprint] = BestJson(result);
    }
  }
  json list = json::array();
  for (const db::KernelSummary& kernel : *kernels) {
    json item = {{"fingerprint", kernel.fingerprint},
                 {"name", kernel.name},
                 {"source_format", kernel.source_format},
                 {"measurements", kernel.measurements},
                 {"ok", kernel.ok},
                 {"failed", kernel.failed},
                 {"best_median_us", NumberOrNull(kernel.best_median_us)}};
    auto best = best_by_fingerprint.find(kernel.fingerprint);
    if (best != best_by_fingerprint.end()) item["best"] = best->second;
    list.push_back(std::move(item));
  }
  json out = {{"kernels", std::move(list)}};
  if (target != nullptr) {
    out["target"] = target->name;
    out["device"] = *filter.device_key;
    out["compiler_version"] = options_.compiler_version;
  }
  return JsonResponse(200, out);
}

HttpResponse Api::Kernel(const std::string& text) {
  if (text.size() < 6 || text.size() > 64 || !IsHex(text)) {
    return ErrorResponse(
        400, "a fingerprint is 6 to 64 lowercase hex digits, not '" + text.substr(0, 80) + "'");
  }
  auto fingerprint =
      text.size() == 64 ? Expected<std::string>(text) : db::ResolveFingerprint(store_, text);
  if (!fingerprint)
    return ErrorResponse(StatusFor(fingerprint.error()), fingerprint.error().message);
  auto kernel = store_.GetKernel(*fingerprint);
  if (!kernel) return ErrorResponse(500, kernel.error().message);
  if (!*kernel) {
    return ErrorResponse(404, "no kernel with fingerprint " + *fingerprint,
                         {{"fingerprint", *fingerprint}});
  }
  db::ResultFilter filter{*fingerprint};
  auto measurements = store_.Measurements(filter);
  auto best = store_.ListBest(filter);
  if (!measurements) return ErrorResponse(500, measurements.error().message);
  if (!best) return ErrorResponse(500, best.error().message);
  json trials = json::array();
  for (const db::MeasurementRecord& m : *measurements) trials.push_back(MeasurementJson(m));
  json best_list = json::array();
  for (const db::BestResult& result : *best) best_list.push_back(BestJson(result));
  return JsonResponse(200, {{"fingerprint", (*kernel)->fingerprint},
                            {"name", (*kernel)->name},
                            {"source_format", (*kernel)->source_format},
                            {"canonical_text", (*kernel)->canonical_text},
                            {"best", std::move(best_list)},
                            {"measurements", std::move(trials)}});
}

HttpResponse Api::MetricsText() {
  std::map<std::string, int64_t> jobs;
  if (auto counted = jobs_.CountByState()) jobs = std::move(*counted);
  int64_t bytes = 0;
  if (auto storage = store_.StorageBytes()) bytes = *storage;
  Metrics::Fleet fleet;
  if (auto units = store_.CountUnits("")) fleet.units = *units;
  if (auto agents = store_.ListAgents(60'000)) {
    fleet.agents_seen = static_cast<int64_t>(agents->size());
  }
  HttpResponse response;
  response.content_type = "text/plain; version=0.0.4";
  response.body = metrics_.Render(jobs, bytes, fleet);
  return response;
}

}  // namespace tilesmith::service
