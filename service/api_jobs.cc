// The job routes of the API: POST /v1/tune, GET and DELETE /v1/jobs/{id}.
#include <algorithm>
#include <atomic>

#include "compiler/hlo/hlo_module.h"
#include "service/api.h"
#include "tuner/layouts.h"
#include "tuner/space.h"
#include "tuner/strategy.h"

namespace tilesmith::service {
namespace {

using nlohmann::json;

// Elements of the largest array in `shape` (tuples searched), as a double: no overflow.
double LargestArray(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double largest = 0;
    for (const hlo::Shape& element : shape.tuple_elements()) {
      largest = std::max(largest, LargestArray(element));
    }
    return largest;
  }
  double elements = 1;
  for (int64_t dim : shape.dims()) elements *= static_cast<double>(std::max<int64_t>(dim, 0));
  return elements;
}

bool IsJobId(const std::string& id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

Expected<json> Api::TuneOptionsOf(const json& body) const {
  json options = {
      {"budget", 0}, {"strategy", "model"}, {"seed", 0}, {"free_layouts", json::array()}};
  if (auto budget = body.find("budget"); budget != body.end()) {
    if (!budget->is_number_integer() || budget->get<int64_t>() < 0) {
      return InvalidArgument("\"budget\" must be a non-negative integer (0: the whole space)");
    }
    options["budget"] = budget->get<int64_t>();
  }
  if (auto strategy = body.find("strategy"); strategy != body.end()) {
    const std::vector<std::string>& names = tuner::StrategyNames();
    if (!strategy->is_string() ||
        std::find(names.begin(), names.end(), strategy->get<std::string>()) == names.end()) {
      std::string known;
      for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
      return InvalidArgument("unknown strategy " + strategy->dump() + " (" + known + ")");
    }
    options["strategy"] = *strategy;
  }
  if (auto seed = body.find("seed"); seed != body.end()) {
    if (!seed->is_number_unsigned()) return InvalidArgument("\"seed\" must be an integer >= 0");
    options["seed"] = *seed;
  }
  if (auto any = body.find("any_device"); any != body.end()) {
    if (!any->is_boolean()) return InvalidArgument("\"any_device\" must be true or false");
    if (any->get<bool>()) options["any_device"] = true;  // absent otherwise: same job key
  }
  if (auto layouts = body.find("free_layouts"); layouts != body.end()) {
    json list = json::array();
    if (layouts->is_string()) {
      std::string text = layouts->get<std::string>();
      for (size_t start = 0; start <= text.size();) {
        size_t comma = std::min(text.find(',', start), text.size());
        if (comma > start) list.push_back(text.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (layouts->is_array()) {
      for (const json& output : *layouts) {
        if (!output.is_string()) {
          return InvalidArgument("\"free_layouts\" lists parameters and outputs: p0, out0, …");
        }
        list.push_back(output);
      }
    } else {
      return InvalidArgument(
          "\"free_layouts\" must be a list of parameters and outputs (\"p0\", \"out0\", …)");
    }
    options["free_layouts"] = std::move(list);
  }
  return options;
}

Expected<Submitted> Api::SubmitJob(const json& body, const json& defaults, int* error_status) {
  *error_status = 400;
  TS_ASSIGN_OR_RETURN(const ServedTarget* target, TargetOf(body, defaults));
  TS_ASSIGN_OR_RETURN(json options, TuneOptionsOf(body));
  if (body.value("fusion", json()).is_string() &&
      NestingDepth(body["fusion"].get_ref<const std::string&>()) > options_.max_nesting) {
    return InvalidArgument("the fusion nests deeper than " + std::to_string(options_.max_nesting) +
                           " levels");
  }
  auto read = ReadFusion(body, options_.max_instructions);
  if (!read) {
    if (read.error().code == ErrorCode::kResourceExhausted) *error_status = 422;
    return std::unexpected(read.error());
  }
  FusionInput input = std::move(*read);
  double largest = 0;
  for (const auto& instruction : input.module->fusion()->instructions()) {
    largest = std::max(largest, LargestArray(instruction->shape()));
  }
  if (largest > static_cast<double>(options_.max_tensor_elements)) {
    *error_status = 422;
    return MakeError(ErrorCode::kResourceExhausted,
                     "the fusion has a tensor of " +
                         std::to_string(static_cast<int64_t>(std::min(largest, 9.2e18))) +
                         " elements, over this server's cap of " +
                         std::to_string(options_.max_tensor_elements) + " for tuning");
  }
  if (std::string refusal = jobs_.Refusal(*target); !refusal.empty()) {
    *error_status = 409;
    return MakeError(ErrorCode::kFailedPrecondition, refusal);
  }
  TS_ASSIGN_OR_RETURN(
      tuner::FreeLayouts free,
      tuner::ParseFreeLayouts(options["free_layouts"].get<std::vector<std::string>>(),
                              *input.module->fusion()));
  auto space = tuner::BuildSpace(*input.module, target->device.info, free);
  if (!space) {
    *error_status = StatusFor(space.error());
    return std::unexpected(space.error());
  }
  if (space->total() > options_.max_space) {
    *error_status = 422;
    return MakeError(ErrorCode::kResourceExhausted,
                     "the search space has " + std::to_string(space->total()) +
                         " configs, over this server's cap of " +
                         std::to_string(options_.max_space) + "; free fewer layouts");
  }
  *error_status = 500;
  return jobs_.Submit(
      {input.fingerprint, target->name, input.source_format, input.hlo_text, std::move(options)});
}

void Api::Tune(const json& body, const Reply& reply) {
  double wait_s = 0;
  if (auto wait = body.find("wait"); wait != body.end()) {
    if (!wait->is_boolean()) return reply(ErrorResponse(400, "\"wait\" must be true or false"));
    if (wait->get<bool>()) wait_s = options_.default_wait_s;
  }
  if (auto timeout = body.find("timeout_s"); timeout != body.end()) {
    if (!timeout->is_number() || timeout->get<double>() <= 0 ||
        timeout->get<double>() > options_.max_wait_s) {
      return reply(ErrorResponse(400, "\"timeout_s\" must be a number in (0, " +
                                          std::to_string(int(options_.max_wait_s)) + "]"));
    }
    if (wait_s > 0) wait_s = timeout->get<double>();
  }
  int status = 500;
  auto submitted = SubmitJob(body, json::object(), &status);
  if (!submitted) return reply(ErrorResponse(status, submitted.error().message));
  std::string id = submitted->job.id;
  bool shared = submitted->shared;
  auto accepted = [id, shared](const db::JobRecord& job) {
    HttpResponse response = JsonResponse(db::IsActive(job.state) ? 202 : 200,
                                         {{"job", JobJson(job)}, {"shared", shared}});
    response.headers["Location"] = "/v1/jobs/" + id;
    return response;
  };
  if (wait_s <= 0) return reply(accepted(submitted->job));
  // Whichever comes first answers: the job finishing (200) or the deadline (202 with the
  // job as it stands). The HTTP thread is free meanwhile.
  auto answered = std::make_shared<std::atomic<bool>>(false);
  auto once = [answered, reply](HttpResponse response) {
    if (!answered->exchange(true)) reply(std::move(response));
  };
  scheduler_(wait_s, [this, id, once, accepted]() {
    auto job = jobs_.Get(id);
    if (!job || !*job) return once(ErrorResponse(500, "job " + id + " vanished"));
    once(accepted(**job));
  });
  if (!jobs_.WhenFinished(id,
                          [once, accepted](const db::JobRecord& job) { once(accepted(job)); })) {
    once(ErrorResponse(500, "job " + id + " vanished"));
  }
}

HttpResponse Api::GetJob(const std::string& id) {
  if (!IsJobId(id)) return ErrorResponse(404, "no job '" + id.substr(0, 80) + "'");
  auto job = jobs_.Get(id);
  if (!job) return ErrorResponse(500, job.error().message);
  if (!*job) return ErrorResponse(404, "no job " + id);
  return JsonResponse(200, JobJson(**job));
}

HttpResponse Api::CancelJob(const std::string& id) {
  if (!IsJobId(id)) return ErrorResponse(404, "no job '" + id.substr(0, 80) + "'");
  auto cancelled = jobs_.Cancel(id);
  if (!cancelled) return ErrorResponse(500, cancelled.error().message);
  auto& [outcome, job] = *cancelled;
  switch (outcome) {
    case CancelOutcome::kNotFound:
      return ErrorResponse(404, "no job " + id);
    case CancelOutcome::kAlreadyFinal:
      return ErrorResponse(409,
                           "job " + id + " is already " + std::string(db::JobStateName(job->state)),
                           {{"job", JobJson(*job)}});
    case CancelOutcome::kCancelled:
      return JsonResponse(200, {{"job", JobJson(*job)}, {"cancel_requested", true}});
    case CancelOutcome::kCancelling:
      return JsonResponse(202, {{"job", JobJson(*job)}, {"cancel_requested", true}});
  }
  return ErrorResponse(500, "unreachable");
}

}  // namespace tilesmith::service
