// The rules every WorkQueue implementation applies to a stored unit, in one place so SQLite
// and PostgreSQL decide alike. Private to db/.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "db/work_queue.h"

namespace tilesmith::db {

/// The columns every unit query selects, in ReadUnit's order.
inline constexpr std::string_view kUnitColumns =
    "id, job_id, sequence, device_key, match_prefix, fingerprint, name, fusion_text, payload, "
    "state, owner, attempt, reclaims, lease_expires_ms, failures, error, result";

/// What a unit's stored row says about a lease on it.
enum class LeaseStanding {
  kHeld,           ///< Leased by it and not expired.
  kCompletedByIt,  ///< Done, by this very lease (a retried commit).
  kLost,           ///< Expired, taken over, or the unit moved on.
};
LeaseStanding StandingOf(const Lease& lease, std::string_view state, int64_t attempt,
                         std::string_view owner, bool unexpired);

/// A failed attempt's outcome: the failures with it added, and whether the unit now fails
/// for good (two different owners failed it, or three attempts did), with its error.
struct FailureOutcome {
  nlohmann::json failures;
  bool final = false;
  std::string error;
};
FailureOutcome AddFailure(const nlohmann::json& failures, const Lease& lease,
                          std::string_view reason);

/// Sets the count of `state` in `counts`.
void SetStateCount(UnitCounts& counts, UnitState state, int64_t count);

}  // namespace tilesmith::db
