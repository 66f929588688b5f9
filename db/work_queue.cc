#include "db/work_queue.h"

#include <algorithm>
#include <array>
#include <set>
#include <utility>
#include <vector>

#include "db/work_queue_rules.h"

namespace tilesmith::db {
namespace {

constexpr std::array<std::pair<UnitState, std::string_view>, 4> kUnitStateNames = {{
    {UnitState::kQueued, "queued"},
    {UnitState::kLeased, "leased"},
    {UnitState::kDone, "done"},
    {UnitState::kFailed, "failed"},
}};

}  // namespace

std::string_view UnitStateName(UnitState state) {
  for (const auto& [value, name] : kUnitStateNames) {
    if (value == state) return name;
  }
  return "unknown";
}

Expected<UnitState> ParseUnitState(std::string_view name) {
  for (const auto& [value, known] : kUnitStateNames) {
    if (known == name) return value;
  }
  return InvalidArgument("unknown work unit state '" + std::string(name) +
                         "' (expected queued, leased, done or failed)");
}

Status ValidateUnit(const WorkUnit& unit) {
  if (unit.job_id.empty()) return InvalidArgument("work unit: job_id is empty");
  if (unit.sequence < 0) return InvalidArgument("work unit: sequence is negative");
  if (unit.device_key.empty()) return InvalidArgument("work unit: device_key is empty");
  if (unit.fingerprint.empty()) return InvalidArgument("work unit: fingerprint is empty");
  if (unit.fusion_text.empty()) return InvalidArgument("work unit: fusion_text is empty");
  if (!unit.payload.is_object()) return InvalidArgument("work unit: payload is not an object");
  return OkStatus();
}

std::string ArchitectureKeyPrefix(const DeviceRecord& device) {
  bool bare = device.compute_capability.empty() || device.compute_capability == device.target;
  return (bare ? device.target : device.target + ":" + device.compute_capability) + ", ";
}

bool IsArchitectureKeyPrefix(std::string_view key) { return key.ends_with(", "); }

bool UnitMatchesDevice(std::string_view unit_key, bool match_prefix, std::string_view device_key) {
  return match_prefix ? device_key.starts_with(unit_key) : device_key == unit_key;
}

std::string LeaseLostMessage(const Lease& lease) {
  return "the lease of work unit " + std::to_string(lease.unit_id) + " (attempt " +
         std::to_string(lease.attempt) + ", " + lease.owner +
         ") is no longer held: it expired or another agent took the unit over; nothing of "
         "this attempt was stored";
}

}  // namespace tilesmith::db

namespace tilesmith::db {

LeaseStanding StandingOf(const Lease& lease, std::string_view state, int64_t attempt,
                         std::string_view owner, bool unexpired) {
  if (attempt != lease.attempt || owner != lease.owner) return LeaseStanding::kLost;
  if (state == "done") return LeaseStanding::kCompletedByIt;
  if (state == "leased" && unexpired) return LeaseStanding::kHeld;
  return LeaseStanding::kLost;
}

FailureOutcome AddFailure(const nlohmann::json& failures, const Lease& lease,
                          std::string_view reason) {
  FailureOutcome outcome;
  outcome.failures = failures.is_array() ? failures : nlohmann::json::array();
  outcome.failures.push_back(
      {{"owner", lease.owner}, {"attempt", lease.attempt}, {"reason", std::string(reason)}});
  std::set<std::string> owners;
  for (const nlohmann::json& failure : outcome.failures) {
    owners.insert(failure.value("owner", std::string()));
  }
  outcome.final = owners.size() >= 2 || outcome.failures.size() >= 3;
  if (outcome.final) {
    // Each distinct (owner, reason) once, with how often it happened.
    std::vector<std::pair<std::string, int>> reasons;
    for (const nlohmann::json& failure : outcome.failures) {
      std::string text = "[" + failure.value("owner", std::string()) + "] " +
                         failure.value("reason", std::string());
      auto known = std::find_if(reasons.begin(), reasons.end(),
                                [&](const auto& entry) { return entry.first == text; });
      if (known == reasons.end()) {
        reasons.emplace_back(text, 1);
      } else {
        ++known->second;
      }
    }
    outcome.error = "failed " + std::to_string(outcome.failures.size()) + " times on " +
                    std::to_string(owners.size()) + " agent" + (owners.size() == 1 ? "" : "s") +
                    ":";
    for (const auto& [text, count] : reasons) {
      outcome.error +=
          " " + text + (count > 1 ? " (" + std::to_string(count) + " times)" : "") + ";";
    }
    outcome.error.pop_back();
  }
  return outcome;
}

void SetStateCount(UnitCounts& counts, UnitState state, int64_t count) {
  switch (state) {
    case UnitState::kQueued:
      counts.queued = count;
      break;
    case UnitState::kLeased:
      counts.leased = count;
      break;
    case UnitState::kDone:
      counts.done = count;
      break;
    case UnitState::kFailed:
      counts.failed = count;
      break;
  }
}

}  // namespace tilesmith::db
