// `tilesmith sweep FILE --db URL --distribute`: the sweep's (fusion, target) pairs become
// work units in the database's queue (db/work_queue.h) for the fleet's agents
// (`tilesmith agent`), and the command follows the queue with a progress line until every
// unit is done or failed, then prints the sweep's table from what the agents reported. The
// job id is derived from the fusions, devices, settings and compiler, so running the same
// sweep again (`--resume`, from any host) follows the same units instead of adding more.
#pragma once

#include <functional>
#include <span>
#include <string>

#include "tools/fusion_loader.h"
#include "tools/sweep_file.h"
#include "tuner/device.h"

namespace tilesmith::tools {

/// One (fusion, target) of a sweep.
struct SweepPair {
  const SweepFusion* fusion;
  std::string target;
  const tuner::Device* device;
};

/// Loads a sweep entry's fusion with its input flags (format, sizes).
Expected<LoadedFusion> LoadSweepFusion(const SweepFusion& fusion);

struct DistributeOptions {
  std::string db_location;
  bool json = false;
  bool quiet = false;
  /// Any device of the pair's architecture may run it (`cuda:sm_90`), not only the exact
  /// device key (same card, clocks, driver and toolkit).
  bool any_device = false;
  /// Split each (fusion, target) whose plan has more configs than this into units of this
  /// many configs, measured by any agents at once, and one unit per pair that concludes it
  /// (confirms the winner) once every batch of the sweep is finished. 0: a unit per pair.
  /// Only for strategies whose order is planned ahead (exhaustive, random).
  int64_t unit_configs = 0;
  double poll_s = 0.5;
  /// True once the user asked to stop following (Ctrl-C); the agents carry on.
  std::function<bool()> interrupted;
};

/// Enqueues the pairs (once) and follows them; returns the process exit status.
int RunDistributedSweep(const SweepFile& sweep, std::span<const SweepPair> pairs,
                        const DistributeOptions& options);

}  // namespace tilesmith::tools
