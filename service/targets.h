// The targets a server answers for (`--targets host,cuda:sm_90`): each resolved once, at
// start, to a device description from the server's own configs/devices.
#pragma once

#include <string>
#include <vector>

#include "support/status.h"
#include "tuner/device.h"

namespace tilesmith::service {

/// One target a server serves.
struct ServedTarget {
  std::string name;   ///< As clients name it: "host", "cuda:sm_90", "cuda:0".
  std::string alias;  ///< Another name clients may use ("cuda:sm_90" for "cuda:0"), or empty.
  tuner::Device device;
  bool can_tune = false;  ///< Timing is possible here (host, or a CUDA GPU with its driver).
  std::string note;       ///< Why it cannot tune, or what it times on.
};

/// Resolves `host`, `cuda:sm_XX`, `cuda:0` (the GPU present, its architecture read with
/// nvidia-smi; timing uses GPU 0) and `TARGET=DEVICE_ID` (a description stem, e.g.
/// `cuda:sm_90=h100_pcie`). Duplicates and unknown targets are errors naming the text.
/// The served target `name` (or alias) names, or null.
const ServedTarget* FindServedTarget(const std::vector<ServedTarget>& targets,
                                     const std::string& name);

Expected<std::vector<ServedTarget>> ResolveTargets(const std::vector<std::string>& names,
                                                   const std::string& devices_dir);

}  // namespace tilesmith::service
