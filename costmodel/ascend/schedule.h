// The front door of the Ascend cost model: what Auto Schedule + Auto Tiling would choose for
// an AscGraph on a 910B-class platform, predicted by the public model (tilesmith cannot run
// Ascend kernels), with the model's ranking of the alternatives.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/ascgraph/graph.h"
#include "costmodel/ascend/solver.h"
#include "costmodel/ascend/tiling.h"
#include "support/status.h"

namespace tilesmith::costmodel::ascend {

/// How much of the ranking to keep.
struct ScheduleOptions {
  size_t alternatives = 10;  // top entries of the ranking kept in Schedule::alternatives
};

/// The answer for one graph, sizes and platform.
struct Schedule {
  TilingModel model;
  /// The public solver's answer: each case solved by SolveCase, the cheapest case kept.
  Candidate pick;
  /// The cheapest candidate of the whole enumeration; the solver is greedy, so this can
  /// beat `pick` (never the reverse: the pick is one of the enumerated candidates).
  Candidate model_best;
  /// The best `ScheduleOptions::alternatives` of the ranking, cheapest first.
  std::vector<Candidate> alternatives;
  size_t alternatives_considered = 0;
  size_t pick_rank = 1;  // 1-based rank of `pick` in the full ranking
};

/// Schedules the request's graph under its size bindings for `platform` (which overrides
/// the request's own). Errors: what validation and BuildLoopNest report, and a graph no
/// tiling fits into the unified buffer (ResourceExhausted, with the bytes).
Expected<Schedule> ScheduleRequest(const ascgraph::Request& request,
                                   const ascgraph::Platform& platform,
                                   const ScheduleOptions& options = {});

/// The schedule as JSON with stable keys (listed in `tilesmith schedule --help`).
nlohmann::json ScheduleToJson(const Schedule& schedule);

/// The schedule for people: groups, splits, TilingData, cycles, constraint check, ranking.
std::string ScheduleToText(const Schedule& schedule);

}  // namespace tilesmith::costmodel::ascend
